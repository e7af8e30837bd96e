import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.erase_tenant_response_200 import EraseTenantResponse200
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["reference"] = reference

    json_at: str | Unset = UNSET
    if not isinstance(at, Unset):
        json_at = at.isoformat()
    params["at"] = json_at

    params["confirm"] = confirm

    params["reason"] = reason

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/learners",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EraseTenantResponse200 | ErrorBody | None:
    if response.status_code == 200:
        response_200 = EraseTenantResponse200.from_dict(response.json())

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
) -> Response[EraseTenantResponse200 | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> Response[EraseTenantResponse200 | ErrorBody]:
    """Erase every learner of the calling tenant (`confirm` must be its name).

    Args:
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EraseTenantResponse200 | ErrorBody]
    """

    kwargs = _get_kwargs(
        reference=reference,
        at=at,
        confirm=confirm,
        reason=reason,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> EraseTenantResponse200 | ErrorBody | None:
    """Erase every learner of the calling tenant (`confirm` must be its name).

    Args:
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EraseTenantResponse200 | ErrorBody
    """

    return sync_detailed(
        client=client,
        reference=reference,
        at=at,
        confirm=confirm,
        reason=reason,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> Response[EraseTenantResponse200 | ErrorBody]:
    """Erase every learner of the calling tenant (`confirm` must be its name).

    Args:
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EraseTenantResponse200 | ErrorBody]
    """

    kwargs = _get_kwargs(
        reference=reference,
        at=at,
        confirm=confirm,
        reason=reason,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> EraseTenantResponse200 | ErrorBody | None:
    """Erase every learner of the calling tenant (`confirm` must be its name).

    Args:
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EraseTenantResponse200 | ErrorBody
    """

    return (
        await asyncio_detailed(
            client=client,
            reference=reference,
            at=at,
            confirm=confirm,
            reason=reason,
        )
    ).parsed
