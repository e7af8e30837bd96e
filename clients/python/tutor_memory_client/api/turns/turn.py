from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.dry_run import DryRun
from ...models.error_body import ErrorBody
from ...models.turn_request import TurnRequest
from ...types import Response


def _get_kwargs(
    learner: str,
    subject: str,
    *,
    body: TurnRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/subjects/{learner}/{subject}/turns".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DryRun | ErrorBody | None:
    if response.status_code == 200:
        response_200 = DryRun.from_dict(response.json())

        return response_200

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DryRun | ErrorBody]:
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
    body: TurnRequest,
) -> Response[DryRun | ErrorBody]:
    """Take a chat turn: the block, the prompt, and the model's answer streamed
    as server-sent events (or, without a model, the prompt as a dry run).

    Args:
        learner (str):
        subject (str):
        body (TurnRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DryRun | ErrorBody]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        body=body,
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
    body: TurnRequest,
) -> DryRun | ErrorBody | None:
    """Take a chat turn: the block, the prompt, and the model's answer streamed
    as server-sent events (or, without a model, the prompt as a dry run).

    Args:
        learner (str):
        subject (str):
        body (TurnRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DryRun | ErrorBody
    """

    return sync_detailed(
        learner=learner,
        subject=subject,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    body: TurnRequest,
) -> Response[DryRun | ErrorBody]:
    """Take a chat turn: the block, the prompt, and the model's answer streamed
    as server-sent events (or, without a model, the prompt as a dry run).

    Args:
        learner (str):
        subject (str):
        body (TurnRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DryRun | ErrorBody]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    body: TurnRequest,
) -> DryRun | ErrorBody | None:
    """Take a chat turn: the block, the prompt, and the model's answer streamed
    as server-sent events (or, without a model, the prompt as a dry run).

    Args:
        learner (str):
        subject (str):
        body (TurnRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DryRun | ErrorBody
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            client=client,
            body=body,
        )
    ).parsed
