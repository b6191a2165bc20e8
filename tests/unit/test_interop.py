"""Interop: the protocol core (``AgentSession``) against the real example producers over a real loopback socket.

Each example app runs under uvicorn on 127.0.0.1 (ephemeral port, background thread, one server per module, via
``tests.unit.agents.serve_in_thread``, the helper behind conftest's ``loopback`` fixture); each session comes from
``producer_session.open_session``, which records the request the core built. ``httpx.ASGITransport`` buffers
whole responses; a socket is what a deployed chat talks to. Every flow checks the full loop: the interrupt surfaces
on the right channel, the answer goes out as the spec says, the agent's follow-up text proves it got the answer,
nothing stays pending, tool calls end ``complete``, and a further plain run on the same thread still works.

Producers: LangGraph legacy (``/legacy/*``, CUSTOM ``on_interrupt`` only), LangGraph standard (``/std/*``,
``emit_interrupt_outcome=True``: both channels) and pydantic-ai (``/``, standard, tool-bound interrupts).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

pytest.importorskip("ag_ui_langgraph", reason="needs requirements-examples.txt")
pytest.importorskip("pydantic_ai", reason="needs requirements-examples.txt")
pytest.importorskip("uvicorn")

from ag_ui.core import EventType

from examples import langgraph_agent, pydantic_ai_agent
from interrupt_chat.agui import AgentSession, interrupt_dict
from interrupt_chat.model.cards import source_of
from tests.unit.agents import serve_in_thread
from tests.unit.producer_session import (
    APPROVE,
    REJECT,
    assert_clean,
    drain,
    interrupted,
    last_assistant_text,
    open_session,
    types,
)

pytestmark = pytest.mark.loopback

ADA = {"name": "Ada", "count": 3}
DELETE_ARGS = pydantic_ai_agent.DELETE_ARGS
HELLO = "Hello! Say anything else and I will ask to delete some files."


@pytest.fixture(scope="module")
def langgraph() -> Iterator[str]:
    with serve_in_thread(langgraph_agent.create_app()) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def pydantic_ai() -> Iterator[str]:
    with serve_in_thread(pydantic_ai_agent.create_app()) as base_url:
        yield base_url


# --- LangGraph, standard channel (/std/*) ----------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "expected"), [("approve", "approved: True"), ("reject", "approved: False"),
                                                  ("cancel", "cancelled")])
async def test_langgraph_std_approval_s02_s12(langgraph: str, answer: str, expected: str):
    session, bodies = open_session(langgraph + "/std/approval")
    first = await interrupted(session, "delete my files")
    first_run = session.last_run_id
    pending = session.tracker.pending
    # S2: both channels in one run; the structured outcome wins
    assert "CUSTOM" in types(first) and pending.kind == "standard"
    [interrupt] = pending.interrupts
    assert interrupt.reason == "confirmation" and len(interrupt.id) == 32
    assert interrupt.response_schema["properties"]["approved"] == {"type": "boolean"}
    assert pending.run_id == first_run

    if answer == "cancel":
        decision = session.tracker.cancel()
    else:
        decision = session.tracker.resolve(APPROVE if answer == "approve" else REJECT)
    assert decision.kind == "resume"
    events = await drain(session.submit(decision))
    assert_clean(session)

    # S12: a new run on the same thread, parentRunId = the interrupting run, the resume list, the history
    body = bodies[-1]
    assert body["threadId"] == session.thread_id and body["runId"] not in (first_run, None)
    assert body["parentRunId"] == first_run and body["protocolVersion"] == "1.0"
    entry = {"interruptId": interrupt.id, "status": "cancelled"} if answer == "cancel" else {
        "interruptId": interrupt.id, "status": "resolved", "payload": APPROVE if answer == "approve" else REJECT}
    assert body["resume"] == [entry]  # S6: no payload key on a cancelled entry
    assert [m["content"] for m in body["messages"] if m["role"] == "user"] == ["delete my files"]
    assert body["forwardedProps"] == {}
    snapshots = [e.snapshot for e in first if e.type == EventType.STATE_SNAPSHOT]
    assert body["state"] == snapshots[-1]  # the last known state is carried across the gap

    # the follow-up arrives only as MESSAGES_SNAPSHOT (a plain node's AIMessage): it proves the graph got the answer
    assert "MESSAGES_SNAPSHOT" in types(events) and "TEXT_MESSAGE_START" not in types(events)
    assert last_assistant_text(session) == expected
    assert session.tracker.pending is None
    assert [(m.role, m.content) for m in session.transcript.messages] == [
        ("user", "delete my files"), ("assistant", expected)]

    # a further plain message on the same thread works: the finished graph starts over with a new interrupt
    await interrupted(session, "and again")
    assert session.tracker.pending.kind == "standard"
    assert session.tracker.pending.ids != [interrupt.id]
    assert [m.role for m in session.transcript.messages] == ["user", "assistant", "user"]


async def test_langgraph_std_form_input_required(langgraph: str):
    session, bodies = open_session(langgraph + "/std/form")
    await interrupted(session, "order please")
    [interrupt] = session.tracker.pending.interrupts
    assert interrupt.reason == "input_required"
    assert interrupt.response_schema["required"] == ["name", "count"]

    await drain(session.submit(session.tracker.resolve(ADA)))
    assert_clean(session)
    assert bodies[-1]["resume"] == [{"interruptId": interrupt.id, "status": "resolved", "payload": ADA}]
    assert last_assistant_text(session) == "name=Ada count=3"
    assert session.tracker.pending is None


async def test_langgraph_std_form_cancel(langgraph: str):
    session, _ = open_session(langgraph + "/std/form")
    await interrupted(session, "order please")
    await drain(session.submit(session.tracker.cancel()))
    assert_clean(session)
    assert last_assistant_text(session) == "cancelled"
    assert session.tracker.pending is None


async def test_s07_langgraph_std_multi_resumes_once_in_protocol_order(langgraph: str):
    session, bodies = open_session(langgraph + "/std/multi")
    await interrupted(session, "send the reports")
    first, second = session.tracker.pending.interrupts
    assert [first.message, second.message] == ["Send the report to Ada?", "Send the report to Grace?"]

    assert session.tracker.cancel(second.id).kind == "waiting"  # answered out of order
    decision = session.tracker.resolve(APPROVE, first.id)
    assert decision.kind == "resume"
    await drain(session.submit(decision))
    assert_clean(session)

    assert len(bodies) == 2  # one resume request for both
    assert bodies[-1]["resume"] == [
        {"interruptId": first.id, "status": "resolved", "payload": APPROVE},
        {"interruptId": second.id, "status": "cancelled"},
    ]
    assert last_assistant_text(session) == "first: approved: True; second: cancelled"
    assert session.tracker.pending is None

    await interrupted(session, "once more")
    assert len(session.tracker.pending.interrupts) == 2


@pytest.mark.parametrize("mode", ["std", "legacy"])
async def test_langgraph_a_subgraphs_interrupt_names_its_node_and_the_resume_reaches_it(langgraph: str, mode: str):
    """Issue 26 §3: the parent's node ``flights_agent`` is a subgraph whose node ``choose_flight`` interrupts.
    ag-ui-langgraph 0.0.47 leaves the interrupt's ``ns`` empty, so the card's source is the step that asked."""
    session, bodies = open_session(langgraph + f"/{mode}/subgraph")
    events = await interrupted(session, "book me a flight")
    steps = [e.step_name for e in events if e.type == EventType.STEP_STARTED]
    assert steps == ["flights_agent", "choose_flight"]
    pending = session.tracker.pending
    fields = interrupt_dict(pending.interrupts[0]) if mode == "std" else {}
    value = pending.event["value"] if mode == "legacy" else None
    assert source_of(fields, value, session.transcript.last_step) == ("choose_flight", False)
    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    assert last_assistant_text(session) == "approved: True"  # the subgraph's node got the answer
    assert ("resume" in bodies[-1]) == (mode == "std")


# --- LangGraph, legacy channel (/legacy/*) ---------------------------------------------------------------------


@pytest.mark.parametrize(("payload", "expected"), [(APPROVE, "approved: True"), (REJECT, "approved: False")])
async def test_s13_langgraph_legacy_resolve_via_forwarded_props(langgraph: str, payload: dict, expected: str):
    session, bodies = open_session(langgraph + "/legacy/approval")
    first = await interrupted(session, "delete my files")
    first_run = session.last_run_id
    pending = session.tracker.pending
    custom = [e for e in first if e.type == EventType.CUSTOM]
    assert len(custom) == 1 and first[-1].outcome is None  # S1: the legacy channel only
    assert pending.kind == "legacy" and pending.interrupts == []
    assert pending.event["value"]["reason"] == "confirmation"  # the JSON string value is parsed

    decision = session.tracker.resolve(payload)
    assert decision.kind == "legacy-resume"
    await drain(session.submit(decision))
    assert_clean(session)

    body = bodies[-1]
    assert body["forwardedProps"] == {"command": {"resume": payload, "interruptEvent": custom[0].value}}
    assert "resume" not in body
    assert body["threadId"] == session.thread_id and body["parentRunId"] == first_run
    assert last_assistant_text(session) == expected
    assert session.tracker.pending is None

    await interrupted(session, "and again")
    assert session.tracker.pending.kind == "legacy"


async def test_s13_langgraph_legacy_form(langgraph: str):
    session, bodies = open_session(langgraph + "/legacy/form")
    await interrupted(session, "order please")
    assert session.tracker.pending.event["value"]["reason"] == "input_required"
    await drain(session.submit(session.tracker.resolve(ADA)))
    assert_clean(session)
    assert bodies[-1]["forwardedProps"]["command"]["resume"] == ADA
    assert last_assistant_text(session) == "name=Ada count=3"
    assert session.tracker.pending is None


async def test_s14_langgraph_legacy_cancel_only_dismisses(langgraph: str):
    session, bodies = open_session(langgraph + "/legacy/approval")
    await interrupted(session, "delete my files")
    decision = session.tracker.cancel()
    assert decision.kind == "dismiss"
    assert await drain(session.submit(decision)) == []
    assert len(bodies) == 1  # nothing was sent
    assert session.tracker.pending is None

    # the graph still waits: a new message on the thread re-raises the same interrupt (producer behaviour)
    events = await interrupted(session, "what was that?")
    assert types(events) == ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]
    assert session.tracker.pending.kind == "legacy"
    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    assert last_assistant_text(session) == "approved: True"


async def test_s15_langgraph_legacy_multi_cannot_be_addressed(langgraph: str):
    """Two interrupts on the legacy channel: one forwardedProps value cannot answer both; langgraph fails the run."""
    session, _ = open_session(langgraph + "/legacy/multi")
    first = await interrupted(session, "send the reports")
    first_run = session.last_run_id
    assert sum(e.type == EventType.CUSTOM for e in first) == 2
    assert session.tracker.pending.event["value"]["message"] == "Send the report to Grace?"  # S1: the last wins

    events = await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert "multiple pending interrupts" in session.error
    assert session.transcript.status == "error"
    pending = session.tracker.pending  # S15: offered again, still owed to the agent
    assert pending is not None and pending.kind == "legacy" and pending.run_id == first_run


# --- pydantic-ai (/) -------------------------------------------------------------------------------------------


def _answer(session: AgentSession, answer: str):
    if answer == "approve":
        return session.tracker.resolve(APPROVE)
    if answer == "deny":
        return session.tracker.resolve(REJECT)
    if answer == "edit":
        return session.tracker.resolve({"approved": True, "editedArgs": {"path": "/tmp/other", "count": 1}})
    return session.tracker.cancel()


PYDANTIC_FLOWS = {
    "approve": ("deleted 3 files in /tmp/demo", False),
    "deny": ("The tool call was denied.", True),
    "edit": ("deleted 1 files in /tmp/other", False),
    "cancel": ("Cancelled by user.", True),
}


@pytest.mark.parametrize("answer", list(PYDANTIC_FLOWS))
async def test_s12_pydantic_ai_tool_call_interrupt(pydantic_ai: str, answer: str):
    result, denied = PYDANTIC_FLOWS[answer]
    session, bodies = open_session(pydantic_ai + "/")
    await interrupted(session, "delete my files")
    first_run = session.last_run_id
    pending = session.tracker.pending
    [interrupt] = pending.interrupts
    assert pending.kind == "standard" and interrupt.reason == "tool_call"
    call_id = interrupt.tool_call_id
    assert interrupt.id == f"int-{call_id}"
    assert {"approved", "editedArgs"} <= set(interrupt.response_schema["properties"])
    call = session.transcript.tool_calls[call_id]
    assert call.name == "delete_files" and call.args == DELETE_ARGS
    assert call.status == "awaiting_approval"

    decision = _answer(session, answer)
    assert decision.kind == "resume"
    events = await drain(session.submit(decision))
    assert_clean(session)

    # S12: full history including the assistant message with its toolCalls, rebuilt from TOOL_CALL_*
    body = bodies[-1]
    assert body["parentRunId"] == first_run and body["protocolVersion"] == "1.0"
    assert body["state"] == {} and body["tools"] == [] and body["context"] == [] and body["forwardedProps"] == {}
    user, assistant = body["messages"]
    assert (user["role"], user["content"]) == ("user", "delete my files")
    assert assistant["role"] == "assistant" and assistant["id"] == call.parent_message_id
    [tool_call] = assistant["toolCalls"]
    assert (tool_call["id"], tool_call["type"], tool_call["function"]["name"]) == (call_id, "function", "delete_files")
    assert json.loads(tool_call["function"]["arguments"]) == DELETE_ARGS
    [entry] = body["resume"]
    assert entry["interruptId"] == interrupt.id
    assert entry["status"] == ("cancelled" if answer == "cancel" else "resolved")

    # the result arrives for the original call (no TOOL_CALL_START again), then the model's text
    assert "TOOL_CALL_START" not in types(events)
    assert types(events)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert "TEXT_MESSAGE_CONTENT" in types(events)
    assert call.status == "complete" and call.result == result
    assert last_assistant_text(session) == f"Tool said: {result}"
    assert session.tracker.pending is None
    roles = [(m.role, m.tool_call_id) for m in session.transcript.messages if m.content or m.tool_call_ids]
    assert roles == [("user", None), ("assistant", None), ("tool", call_id), ("assistant", None)]
    tool_message = session.transcript.messages[2]
    assert (tool_message.encrypted_value is not None) == denied  # pydantic-ai marks a denial for the next turn

    # a plain follow-up on the same thread carries the whole history (tool result included) and works
    await drain(session.send("hello"))
    assert_clean(session)
    assert last_assistant_text(session) == HELLO
    assert session.tracker.pending is None and call.status == "complete"
    follow_up = bodies[-1]
    assert "resume" not in follow_up and "parentRunId" not in follow_up
    assert [m["role"] for m in follow_up["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert follow_up["messages"][2]["toolCallId"] == call_id


async def test_s07_pydantic_ai_multi_two_tool_calls_one_resume(pydantic_ai: str):
    session, bodies = open_session(pydantic_ai + "/")
    await interrupted(session, "multi please")
    first, second = session.tracker.pending.interrupts
    assert [first.tool_call_id, second.tool_call_id] == ["call_1_1", "call_1_2"]
    calls = session.transcript.tool_calls
    assert {c.status for c in calls.values()} == {"awaiting_approval"}

    assert session.tracker.cancel(second.id).kind == "waiting"
    decision = session.tracker.resolve(APPROVE, first.id)
    assert decision.kind == "resume"
    await drain(session.submit(decision))
    assert_clean(session)

    assert len(bodies) == 2
    assert bodies[-1]["resume"] == [
        {"interruptId": first.id, "status": "resolved", "payload": APPROVE},
        {"interruptId": second.id, "status": "cancelled"},
    ]
    assert [c["id"] for c in bodies[-1]["messages"][1]["toolCalls"]] == ["call_1_1", "call_1_2"]
    assert calls["call_1_1"].status == calls["call_1_2"].status == "complete"
    assert calls["call_1_1"].result == "deleted 3 files in /tmp/demo"
    assert calls["call_1_2"].result == "Cancelled by user."
    text = last_assistant_text(session)
    assert "deleted 3 files in /tmp/demo" in text and "Cancelled by user." in text
    assert session.tracker.pending is None

    await drain(session.send("hello"))
    assert_clean(session)
    assert last_assistant_text(session) == HELLO


async def test_s15_pydantic_ai_bad_payload_then_retry(pydantic_ai: str):
    """RUN_ERROR after RUN_STARTED: the error shows, the interrupt is offered again and a retry resumes it."""
    session, bodies = open_session(pydantic_ai + "/")
    await interrupted(session, "delete my files")
    first_run = session.last_run_id
    [interrupt] = session.tracker.pending.interrupts

    events = await drain(session.submit(session.tracker.resolve({"approved": "yes"})))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert "responseSchema" in session.error
    pending = session.tracker.pending
    assert pending is not None and pending.ids == [interrupt.id] and pending.run_id == first_run
    assert session.transcript.tool_calls[interrupt.tool_call_id].status == "awaiting_approval"

    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    assert bodies[-1]["parentRunId"] == first_run
    assert session.transcript.tool_calls[interrupt.tool_call_id].status == "complete"
    assert last_assistant_text(session) == "Tool said: deleted 3 files in /tmp/demo"


async def test_pydantic_ai_plain_message(pydantic_ai: str):
    session, _ = open_session(pydantic_ai + "/")
    events = await drain(session.send("hello there"))
    assert_clean(session)
    assert session.tracker.pending is None and session.transcript.tool_calls == {}
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                             "RUN_FINISHED"]
    assert last_assistant_text(session) == HELLO
