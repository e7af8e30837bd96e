from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.map_view import MapView
from ...types import Response


def _get_kwargs(
    learner: str,
    subject: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/subjects/{learner}/{subject}/map".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | MapView | None:
    if response.status_code == 200:
        response_200 = MapView.from_dict(response.json())

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
) -> Response[ErrorBody | MapView]:
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
) -> Response[ErrorBody | MapView]:
    """The concept map and its teaching order.

    Args:
        learner (str):
        subject (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | MapView]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
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
) -> ErrorBody | MapView | None:
    """The concept map and its teaching order.

    Args:
        learner (str):
        subject (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | MapView
    """

    return sync_detailed(
        learner=learner,
        subject=subject,
        client=client,
    ).parsed


async def asyncio_detailed(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErrorBody | MapView]:
    """The concept map and its teaching order.

    Args:
        learner (str):
        subject (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | MapView]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
) -> ErrorBody | MapView | None:
    """The concept map and its teaching order.

    Args:
        learner (str):
        subject (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | MapView
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            client=client,
        )
    ).parsed
