"""The README's walk-through against a live `tutor-memory serve`.

The service's address and two tenants' keys come from the environment
(`TM_URL`, `TM_KEY`, `TM_OTHER_KEY`); `TM_STREAMS=1` says the service has a
chat model, so a turn streams. `crates/cli/tests/clients.rs` starts the
service, a stand-in chat endpoint and this test.
"""

import io
import os
import zipfile

import pytest

from tutor_memory_client import AuthenticatedClient
from tutor_memory_client.api.classes import class_json
from tutor_memory_client.api.erasure import erase_learner, export_learner
from tutor_memory_client.api.events import post_events, upload_file
from tutor_memory_client.api.subjects import create_subject, get_subject
from tutor_memory_client.api.turns import block, grounding
from tutor_memory_client.models import (
    BlockBody,
    ClassView,
    CreateSubject,
    ErrorBody,
    GroundingRequest,
    CheckEvent,
    LearnerEvent,
    TutorEvent,
    Standing,
    UploadForm,
)
from tutor_memory_client.types import File
from tutor_memory_turns import TurnError, stream_turn

EVENT_KINDS = {"learner": LearnerEvent, "tutor": TutorEvent, "check": CheckEvent}

URL = os.environ.get("TM_URL")
pytestmark = pytest.mark.skipif(not URL, reason="TM_URL is not set: no live service to test against")

NOTES = b"""# Slopes

## Slope
The slope of a line is how much it rises for each step to the right.

## Intercept
The intercept is where the line crosses the vertical axis.
"""


def client(key_var: str = "TM_KEY") -> AuthenticatedClient:
    return AuthenticatedClient(base_url=URL, token=os.environ[key_var])


def test_the_readme_walk_through():
    c = client()
    # Create a subject for a learner.
    created = create_subject.sync(
        client=c,
        body=CreateSubject(learner="py-ana", subject="algebra-1", title="Algebra 1", language="en"),
    )
    assert created.key == "py-ana/algebra-1"

    # Upload a file: the concept map is built from it.
    recorded = upload_file.sync(
        "py-ana",
        "algebra-1",
        client=c,
        body=UploadForm(file=File(payload=io.BytesIO(NOTES), file_name="slopes.md"), at="2026-03-02T09:00:00Z"),
    )
    assert recorded.appended == 1

    # Record what happened: a question, the tutor's answer, a check.
    events = [
        {"id": "q1", "type": "learner", "at": "2026-03-02T09:10:00Z", "text": "What is a slope?"},
        {
            "id": "a1",
            "type": "tutor",
            "at": "2026-03-02T09:10:05Z",
            "text": "The slope is how much a line rises for each step to the right.",
        },
        {"id": "c1", "type": "check", "at": "2026-03-02T09:12:00Z", "topic": "Slope", "verdict": "wrong"},
    ]
    recorded = post_events.sync(
        "py-ana", "algebra-1", client=c, body=[EVENT_KINDS[e["type"]].from_dict(e) for e in events]
    )
    assert recorded.appended == 3

    # The memory block for the next turn's prompt.
    b = block.sync(
        "py-ana", "algebra-1", client=c, body=BlockBody(question="What did we say about slopes?", at="2026-03-03T10:00:00Z")
    )
    assert "slope" in b.block.lower()
    assert b.tokens > 0

    # Stream a turn: with a chat model the answer arrives in pieces and is recorded.
    events = list(stream_turn(c, "py-ana", "algebra-1", "Remind me what a slope is", at="2026-03-03T10:01:00Z"))
    kinds = [e.event for e in events]
    if os.environ.get("TM_STREAMS") == "1":
        assert kinds[0] == "block" and kinds[-1] == "done", kinds
        assert "delta" in kinds
        assert events[-1].data["answer_seq"] > 0
    else:
        assert kinds == ["dry_run"]

    # Record an answer your own model gave, and trace its claims.
    post_events.sync(
        "py-ana",
        "algebra-1",
        client=c,
        body=[
            TutorEvent.from_dict(
                {
                    "id": "a2",
                    "type": "tutor",
                    "at": "2026-03-03T10:02:00Z",
                    "text": "The intercept is where the line crosses the vertical axis.",
                }
            )
        ],
    )
    g = grounding.sync(
        "py-ana",
        "algebra-1",
        client=c,
        body=GroundingRequest(
            answer="The intercept is where the line crosses the vertical axis.",
            question="What is the intercept?",
            at="2026-03-03T10:02:00Z",
            answer_id="a2",
        ),
    )
    assert g.stance in ("answered", "partial", "couldnt")
    assert g.saved

    # The class this learner belongs to.
    view = class_json.sync("algebra-1", client=c, at="2026-03-04T00:00:00Z")
    assert isinstance(view, ClassView)
    row = next(r for r in view.learners if r.learner == "py-ana")
    slope = [i for i, k in enumerate(view.concepts) if k.key == "slope"]
    assert slope, [k.key for k in view.concepts]
    assert row.standings[slope[0]] == Standing.STRUGGLES

    # Export the learner (a ZIP archive), then erase them.
    exported = export_learner.sync_detailed("py-ana", client=c)
    assert exported.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(exported.content)).namelist()
    assert any(n.endswith("history.jsonl") for n in names), names
    erased = erase_learner.sync_detailed("py-ana", client=c, reference="walk-through")
    assert erased.status_code == 200, erased.content
    after = class_json.sync_detailed("algebra-1", client=c)
    if after.status_code == 200:
        assert "py-ana" not in [r.learner for r in after.parsed.learners], "an erased learner leaves the class"
    else:
        assert after.status_code == 404, "a class with no learner left is gone"


def test_another_tenants_learner_is_a_typed_404():
    c = client()
    create_subject.sync(client=c, body=CreateSubject(learner="py-ben", subject="algebra-1", title="Algebra 1"))
    other = AuthenticatedClient(base_url=URL, token=os.environ["TM_OTHER_KEY"])
    res = get_subject.sync_detailed("py-ben", "algebra-1", client=other)
    assert res.status_code == 404
    assert isinstance(res.parsed, ErrorBody)
    assert res.parsed.error.code == "unknown_subject"
    with pytest.raises(TurnError) as refused:
        list(stream_turn(other, "py-ben", "algebra-1", "hello"))
    assert refused.value.status == 404
