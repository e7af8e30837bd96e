import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.erase_episode_response_200 import EraseEpisodeResponse200
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    learner: str,
    subject: str,
    seq: int,
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
        "url": "/v1/subjects/{learner}/{subject}/episodes/{seq}".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
            seq=quote(str(seq), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EraseEpisodeResponse200 | ErrorBody | None:
    if response.status_code == 200:
        response_200 = EraseEpisodeResponse200.from_dict(response.json())

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
) -> Response[EraseEpisodeResponse200 | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    learner: str,
    subject: str,
    seq: int,
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> Response[EraseEpisodeResponse200 | ErrorBody]:
    """Erase one episode (a pasted phone number, a wrong fact), with a reason:
    its content and the consolidation of its day go, the chain keeps its
    skeleton, and beliefs and map derived from it are re-derived without it.

    Args:
        learner (str):
        subject (str):
        seq (int):
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EraseEpisodeResponse200 | ErrorBody]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        seq=seq,
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
    learner: str,
    subject: str,
    seq: int,
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> EraseEpisodeResponse200 | ErrorBody | None:
    """Erase one episode (a pasted phone number, a wrong fact), with a reason:
    its content and the consolidation of its day go, the chain keeps its
    skeleton, and beliefs and map derived from it are re-derived without it.

    Args:
        learner (str):
        subject (str):
        seq (int):
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EraseEpisodeResponse200 | ErrorBody
    """

    return sync_detailed(
        learner=learner,
        subject=subject,
        seq=seq,
        client=client,
        reference=reference,
        at=at,
        confirm=confirm,
        reason=reason,
    ).parsed


async def asyncio_detailed(
    learner: str,
    subject: str,
    seq: int,
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> Response[EraseEpisodeResponse200 | ErrorBody]:
    """Erase one episode (a pasted phone number, a wrong fact), with a reason:
    its content and the consolidation of its day go, the chain keeps its
    skeleton, and beliefs and map derived from it are re-derived without it.

    Args:
        learner (str):
        subject (str):
        seq (int):
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EraseEpisodeResponse200 | ErrorBody]
    """

    kwargs = _get_kwargs(
        learner=learner,
        subject=subject,
        seq=seq,
        reference=reference,
        at=at,
        confirm=confirm,
        reason=reason,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    learner: str,
    subject: str,
    seq: int,
    *,
    client: AuthenticatedClient,
    reference: str | Unset = UNSET,
    at: datetime.datetime | Unset = UNSET,
    confirm: str | Unset = UNSET,
    reason: str | Unset = UNSET,
) -> EraseEpisodeResponse200 | ErrorBody | None:
    """Erase one episode (a pasted phone number, a wrong fact), with a reason:
    its content and the consolidation of its day go, the chain keeps its
    skeleton, and beliefs and map derived from it are re-derived without it.

    Args:
        learner (str):
        subject (str):
        seq (int):
        reference (str | Unset):
        at (datetime.datetime | Unset):
        confirm (str | Unset):
        reason (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EraseEpisodeResponse200 | ErrorBody
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            seq=seq,
            client=client,
            reference=reference,
            at=at,
            confirm=confirm,
            reason=reason,
        )
    ).parsed
