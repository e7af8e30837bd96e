from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.class_view import ClassView
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    course: str,
    *,
    at: str | Unset = UNSET,
    page: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["at"] = at

    params["page"] = page

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/classes/{course}".format(
            course=quote(str(course), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ClassView | ErrorBody | None:
    if response.status_code == 200:
        response_200 = ClassView.from_dict(response.json())

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
) -> Response[ClassView | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    course: str,
    *,
    client: AuthenticatedClient,
    at: str | Unset = UNSET,
    page: int | Unset = UNSET,
) -> Response[ClassView | ErrorBody]:
    """A class: every learner of yours with a subject of this name.

     JSON by default; CSV (one row a learner, one column a concept) with
    `Accept: text/csv`.

    Args:
        course (str):
        at (str | Unset):
        page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClassView | ErrorBody]
    """

    kwargs = _get_kwargs(
        course=course,
        at=at,
        page=page,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    course: str,
    *,
    client: AuthenticatedClient,
    at: str | Unset = UNSET,
    page: int | Unset = UNSET,
) -> ClassView | ErrorBody | None:
    """A class: every learner of yours with a subject of this name.

     JSON by default; CSV (one row a learner, one column a concept) with
    `Accept: text/csv`.

    Args:
        course (str):
        at (str | Unset):
        page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClassView | ErrorBody
    """

    return sync_detailed(
        course=course,
        client=client,
        at=at,
        page=page,
    ).parsed


async def asyncio_detailed(
    course: str,
    *,
    client: AuthenticatedClient,
    at: str | Unset = UNSET,
    page: int | Unset = UNSET,
) -> Response[ClassView | ErrorBody]:
    """A class: every learner of yours with a subject of this name.

     JSON by default; CSV (one row a learner, one column a concept) with
    `Accept: text/csv`.

    Args:
        course (str):
        at (str | Unset):
        page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClassView | ErrorBody]
    """

    kwargs = _get_kwargs(
        course=course,
        at=at,
        page=page,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    course: str,
    *,
    client: AuthenticatedClient,
    at: str | Unset = UNSET,
    page: int | Unset = UNSET,
) -> ClassView | ErrorBody | None:
    """A class: every learner of yours with a subject of this name.

     JSON by default; CSV (one row a learner, one column a concept) with
    `Accept: text/csv`.

    Args:
        course (str):
        at (str | Unset):
        page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClassView | ErrorBody
    """

    return (
        await asyncio_detailed(
            course=course,
            client=client,
            at=at,
            page=page,
        )
    ).parsed
