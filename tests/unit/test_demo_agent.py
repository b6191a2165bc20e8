"""Tests of the scripted demo agent (``interrupt_chat.demo.agent``), a strict AG-UI 1.0 producer."""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import socket
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from ag_ui.core import Event, EventType, RunFinishedEvent
from ag_ui_validate.pytest_plugin import assert_valid_agui
from ag_ui_validate.transport import TransportOptions, validate_body
from ag_ui_validate.types import ValidatorOptions
from httpx_sse import aconnect_sse
from pydantic import TypeAdapter

from interrupt_chat.demo.agent import SCENARIO_NAMES, create_app

pytestmark = pytest.mark.asyncio

EVENT = TypeAdapter(Event)
PACKAGE_DIR = Path(__file__).resolve().parents[2] / "interrupt_chat" / "demo_agent"
SECRET = "sk-demo-Zq9-very-secret"

# The scenarios whose stream ends with an interrupt, and the reasons they raise.
STANDARD_INTERRUPTS = {
    "approval": ["tool_call"],
    "choice": ["input_required"],
    "credential": ["input_required"],
    "multi": ["tool_call", "input_required", "confirmation"],
    "expiring": ["confirmation"],
    "pay": ["tool_call"],
    "both": ["confirmation"],
}
LEGACY_VALUES = {
    "legacy": {
        "question": "Send the weekly report?",
        "message": "Send the weekly report?",
        "responseSchema": {
            "type": "object",
            "required": ["approved"],
            "properties": {"approved": {"type": "boolean"}},
        },
    },
    "question": {"question": "Ship it?"},
}


# -- helpers ------------------------------------------------------------------------------


@pytest.fixture
def app():
    return create_app(delay=0.0, records=True)  # the tests read /records and /notes over HTTP


@pytest_asyncio.fixture
async def client(app):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://demo") as c:
        yield c


def run_input(text: str | None = "hello", *, thread: str = "t1", run: str | None = None, **extra: Any) -> dict:
    """A camelCase RunAgentInput body, as the client sends it."""
    messages = [{"id": "u1", "role": "user", "content": text}] if text is not None else []
    return {
        "threadId": thread,
        "runId": run or f"run-{uuid.uuid4().hex[:8]}",
        "protocolVersion": "1.0",
        "state": {},
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
        **extra,
    }


async def stream(client: httpx.AsyncClient, body: dict) -> list:
    """POST ``body`` and parse every SSE ``data`` into an ``ag_ui.core`` event."""
    events = []
    async with aconnect_sse(client, "POST", "/", json=body) as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        async for sse in source.aiter_sse():
            events.append(EVENT.validate_json(sse.data))
    assert_well_formed(events, body)
    return events


def assert_well_formed(events: list, body: dict) -> None:
    """The client verifier's rules (the ordering rules @ag-ui/client enforces), for one run."""
    first, last = events[0], events[-1]
    assert first.type == EventType.RUN_STARTED
    assert (first.thread_id, first.run_id) == (body["threadId"], body["runId"])
    assert first.parent_run_id == body.get("parentRunId")
    assert last.type in (EventType.RUN_FINISHED, EventType.RUN_ERROR)
    if last.type == EventType.RUN_FINISHED:
        assert (last.thread_id, last.run_id) == (body["threadId"], body["runId"])
    open_messages: set[str] = set()
    open_calls: set[str] = set()
    open_steps: list[str] = []
    closed_calls: set[str] = set()
    for event in events[1:-1]:
        assert event.type not in (EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_ERROR)
        assert isinstance(event.timestamp, int)
        kind = event.type
        if kind == EventType.TEXT_MESSAGE_START:
            assert event.message_id not in open_messages
            open_messages.add(event.message_id)
        elif kind == EventType.TEXT_MESSAGE_CONTENT:
            assert event.message_id in open_messages and event.delta
        elif kind == EventType.TEXT_MESSAGE_END:
            open_messages.remove(event.message_id)
        elif kind == EventType.TOOL_CALL_START:
            assert event.tool_call_id not in open_calls | closed_calls
            open_calls.add(event.tool_call_id)
        elif kind == EventType.TOOL_CALL_ARGS:
            assert event.tool_call_id in open_calls
        elif kind == EventType.TOOL_CALL_END:
            open_calls.remove(event.tool_call_id)
            closed_calls.add(event.tool_call_id)
        elif kind == EventType.TOOL_CALL_RESULT:
            assert event.tool_call_id not in open_calls
        elif kind == EventType.STEP_STARTED:
            open_steps.append(event.step_name)
        elif kind == EventType.STEP_FINISHED:
            assert open_steps.pop() == event.step_name
    if last.type == EventType.RUN_FINISHED:
        assert not open_messages and not open_calls and not open_steps


def of_type(events: list, kind: EventType) -> list:
    return [e for e in events if e.type == kind]


def texts(events: list) -> list[str]:
    """The full text of each streamed text message, in order."""
    by_id: dict[str, str] = {}
    for e in events:
        if e.type == EventType.TEXT_MESSAGE_START:
            by_id[e.message_id] = ""
        elif e.type == EventType.TEXT_MESSAGE_CONTENT:
            by_id[e.message_id] += e.delta
    return list(by_id.values())


def tool_args(events: list, tool_call_id: str) -> dict:
    return json.loads(
        "".join(e.delta for e in of_type(events, EventType.TOOL_CALL_ARGS) if e.tool_call_id == tool_call_id)
    )


def interrupts_of(events: list) -> list:
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent) and finished.outcome is not None
    assert finished.outcome.type == "interrupt"
    return finished.outcome.interrupts


def wire(obj: Any) -> dict:
    return obj.model_dump(by_alias=True, mode="json")


def resolved(interrupt_id: str, payload: Any) -> dict:
    return {"interruptId": interrupt_id, "status": "resolved", "payload": payload}


def cancelled(interrupt_id: str) -> dict:
    return {"interruptId": interrupt_id, "status": "cancelled"}


async def interrupted(client: httpx.AsyncClient, scenario: str, thread: str = "t1") -> tuple[list, dict]:
    body = run_input(scenario, thread=thread)
    return await stream(client, body), body


async def resume(client: httpx.AsyncClient, first: dict, entries: list[dict], **extra: Any) -> list:
    """Resume ``first``'s thread as the client must: new runId, parentRunId, resume list."""
    body = run_input(None, thread=first["threadId"], parentRunId=first["runId"], resume=entries, **extra)
    return await stream(client, body)


def error_of(events: list) -> tuple[str, str]:
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.RUN_ERROR]
    return events[-1].code, events[-1].message


# -- routes -------------------------------------------------------------------------------


async def test_health(client):
    response = await client.get("/health")
    assert response.json() == {"ok": True}


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        json.dumps({"threadId": "t1", "messages": []}).encode(),
        json.dumps(run_input("x", resume=[{"interruptId": "i1", "status": "approved"}])).encode(),
    ],
    ids=["bad-json", "missing-runId", "bad-resume-status"],
)
async def test_invalid_body_is_422_and_not_recorded(client, content):
    response = await client.post("/", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert isinstance(response.json()["error"], str)
    assert (await client.get("/records")).json() == []


async def test_records_in_order_filtered_and_cleared(client, app):
    first = run_input("hello", thread="a")
    second = run_input("choice", thread="b", state={"k": 1})
    await stream(client, first)
    await stream(client, second)
    expected = [first, second]
    assert (await client.get("/records")).json() == expected
    assert (await client.get("/records", params={"threadId": "b"})).json() == expected[1:]
    assert app.state.store.thread("b").open is not None

    assert (await client.delete("/records")).status_code == 200
    assert (await client.get("/records")).json() == []
    assert app.state.store.threads == {}


async def test_package_imports_neither_reflex_nor_the_client():
    """The demo agent is a producer: it must stay independent of Reflex and of interrupt_chat.agui."""
    for path in PACKAGE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            else:
                continue
            for name in names:
                assert not name.startswith(("reflex", "interrupt_chat")), f"{path.name} imports {name}"


# -- scenarios ----------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIO_NAMES)
async def test_every_scenario_is_well_formed(client, app, scenario):
    events = await stream(client, run_input(scenario, thread=scenario))
    finished = events[-1]
    if scenario == "error":
        assert finished.type == EventType.RUN_ERROR
    elif scenario in STANDARD_INTERRUPTS:
        assert [i.reason for i in interrupts_of(events)] == STANDARD_INTERRUPTS[scenario]
    else:
        assert finished.outcome is None or finished.outcome.type == "success"
    is_open = app.state.store.thread(scenario).open is not None
    no_interrupt = ("markdown", "long", "xss", "tools", "error", "steps", "progress", "recipe", "clock", "confirm",
                    "history", "write", "think", "haiku", "backlog")
    assert is_open == (scenario not in no_interrupt)


@pytest.mark.parametrize(
    ("text", "scenario"),
    [("/Approval please", "approval"), ("CHOICE!", "choice"), ("Hello there", "markdown"), ("", "markdown")],
)
async def test_scenario_is_the_first_word_of_the_last_user_message(client, app, text, scenario):
    body = run_input(text)
    body["messages"] = [{"id": "u0", "role": "user", "content": "credential"}, *body["messages"]]
    events = await stream(client, body)
    snapshots = of_type(events, EventType.STATE_SNAPSHOT)
    if scenario == "approval":
        assert interrupts_of(events)[0].reason == "tool_call"
    elif scenario == "choice":
        assert interrupts_of(events)[0].message == "Pick a color"
    else:
        assert snapshots[0].snapshot == {"scenario": "markdown", "turn": 1}


async def test_user_message_with_content_parts_selects_the_scenario(client):
    body = run_input(None)
    body["messages"] = [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "choice now"}]}]
    events = await stream(client, body)
    assert interrupts_of(events)[0].message == "Pick a color"


async def test_markdown_echoes_user_text_escaped(client):
    events = await stream(client, run_input("hello <script>alert(1)</script> **bold** [x](javascript:y)"))
    (text,) = texts(events)
    assert text.startswith("## Hello from the demo agent")
    assert "- **" in text and "```python" in text
    assert r"\<script\>alert\(1\)\</script\>" in text
    assert r"\*\*bold\*\*" in text and r"\[x\]\(javascript:y\)" in text
    assert "<script>" not in text
    assert [e.step_name for e in of_type(events, EventType.STEP_STARTED)] == ["respond"]


async def test_approval_outcome(client):
    events, _ = await interrupted(client, "approval")
    (start,) = of_type(events, EventType.TOOL_CALL_START)
    message_id = of_type(events, EventType.TEXT_MESSAGE_START)[0].message_id
    assert start.tool_call_name == "delete_files"
    assert start.parent_message_id == message_id
    assert len(of_type(events, EventType.TOOL_CALL_ARGS)) > 1
    assert tool_args(events, start.tool_call_id) == {"path": "/tmp/reports", "count": 3}
    (interrupt,) = interrupts_of(events)
    assert wire(interrupt) == {
        "id": f"int-{start.tool_call_id}",
        "reason": "tool_call",
        "toolCallId": start.tool_call_id,
        "message": "Delete 3 files in /tmp/reports?",
        "responseSchema": {
            "type": "object",
            "required": ["approved"],
            "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}},
        },
    }
    # The state snapshot comes before the interrupting RUN_FINISHED.
    assert of_type(events, EventType.STATE_SNAPSHOT)[0].snapshot == {"scenario": "approval", "turn": 1}


async def test_choice_and_credential_outcomes(client):
    events, _ = await interrupted(client, "choice", thread="c1")
    (choice,) = interrupts_of(events)
    assert (choice.reason, choice.message) == ("input_required", "Pick a color")
    assert choice.response_schema["required"] == ["color"]
    assert choice.response_schema["properties"]["color"] == {"type": "string", "enum": ["red", "green", "blue"]}

    events, _ = await interrupted(client, "credential", thread="c2")
    (cred,) = interrupts_of(events)
    assert (cred.reason, cred.message) == ("input_required", "Enter your API key")
    assert cred.response_schema["required"] == ["api_key"]
    assert cred.response_schema["properties"]["api_key"] == {"type": "string", "format": "password", "writeOnly": True}


async def test_multi_raises_three_distinct_interrupts(client):
    events, _ = await interrupted(client, "multi")
    items = interrupts_of(events)
    assert len({i.id for i in items}) == 3
    (start,) = of_type(events, EventType.TOOL_CALL_START)
    assert items[0].tool_call_id == start.tool_call_id
    assert items[2].response_schema["properties"] == {"approved": {"type": "boolean"}}


async def test_expiring_interrupt_expires_in_30_seconds(client):
    before = datetime.now(UTC)
    events, _ = await interrupted(client, "expiring")
    (item,) = interrupts_of(events)
    assert item.reason == "confirmation"
    expires = datetime.fromisoformat(item.expires_at)
    assert expires.utcoffset() is not None and item.expires_at.endswith("+00:00")
    assert 29 <= (expires - before).total_seconds() <= 31


@pytest.mark.parametrize("scenario", ["legacy", "legacy-json", "question"])
async def test_legacy_json_string_value(client, scenario):
    events, _ = await interrupted(client, scenario)
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.CUSTOM, EventType.RUN_FINISHED]
    custom = events[1]
    assert custom.name == "on_interrupt" and isinstance(custom.value, str)
    assert json.loads(custom.value) == LEGACY_VALUES["question" if scenario == "question" else "legacy"]
    assert events[-1].outcome is None


async def test_legacy_string_value(client):
    events, _ = await interrupted(client, "legacy-string")
    assert events[1].value == "approval: publish the draft?"
    assert events[-1].outcome is None


async def test_both_channels_in_one_run(client):
    events, _ = await interrupted(client, "both")
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.CUSTOM, EventType.RUN_FINISHED]
    value = json.loads(events[1].value)
    (item,) = interrupts_of(events)
    assert value["message"] == item.message and value["reason"] == item.reason == "confirmation"


async def test_error_after_legacy_interrupt_leaves_nothing_open(client, app):
    events, _ = await interrupted(client, "error")
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.CUSTOM, EventType.RUN_ERROR]
    assert (events[-1].code, events[-1].message) == ("SIMULATED", "Simulated failure after interrupt")
    assert app.state.store.thread("t1").open is None


async def test_long_streams_many_deltas(client):
    events = await stream(client, run_input("long"))
    assert len(of_type(events, EventType.TEXT_MESSAGE_CONTENT)) == 2000


async def test_xss_sends_the_payloads_verbatim(client):
    (text,) = texts(await stream(client, run_input("xss")))
    for payload in (
        "<script>window.__xss=1</script>",
        '<img src=x onerror="window.__xss=1">',
        "[click](javascript:window.__xss=1)",
    ):
        assert payload in text


async def test_tools_completes_without_interrupt(client):
    events = await stream(client, run_input("tools"))
    (start,) = of_type(events, EventType.TOOL_CALL_START)
    (result,) = of_type(events, EventType.TOOL_CALL_RESULT)
    assert result.tool_call_id == start.tool_call_id and result.role == "tool"
    assert json.loads(result.content)["forecast"] == "sunny"
    assert events[-1].outcome.type == "success"
    assert texts(events)[-1] == "It is sunny in Paris, 21 °C."


# -- resume -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "result", "text"),
    [
        ({"approved": True}, "deleted 3 files in /tmp/reports", "Approved: deleted 3 files in /tmp/reports."),
        ({"approved": False}, "denied by user", "Rejected."),
        ({"approved": False, "reason": "Not those"}, "denied by user: Not those", "Rejected: Not those"),
        (
            {"approved": True, "editedArgs": {"path": "/tmp/old", "count": 1}},
            "deleted 1 files in /tmp/old",
            "Approved: deleted 1 files in /tmp/old.",
        ),
        (None, "cancelled by user", "Cancelled."),
    ],
    ids=["approve", "reject", "reject-why", "edit", "cancel"],
)
async def test_approval_resume(client, app, entry, result, text):
    events, first = await interrupted(client, "approval")
    (item,) = interrupts_of(events)
    answer = cancelled(item.id) if entry is None else resolved(item.id, entry)
    resumed = await resume(client, first, [answer])
    assert resumed[1].type == EventType.TOOL_CALL_RESULT
    assert (resumed[1].tool_call_id, resumed[1].content) == (item.tool_call_id, result)
    assert not of_type(resumed, EventType.TOOL_CALL_START)
    assert texts(resumed) == [text]
    assert resumed[-1].outcome.type == "success"
    assert app.state.store.thread("t1").open is None
    assert (await client.get("/notes")).json() == []


async def test_choice_resume(client):
    events, first = await interrupted(client, "choice")
    resumed = await resume(client, first, [resolved(interrupts_of(events)[0].id, {"color": "green"})])
    assert texts(resumed) == ["You picked green."]


async def test_credential_resume_never_echoes_the_secret(client, caplog):
    caplog.set_level(logging.DEBUG)
    events, first = await interrupted(client, "credential")
    body = run_input(None, thread="t1", parentRunId=first["runId"])
    body["resume"] = [resolved(interrupts_of(events)[0].id, {"api_key": SECRET})]
    raw = (await client.post("/", json=body)).text
    assert SECRET not in raw
    assert f"Credential received ({len(SECRET)} characters)." in "".join(
        json.loads(line[5:]).get("delta", "") for line in raw.splitlines() if line.startswith("data:")
    )
    records = (await client.get("/records")).text
    assert SECRET not in records
    assert (await client.get("/records")).json()[-1]["resume"][0]["payload"] == {"api_key": f"<redacted:{len(SECRET)}>"}
    assert SECRET not in caplog.text


async def test_multi_resume_in_any_order(client):
    events, first = await interrupted(client, "multi")
    approval, choice, confirm = interrupts_of(events)
    entries = [resolved(confirm.id, {"approved": True}), cancelled(choice.id),
               resolved(approval.id, {"approved": True})]
    resumed = await resume(client, first, entries)
    assert [e.tool_call_id for e in of_type(resumed, EventType.TOOL_CALL_RESULT)] == [approval.tool_call_id]
    assert texts(resumed) == ["Approved: deleted 3 files in /tmp/reports.\n\nCancelled.\n\nConfirmed."]


async def test_partial_resume_is_rejected_and_the_interrupts_stay_open(client, app):
    events, first = await interrupted(client, "multi")
    approval, choice, confirm = interrupts_of(events)
    code, message = error_of(await resume(client, first, [resolved(approval.id, {"approved": True})]))
    assert code == "PARTIAL_RESUME" and choice.id in message and confirm.id in message
    assert len(app.state.store.thread("t1").open.pending) == 3

    retry = [cancelled(approval.id), resolved(choice.id, {"color": "red"}), resolved(confirm.id, {"approved": False})]
    resumed = await resume(client, first, retry)
    assert texts(resumed) == ["Cancelled.\n\nYou picked red.\n\nRejected."]


async def test_unknown_interrupt_id_is_rejected(client, app):
    events, first = await interrupted(client, "choice")
    item = interrupts_of(events)[0]
    code, _ = error_of(await resume(client, first, [resolved(item.id, {"color": "red"}), cancelled("nope")]))
    assert code == "UNKNOWN_INTERRUPT_ID"
    assert app.state.store.thread("t1").open is not None


async def test_resume_without_open_interrupts_is_unknown(client):
    code, _ = error_of(await resume(client, run_input("x", thread="fresh"), [cancelled("int-1")]))
    assert code == "UNKNOWN_INTERRUPT_ID"


async def test_duplicate_entries_are_rejected(client):
    events, first = await interrupted(client, "choice")
    item = interrupts_of(events)[0]
    code, _ = error_of(await resume(client, first, [cancelled(item.id), cancelled(item.id)]))
    assert code == "DUPLICATE_INTERRUPT_ID"


@pytest.mark.parametrize(
    ("scenario", "payload"),
    [
        ("choice", {"color": "purple"}),
        ("choice", None),
        ("approval", {"editedArgs": {}}),
        ("credential", {"api_key": 12345}),
    ],
)
async def test_invalid_payload_is_rejected_without_echo(client, app, scenario, payload):
    events, first = await interrupted(client, scenario)
    item = interrupts_of(events)[0]
    code, message = error_of(await resume(client, first, [resolved(item.id, payload)]))
    assert code == "INVALID_PAYLOAD" and item.id in message
    assert "purple" not in message and "12345" not in message
    assert app.state.store.thread("t1").open is not None

    valid = {"choice": {"color": "blue"}, "approval": {"approved": False}, "credential": {"api_key": "k"}}
    assert (await resume(client, first, [resolved(item.id, valid[scenario])]))[-1].type == EventType.RUN_FINISHED


async def test_expired_interrupt_can_only_be_cancelled():
    app = create_app(delay=0.0, expires_in=0.0)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://demo") as client:
        events, first = await interrupted(client, "expiring")
        item = interrupts_of(events)[0]
        code, _ = error_of(await resume(client, first, [resolved(item.id, {"approved": True})]))
        assert code == "INTERRUPT_EXPIRED"
        assert texts(await resume(client, first, [cancelled(item.id)])) == ["Cancelled."]


async def test_both_is_resumed_with_the_standard_channel(client):
    events, first = await interrupted(client, "both")
    resumed = await resume(client, first, [resolved(interrupts_of(events)[0].id, {"approved": True})])
    assert texts(resumed) == ["Confirmed."]


@pytest.mark.parametrize("scenario", ["legacy", "question", "legacy-string", "both"])
async def test_legacy_resume_with_forwarded_props(client, app, scenario):
    _, first = await interrupted(client, scenario)
    command = {"resume": {"approved": True}, "interruptEvent": "..."}
    body = run_input(None, thread="t1", parentRunId=first["runId"], forwardedProps={"command": command})
    resumed = await stream(client, body)
    assert texts(resumed) == ['Legacy answer: {"approved": true}']
    assert resumed[-1].outcome is None
    assert app.state.store.thread("t1").open is None


async def test_legacy_resume_parses_a_json_string_like_langgraph(client):
    await interrupted(client, "legacy")
    body = run_input(None, thread="t1", forwardedProps={"command": {"resume": '["a", 1]'}})
    assert texts(await stream(client, body)) == ['Legacy answer: ["a", 1]']


async def test_legacy_resume_without_legacy_interrupt(client):
    await interrupted(client, "choice")
    body = run_input(None, thread="t1", forwardedProps={"command": {"resume": True}})
    assert error_of(await stream(client, body))[0] == "NO_PENDING_INTERRUPT"


async def test_new_message_re_raises_the_open_interrupts(client, app):
    events, _ = await interrupted(client, "multi")
    again = await stream(client, run_input("hello again"))
    assert [e.type for e in again] == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
    assert [wire(i) for i in interrupts_of(again)] == [wire(i) for i in interrupts_of(events)]
    assert app.state.store.thread("t1").open.run_id == again[0].run_id

    legacy_events, _ = await interrupted(client, "legacy", thread="t2")
    again = await stream(client, run_input("what?", thread="t2"))
    assert [e.type for e in again] == [e.type for e in legacy_events]
    assert again[1].value == legacy_events[1].value


async def test_wrong_parent_run_id_is_noted_not_failed(client):
    events, first = await interrupted(client, "choice")
    entries = [resolved(interrupts_of(events)[0].id, {"color": "red"})]
    body = run_input(None, thread="t1", parentRunId="someone-else", resume=entries)
    assert texts(await stream(client, body)) == ["You picked red."]
    (note,) = (await client.get("/notes", params={"threadId": "t1"})).json()
    assert note["runId"] == body["runId"] and "someone-else" in note["note"] and first["runId"] in note["note"]


# -- ag-ui-validate (third-party linter of producer streams) ------------------------------


async def validate_raw(client: httpx.AsyncClient, body: dict, **severity_overrides: str):
    """Run ag-ui-validate's transport layer (SSE framing + Content-Type + core rules) on a response."""
    response = await client.post("/", json=body)

    async def chunks():
        yield response.content

    options = TransportOptions(validator=ValidatorOptions(severity_overrides=severity_overrides), recorded=True)
    result = await validate_body(chunks(), response.headers["content-type"], options)
    return result.report, response


def findings(report) -> list[str]:
    return [f"{d.rule} {d.severity}: {d.message}" for d in report.diagnostics]


@pytest.mark.parametrize("scenario", SCENARIO_NAMES)
async def test_ag_ui_validate_passes_every_scenario(client, scenario):
    report, _ = await validate_raw(client, run_input(scenario, thread=scenario))
    assert report.summary.errors == report.summary.warnings == 0, findings(report)
    assert not report.internal_errors
    # The only remark allowed: the legacy channel's CUSTOM name is not namespaced (AGUI903, info).
    assert {d.rule for d in report.diagnostics} <= {"AGUI903"}


async def test_ag_ui_validate_passes_resume_streams(client):
    events, first = await interrupted(client, "choice", thread="v1")
    body = run_input(None, thread="v1", parentRunId=first["runId"], resume=[cancelled(interrupts_of(events)[0].id)])
    report, _ = await validate_raw(client, body)
    assert report.diagnostics == []

    # Tool-bound resume: AG-UI 1.0 sends TOOL_CALL_RESULT for the *previous* run's toolCallId. The
    # validator scopes tool calls per run and flags that as AGUI207, so that one rule is turned off.
    events, first = await interrupted(client, "approval", thread="v2")
    entries = [resolved(interrupts_of(events)[0].id, {"approved": True})]
    strict, _ = await validate_raw(client, run_input(None, thread="v2", parentRunId=first["runId"], resume=entries))
    assert {d.rule for d in strict.diagnostics} == {"AGUI207"}

    events, first = await interrupted(client, "approval", thread="v3")
    entries = [resolved(interrupts_of(events)[0].id, {"approved": True})]
    report, response = await validate_raw(
        client, run_input(None, thread="v3", parentRunId=first["runId"], resume=entries), AGUI207="off"
    )
    assert report.summary.errors == report.summary.warnings == report.summary.info == 0, findings(report)
    assert "TOOL_CALL_RESULT" in response.text


async def test_ag_ui_validate_passes_a_whole_conversation(client):
    """Interrupted run + resume run as one multi-run stream, via the pytest-plugin API."""
    first_body = run_input("multi", thread="conv")
    first = await client.post("/", json=first_body)
    ids = [i["id"] for i in json.loads(first.text.strip().splitlines()[-1][5:])["outcome"]["interrupts"]]
    second_body = run_input(None, thread="conv", parentRunId=first_body["runId"], resume=[cancelled(i) for i in ids])
    second = await client.post("/", json=second_body)
    lines = [line[5:].strip() for r in (first, second) for line in r.text.splitlines() if line.startswith("data:")]
    assert_valid_agui(lines, severity_overrides={"AGUI207": "off"}, max_warnings=0)


async def test_ag_ui_validate_cli_on_a_capture(client, tmp_path):
    capture = tmp_path / "approval.sse"
    capture.write_text((await client.post("/", json=run_input("approval"))).text)
    cli = Path(sys.executable).with_name("ag-ui-validate")
    done = subprocess.run([str(cli), "--json", str(capture)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["summary"]["errors"] == 0


# -- cancellation over a real connection --------------------------------------------------


def announcing_spec(app, version: str):
    """Wrap ``app`` so it sees the given ASGI ``spec_version`` (Starlette streams differently from 2.4)."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            scope = {**scope, "asgi": {**scope.get("asgi", {}), "spec_version": version}}
        await app(scope, receive, send)

    return wrapped


@pytest.mark.loopback
@pytest.mark.parametrize("spec_version", ["2.3", "2.4"])
async def test_long_run_stops_when_the_client_disconnects(spec_version):
    import uvicorn

    app = create_app(delay=0.01)  # 2000 deltas: about 20 s if nothing cancelled it
    store = app.state.store
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(announcing_spec(app, spec_version), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        body = run_input("long")
        async with (httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client,
                    aconnect_sse(client, "POST", "/", json=body) as source):
            deltas = 0
            async for sse in source.aiter_sse():
                deltas += json.loads(sse.data)["type"] == "TEXT_MESSAGE_CONTENT"
                if deltas == 5:
                    break
            assert store.active_runs == {body["runId"]}
        for _ in range(200):  # the connection is closed: the generator must be cancelled promptly
            if not store.active_runs:
                break
            await asyncio.sleep(0.01)
        assert store.active_runs == set()
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()
