from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.belief_history_response_200_item import BeliefHistoryResponse200Item
from ...models.error_body import ErrorBody
from ...types import Response


def _get_kwargs(
    learner: str,
    subject: str,
    about: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/subjects/{learner}/{subject}/beliefs/{about}".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
            about=quote(str(about), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | list[BeliefHistoryResponse200Item] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = BeliefHistoryResponse200Item.from_dict(
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
) -> Response[ErrorBody | list[BeliefHistoryResponse200Item]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    learner: str,
    subject: str,
    about: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErrorBody | list[BeliefHistoryResponse200Item]]:
    """The history of the belief about one concept or topic, oldest row first.

    Args:
        learner (str):
        subject (str):
        about (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | list[BeliefHistoryResponse200Item]]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        about=about,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    learner: str,
    subject: str,
    about: str,
    *,
    client: AuthenticatedClient,
) -> ErrorBody | list[BeliefHistoryResponse200Item] | None:
    """The history of the belief about one concept or topic, oldest row first.

    Args:
        learner (str):
        subject (str):
        about (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | list[BeliefHistoryResponse200Item]
    """

    return sync_detailed(
        learner=learner,
        subject=subject,
        about=about,
        client=client,
    ).parsed


async def asyncio_detailed(
    learner: str,
    subject: str,
    about: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErrorBody | list[BeliefHistoryResponse200Item]]:
    """The history of the belief about one concept or topic, oldest row first.

    Args:
        learner (str):
        subject (str):
        about (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | list[BeliefHistoryResponse200Item]]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        about=about,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    learner: str,
    subject: str,
    about: str,
    *,
    client: AuthenticatedClient,
) -> ErrorBody | list[BeliefHistoryResponse200Item] | None:
    """The history of the belief about one concept or topic, oldest row first.

    Args:
        learner (str):
        subject (str):
        about (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | list[BeliefHistoryResponse200Item]
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            about=about,
            client=client,
        )
    ).parsed
