from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.episodes_response_200_item import EpisodesResponse200Item
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    learner: str,
    subject: str,
    *,
    from_: int | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["from"] = from_

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/subjects/{learner}/{subject}/episodes".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | list[EpisodesResponse200Item] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = EpisodesResponse200Item.from_dict(
                response_200_item_data
            )

            response_200.append(response_200_item)

        return response_200

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | list[EpisodesResponse200Item]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ErrorBody | list[EpisodesResponse200Item]]:
    """The episode log in chain order.

    Args:
        learner (str):
        subject (str):
        from_ (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | list[EpisodesResponse200Item]]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        from_=from_,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ErrorBody | list[EpisodesResponse200Item] | None:
    """The episode log in chain order.

    Args:
        learner (str):
        subject (str):
        from_ (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | list[EpisodesResponse200Item]
    """

    return sync_detailed(
        learner=learner,
        subject=subject,
        client=client,
        from_=from_,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ErrorBody | list[EpisodesResponse200Item]]:
    """The episode log in chain order.

    Args:
        learner (str):
        subject (str):
        from_ (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | list[EpisodesResponse200Item]]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        from_=from_,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ErrorBody | list[EpisodesResponse200Item] | None:
    """The episode log in chain order.

    Args:
        learner (str):
        subject (str):
        from_ (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | list[EpisodesResponse200Item]
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            client=client,
            from_=from_,
            limit=limit,
        )
    ).parsed
