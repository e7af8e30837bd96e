from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.check_event import CheckEvent
from ...models.error_body import ErrorBody
from ...models.file_event import FileEvent
from ...models.file_removed_event import FileRemovedEvent
from ...models.learner_event import LearnerEvent
from ...models.quiz_event import QuizEvent
from ...models.recorded import Recorded
from ...models.tutor_event import TutorEvent
from ...types import Response


def _get_kwargs(
    learner: str,
    subject: str,
    *,
    body: list[
        CheckEvent
        | FileEvent
        | FileRemovedEvent
        | LearnerEvent
        | QuizEvent
        | TutorEvent
    ],
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/subjects/{learner}/{subject}/events".format(
            learner=quote(str(learner), safe=""),
            subject=quote(str(subject), safe=""),
        ),
    }

    _kwargs["json"] = []
    for body_item_data in body:
        body_item: dict[str, Any]
        if (
            isinstance(body_item_data, LearnerEvent)
            or isinstance(body_item_data, TutorEvent)
            or isinstance(body_item_data, CheckEvent)
            or isinstance(body_item_data, QuizEvent)
            or isinstance(body_item_data, FileEvent)
        ):
            body_item = body_item_data.to_dict()
        else:
            body_item = body_item_data.to_dict()

        _kwargs["json"].append(body_item)

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | Recorded | None:
    if response.status_code == 200:
        response_200 = Recorded.from_dict(response.json())

        return response_200

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | Recorded]:
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
    body: list[
        CheckEvent
        | FileEvent
        | FileRemovedEvent
        | LearnerEvent
        | QuizEvent
        | TutorEvent
    ],
) -> Response[ErrorBody | Recorded]:
    """Record events: learner messages, tutor answers with cites, checks,
    quizzes, inline files and file removals, in v1 history shapes (docs/formats.md).

    Args:
        learner (str):
        subject (str):
        body (list[CheckEvent | FileEvent | FileRemovedEvent | LearnerEvent | QuizEvent |
            TutorEvent]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | Recorded]
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
    body: list[
        CheckEvent
        | FileEvent
        | FileRemovedEvent
        | LearnerEvent
        | QuizEvent
        | TutorEvent
    ],
) -> ErrorBody | Recorded | None:
    """Record events: learner messages, tutor answers with cites, checks,
    quizzes, inline files and file removals, in v1 history shapes (docs/formats.md).

    Args:
        learner (str):
        subject (str):
        body (list[CheckEvent | FileEvent | FileRemovedEvent | LearnerEvent | QuizEvent |
            TutorEvent]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | Recorded
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
    body: list[
        CheckEvent
        | FileEvent
        | FileRemovedEvent
        | LearnerEvent
        | QuizEvent
        | TutorEvent
    ],
) -> Response[ErrorBody | Recorded]:
    """Record events: learner messages, tutor answers with cites, checks,
    quizzes, inline files and file removals, in v1 history shapes (docs/formats.md).

    Args:
        learner (str):
        subject (str):
        body (list[CheckEvent | FileEvent | FileRemovedEvent | LearnerEvent | QuizEvent |
            TutorEvent]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | Recorded]
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
    body: list[
        CheckEvent
        | FileEvent
        | FileRemovedEvent
        | LearnerEvent
        | QuizEvent
        | TutorEvent
    ],
) -> ErrorBody | Recorded | None:
    """Record events: learner messages, tutor answers with cites, checks,
    quizzes, inline files and file removals, in v1 history shapes (docs/formats.md).

    Args:
        learner (str):
        subject (str):
        body (list[CheckEvent | FileEvent | FileRemovedEvent | LearnerEvent | QuizEvent |
            TutorEvent]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | Recorded
    """

    return (
        await asyncio_detailed(
            learner=learner,
            subject=subject,
            client=client,
            body=body,
        )
    ).parsed
