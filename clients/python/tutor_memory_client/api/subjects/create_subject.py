from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.create_subject import CreateSubject
from ...models.error_body import ErrorBody
from ...models.subject_out import SubjectOut
from ...types import Response


def _get_kwargs(
    *,
    body: CreateSubject,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/subjects",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | SubjectOut | None:
    if response.status_code == 200:
        response_200 = SubjectOut.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = SubjectOut.from_dict(response.json())

        return response_201

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | SubjectOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateSubject,
) -> Response[ErrorBody | SubjectOut]:
    """Create a subject (and its learner, for this tenant). Learner names are
    the tenant's own: another tenant's learner of the same name is neither
    seen nor in the way, and the name of a subject erased whole is free
    again (a new subject).

    Args:
        body (CreateSubject): A subject to create.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | SubjectOut]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: CreateSubject,
) -> ErrorBody | SubjectOut | None:
    """Create a subject (and its learner, for this tenant). Learner names are
    the tenant's own: another tenant's learner of the same name is neither
    seen nor in the way, and the name of a subject erased whole is free
    again (a new subject).

    Args:
        body (CreateSubject): A subject to create.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | SubjectOut
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateSubject,
) -> Response[ErrorBody | SubjectOut]:
    """Create a subject (and its learner, for this tenant). Learner names are
    the tenant's own: another tenant's learner of the same name is neither
    seen nor in the way, and the name of a subject erased whole is free
    again (a new subject).

    Args:
        body (CreateSubject): A subject to create.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | SubjectOut]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CreateSubject,
) -> ErrorBody | SubjectOut | None:
    """Create a subject (and its learner, for this tenant). Learner names are
    the tenant's own: another tenant's learner of the same name is neither
    seen nor in the way, and the name of a subject erased whole is free
    again (a new subject).

    Args:
        body (CreateSubject): A subject to create.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | SubjectOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
