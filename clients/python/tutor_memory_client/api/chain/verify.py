from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.verify_response_200 import VerifyResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    learner: str,
    subject: str,
    *,
    seq: int | Unset = UNSET,
    head_hash: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["seq"] = seq

    params["head_hash"] = head_hash

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/subjects/{learner}/{subject}/verify".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | VerifyResponse200 | None:
    if response.status_code == 200:
        response_200 = VerifyResponse200.from_dict(response.json())

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
) -> Response[ErrorBody | VerifyResponse200]:
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
    seq: int | Unset = UNSET,
    head_hash: str | Unset = UNSET,
) -> Response[ErrorBody | VerifyResponse200]:
    """Recompute the hash chain; report the first break, if any.

    Args:
        learner (str):
        subject (str):
        seq (int | Unset):
        head_hash (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | VerifyResponse200]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        seq=seq,
        head_hash=head_hash,
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
    seq: int | Unset = UNSET,
    head_hash: str | Unset = UNSET,
) -> ErrorBody | VerifyResponse200 | None:
    """Recompute the hash chain; report the first break, if any.

    Args:
        learner (str):
        subject (str):
        seq (int | Unset):
        head_hash (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | VerifyResponse200
    """

    return sync_detailed(
        learner=learner,
        subject=subject,
        client=client,
        seq=seq,
        head_hash=head_hash,
    ).parsed


async def asyncio_detailed(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    seq: int | Unset = UNSET,
    head_hash: str | Unset = UNSET,
) -> Response[ErrorBody | VerifyResponse200]:
    """Recompute the hash chain; report the first break, if any.

    Args:
        learner (str):
        subject (str):
        seq (int | Unset):
        head_hash (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | VerifyResponse200]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        seq=seq,
        head_hash=head_hash,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    learner: str,
    subject: str,
    *,
    client: AuthenticatedClient,
    seq: int | Unset = UNSET,
    head_hash: str | Unset = UNSET,
) -> ErrorBody | VerifyResponse200 | None:
    """Recompute the hash chain; report the first break, if any.

    Args:
        learner (str):
        subject (str):
        seq (int | Unset):
        head_hash (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | VerifyResponse200
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            client=client,
            seq=seq,
            head_hash=head_hash,
        )
    ).parsed
