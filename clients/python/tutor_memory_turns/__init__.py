"""A chat turn streamed as server-sent events, for the generated client.

`POST /v1/subjects/{learner}/{subject}/turns` answers with a stream of
events when the service has a chat model (`block`, then `delta`s, then
`done` or `error`) and with a JSON dry run when it has none. A generated
client cannot express a stream, so this module reads it with the same
`AuthenticatedClient` (its base URL, key and timeouts):

    from tutor_memory_client import AuthenticatedClient
    from tutor_memory_turns import stream_turn

    client = AuthenticatedClient(base_url="http://127.0.0.1:8080", token=KEY)
    for event in stream_turn(client, "ana", "algebra-1", "What is a slope?"):
        if event.event == "delta":
            print(event.data["text"], end="")
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from tutor_memory_client import AuthenticatedClient

__all__ = ["TurnError", "TurnEvent", "stream_turn"]


@dataclass(frozen=True)
class TurnEvent:
    """One event of a turn: `block` (the memory block), `delta` (`{"text"}`),
    `done` (`{"answer_seq", "recalled", "stance"}`), `error` (the API's error
    body), or `dry_run` (the whole JSON answer of a service with no model)."""

    event: str
    data: dict[str, Any]


class TurnError(Exception):
    """The turn was refused before it started (a 4xx or 5xx): `status`,
    and the API's stable error `code` and `message`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


def _events(lines: Iterator[str]) -> Iterator[TurnEvent]:
    """Server-sent events from a stream's lines (comments and keep-alives skipped)."""
    name, data = "message", []
    for line in lines:
        if line == "":
            if data:
                yield TurnEvent(name, json.loads("\n".join(data)))
            name, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    if data:
        yield TurnEvent(name, json.loads("\n".join(data)))


def stream_turn(
    client: AuthenticatedClient,
    learner: str,
    subject: str,
    text: str,
    *,
    at: str | None = None,
    external_id: str | None = None,
) -> Iterator[TurnEvent]:
    """Takes a turn for the learner's message `text` and yields its events
    as they arrive. `at` is the turn's instant (RFC 3339; default: now);
    `external_id` your reference for the learner's message. Raises
    `TurnError` when the service refuses the turn."""
    body: dict[str, Any] = {"text": text}
    if at is not None:
        body["at"] = at
    if external_id is not None:
        body["id"] = external_id
    url = f"/v1/subjects/{quote(learner, safe='')}/{quote(subject, safe='')}/turns"
    with client.get_httpx_client().stream("POST", url, json=body) as res:
        if res.status_code >= 400:
            res.read()
            try:
                err = res.json()["error"]
                code, message = err["code"], err["message"]
            except (ValueError, KeyError, TypeError):
                code, message = "unexpected", res.text
            raise TurnError(res.status_code, code, message)
        if res.headers.get("content-type", "").startswith("application/json"):
            res.read()
            yield TurnEvent("dry_run", res.json())
            return
        yield from _events(res.iter_lines())
