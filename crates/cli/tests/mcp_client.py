"""A real MCP client (the official Python SDK, `mcp` on PyPI) driving Tutor
Memory's MCP server, over stdio (`tutor-memory mcp`) or streamable HTTP
(`/mcp` of `tutor-memory serve`). Run by crates/cli/tests/mcp.rs with one JSON
argument; prints what it checked and exits non-zero on the first failure."""

import asyncio
import json
import sys

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {
    "list_subjects",
    "memory_block",
    "record_events",
    "teach",
    "record_answer",
    "beliefs",
    "belief_history",
    "subject_map",
    "subject_report",
    "verify_chain",
}


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def error_code(result):
    body = result.structured_content or {}
    return (body.get("error") or {}).get("code")


async def tour(session, subject):
    init = await session.initialize()
    check(init.server_info.name == "tutor-memory", f"initialized ({init.protocol_version})")

    tools = (await session.list_tools()).tools
    names = {t.name for t in tools}
    check(TOOLS <= names, f"every tool is listed: {sorted(names)}")
    for t in tools:
        props = (t.input_schema or {}).get("properties", {})
        check(bool(t.description), f"{t.name} has a description")
        if t.name != "list_subjects":
            check("subject" in props, f"{t.name}'s schema names the subject")

    listed = await session.call_tool("list_subjects", {})
    keys = [s["key"] for s in listed.structured_content["result"]]
    check(subject in keys, f"{subject} is listed")

    events = [
        {"id": "mcp-q1", "type": "learner", "at": "2026-11-02T09:00:00Z",
         "text": "What does the Golgi apparatus do with proteins?"},
        {"id": "mcp-a1", "type": "tutor", "at": "2026-11-02T09:00:05Z",
         "text": "The Golgi apparatus sorts and packages proteins into vesicles."},
    ]
    rec = await session.call_tool("record_events", {"subject": subject, "events": events})
    check(not rec.is_error, f"record_events: {rec.content[0].text[:80]}")
    body = rec.structured_content
    check(body["appended"] == 2, "two episodes appended")
    answer_id = body["episodes"][1]["id"]
    again = await session.call_tool("record_events", {"subject": subject, "events": events})
    check(again.structured_content["appended"] == 0, "recording the same events again appends nothing")

    block = await session.call_tool(
        "memory_block",
        {"subject": subject, "question": "What does the Golgi apparatus do?",
         "at": "2026-11-20T10:00:00Z"},
    )
    check(not block.is_error, "memory_block answered")
    b = block.structured_content
    recalled = [r["id"] for r in b["recalled"]]
    check(answer_id in recalled, f"the recorded answer {answer_id} is among the recalled ids {recalled}")
    check("YOUR MEMORY" in b["block"], "the block text is there")

    taught = await session.call_tool(
        "teach",
        {"subject": subject, "text": "Remember that the Golgi apparatus is the cell's post office",
         "at": "2026-11-20T10:01:00Z"},
    )
    check(not taught.is_error and taught.structured_content["appended"] == 1, "teach recorded the note")
    not_taught = await session.call_tool(
        "teach", {"subject": subject, "text": "What is a cell?", "at": "2026-11-20T10:02:00Z"}
    )
    check(not_taught.is_error and error_code(not_taught) == "not_teaching", "a question does not teach")

    answered = await session.call_tool(
        "record_answer",
        {"subject": subject, "answer": "The Golgi apparatus sorts and packages proteins into vesicles.",
         "question": "What does the Golgi apparatus do?", "recalled": recalled,
         "at": "2026-11-20T10:03:00Z"},
    )
    check(not answered.is_error, "record_answer recorded the answer")
    check(answered.structured_content["grounding"]["stance"] in ("answered", "partial", "couldnt"),
          "the answer has a stance")

    for tool in ("beliefs", "subject_map", "subject_report", "verify_chain"):
        r = await session.call_tool(tool, {"subject": subject})
        check(not r.is_error, f"{tool} answered")
    chain = await session.call_tool("verify_chain", {"subject": subject})
    check(chain.structured_content["state"] == "intact", "the chain is intact")

    resources = (await session.list_resources()).resources
    uris = [str(r.uri) for r in resources]
    report_uri = f"tutor-memory://subjects/{subject}/report"
    check(report_uri in uris and f"tutor-memory://subjects/{subject}/map" in uris,
          "the report and the map are resources")
    read = await session.read_resource(report_uri)
    check(json.loads(read.contents[0].text)["subject"] == subject, "the report resource reads")

    bad = await session.call_tool("memory_block", {"subject": 5, "question": "x"})
    check(bad.is_error and "invalid type" in bad.content[0].text,
          f"malformed arguments are refused clearly: {bad.content[0].text[:80]}")
    missing = await session.call_tool("memory_block", {"question": "x"})
    check(missing.is_error and "subject" in missing.content[0].text, "a missing argument is named")
    unknown = await session.call_tool("memory_block", {"subject": "nobody/nothing", "question": "x"})
    check(unknown.is_error and error_code(unknown) == "unknown_subject",
          "an unknown subject is the API's unknown_subject")
    bad_event = await session.call_tool(
        "record_events", {"subject": subject, "events": [{"type": "check", "at": "2026-11-21T10:00:00Z",
                                                          "topic": "x", "verdict": "maybe"}]})
    check(bad_event.is_error and error_code(bad_event) == "invalid_event", "a malformed event is invalid_event")


async def outsider(session, subject):
    await session.initialize()
    listed = await session.call_tool("list_subjects", {})
    check(listed.structured_content["result"] == [], "another tenant's key lists no subject")
    block = await session.call_tool("memory_block", {"subject": subject, "question": "Golgi?"})
    check(block.is_error and error_code(block) == "unknown_subject",
          "another tenant's key cannot see the subject")
    resources = (await session.list_resources()).resources
    check(resources == [], "nor its resources")


async def main():
    cfg = json.loads(sys.argv[1])
    subject = cfg["subject"]
    if cfg["mode"] == "stdio":
        params = StdioServerParameters(command=cfg["command"][0], args=cfg["command"][1:], env=cfg["env"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await tour(session, subject)
        return
    import httpx2

    async def over_http(key, visit):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            async with streamable_http_client(cfg["url"], http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    await visit(session, subject)

    await over_http(cfg["key"], tour)
    await over_http(cfg["other_key"], outsider)


asyncio.run(main())
