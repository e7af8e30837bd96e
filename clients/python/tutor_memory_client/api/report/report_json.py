from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.report_view import ReportView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    learner: str,
    subject: str,
    *,
    at: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["at"] = at

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/subjects/{learner}/{subject}/report".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | ReportView | None:
    if response.status_code == 200:
        response_200 = ReportView.from_dict(response.json())

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
) -> Response[ErrorBody | ReportView]:
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
    at: str | Unset = UNSET,
) -> Response[ErrorBody | ReportView]:
    """The report as JSON (the data the page draws).

    Args:
        learner (str):
        subject (str):
        at (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ReportView]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        at=at,
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
    at: str | Unset = UNSET,
) -> ErrorBody | ReportView | None:
    """The report as JSON (the data the page draws).

    Args:
        learner (str):
        subject (str):
        at (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ReportView
    """

    return sync_detailed(
        learner=learner,
        subject=subject,
        client=client,
        at=at,
    ).parsed


async def asyncio_detailed(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    at: str | Unset = UNSET,
) -> Response[ErrorBody | ReportView]:
    """The report as JSON (the data the page draws).

    Args:
        learner (str):
        subject (str):
        at (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ReportView]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        at=at,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    at: str | Unset = UNSET,
) -> ErrorBody | ReportView | None:
    """The report as JSON (the data the page draws).

    Args:
        learner (str):
        subject (str):
        at (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ReportView
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            client=client,
            at=at,
        )
    ).parsed
