"""Interop: the protocol core (``AgentSession``) against the real Google ADK producer over a loopback socket.

``examples/adk/server.py`` (``ag-ui-adk`` + ``google-adk`` with a scripted ``BaseLlm``) runs from its own venv
(``tests.producers.producer_server("adk")``). Every session here talks to it through
``producer_session.open_session`` (the production wire, keeping each request body), so a test checks both what the
core sent and what came back.

Human-in-the-loop styles ADK has, and what is covered:

- tool confirmation (``FunctionTool(require_confirmation=True)``): ADK adds a synthetic ``adk_request_confirmation``
  call; ag-ui-adk (``emit_interrupt_outcome=True``) ends the run with a ``confirmation`` interrupt whose id and
  ``toolCallId`` are that synthetic call's id. Approve, reject, cancel, the ``ToolConfirmation`` spelling, an edit
  (not supported: ignored), a payload ADK refuses, and a new message while the interrupt is open;
- client frontend tools (``RunAgentInput.tools`` + ``AGUIToolset``): respond, decline, a plain-text result, and a
  confirmation on a chat that also declares a frontend tool.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core import BaseEvent, EventType

from tests.unit.producer_session import (
    CHOSEN,
    DELETE_ARGS,
    PLAN,
    STEPS,
    RecordedSession,
    assert_clean,
    drain,
    last_assistant_text,
    open_session,
    producer_fixture,
    types,
)

pytestmark = pytest.mark.loopback

HELLO = "Hello from Google ADK!"
HINT = ("Please approve or reject the tool call delete_files() by responding with a FunctionResponse with an"
        " expected ToolConfirmation payload.")  # ADK's own text for require_confirmation=True
DELETED = '{"result": "deleted 3 files in /tmp/demo"}'  # ADK wraps the tool's str return value
REJECTED = '{"error": "This tool call is rejected."}'  # ADK's result for a call that was not confirmed

INTERRUPTED = ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",  # delete_files
               "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"]  # adk_request_confirmation
TEXT_RUN = ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STATE_SNAPSHOT",
            "RUN_FINISHED"]
RESUMED = ["RUN_STARTED", "TOOL_CALL_RESULT", *TEXT_RUN[1:]]

adk = producer_fixture("adk")


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def confirmation(c: RecordedSession, text: str = "clean up") -> tuple[list[BaseEvent], str, str]:
    """Send ``text``; check the confirmation interrupt. Returns the events, the interrupt id, delete_files' id."""
    events = await drain(c.session.send(text))
    assert_clean(c.session)
    assert types(events) == INTERRUPTED
    pending = c.session.tracker.pending
    assert pending is not None and pending.kind == "standard" and pending.run_id == c.session.last_run_id
    [interrupt] = pending.interrupts
    assert interrupt.reason == "confirmation"
    assert interrupt.id.startswith("adk-") and interrupt.tool_call_id == interrupt.id  # the synthetic call's id
    assert interrupt.response_schema is None and interrupt.message == HINT
    original = interrupt.metadata["adk"]["originalFunctionCall"]
    assert (original["name"], original["args"]) == ("delete_files", DELETE_ARGS)
    assert interrupt.metadata["adk"]["toolConfirmation"] == {"hint": HINT, "confirmed": False}

    calls = c.session.transcript.tool_calls
    assert list(calls) == [original["id"], interrupt.id]
    delete, confirm = calls[original["id"]], calls[interrupt.id]
    assert (delete.name, delete.args) == ("delete_files", DELETE_ARGS)
    assert confirm.name == "adk_request_confirmation" and confirm.args["originalFunctionCall"] == original
    assert confirm.status == "awaiting_approval"
    # no result until the resumed run (the interrupt names the other call), on a chat with frontend tools too
    assert delete.status == "running"
    assert events[-1].outcome.type == "interrupt"
    return events, interrupt.id, original["id"]


# --- plain text ----------------------------------------------------------------------------------------------


async def test_plain_hello(adk: str):
    c = open_session(adk)
    events = await drain(c.session.send("Hello there"))
    assert_clean(c.session)
    assert types(events) == TEXT_RUN  # streamed as TEXT_MESSAGE_*; no MESSAGES_SNAPSHOT
    assert events[-1].outcome is None and c.session.tracker.pending is None
    assert last_assistant_text(c.session) == HELLO
    assert c.session.transcript.tool_calls == {}
    body = c.last_body
    assert body["protocolVersion"] == "1.0" and body["tools"] == [] and "resume" not in body
    assert [(m["role"], m["content"]) for m in body["messages"]] == [("user", "Hello there")]


# --- tool confirmation ---------------------------------------------------------------------------------------

CONFIRMED = "Tool said: deleted 3 files in /tmp/demo"
DENIED = f"Tool said: {REJECTED}"
CONFIRMATION_FLOWS = {  # answer → (resume entry status, payload, the tool result, the follow-up, marked rejected)
    "approve": ("resolved", {"approved": True}, DELETED, CONFIRMED, False),
    "confirm": ("resolved", {"confirmed": True}, DELETED, CONFIRMED, False),  # ADK's ToolConfirmation as is
    "reject": ("resolved", {"approved": False}, REJECTED, DENIED, True),
    "unconfirm": ("resolved", {"confirmed": False}, REJECTED, DENIED, False),  # the core knows only "approved"
    "cancel": ("cancelled", None, REJECTED, DENIED, True),  # ag-ui-adk sends ADK {"confirmed": false}
}


@pytest.mark.parametrize("answer", list(CONFIRMATION_FLOWS))
async def test_confirmation_interrupt(adk: str, answer: str):
    status, payload, result, follow_up, rejected = CONFIRMATION_FLOWS[answer]
    c = open_session(adk)
    _, interrupt_id, call_id = await confirmation(c)
    first_run = c.session.last_run_id

    decision = c.session.tracker.cancel() if answer == "cancel" else c.session.tracker.resolve(payload)
    assert decision.kind == "resume"
    events = await drain(c.session.submit(decision))
    assert_clean(c.session)

    # what the core sent: one resume entry for the interrupt, the history with both calls, no tool message
    body = c.last_body
    assert len(c.bodies) == 2
    assert body["parentRunId"] == first_run and body["runId"] != first_run
    entry = {"interruptId": interrupt_id, "status": status}
    if payload is not None:
        entry["payload"] = payload
    assert body["resume"] == [entry]
    user, assistant = body["messages"]
    assert (user["role"], user["content"]) == ("user", "clean up")
    assert [t["id"] for t in assistant["toolCalls"]] == [call_id, interrupt_id]

    # the result comes for the original call (not the interrupt's), then the scripted model's text
    assert types(events) == RESUMED
    assert events[1].tool_call_id == call_id and events[1].content == result
    assert events[-1].outcome is None  # no outcome on the resumed run (= success)
    assert last_assistant_text(c.session) == follow_up
    assert c.session.tracker.pending is None
    calls = c.session.transcript.tool_calls
    assert calls[call_id].status == "complete" and calls[call_id].result == result
    assert calls[interrupt_id].status == "running"  # the synthetic call never gets a result of its own
    assert calls[interrupt_id].rejected is rejected  # the core marks the call the interrupt names

    # a further plain message on the same thread: the whole history and ADK's last state go back, and it works
    snapshot = next(e.snapshot for e in reversed(events) if e.type == EventType.STATE_SNAPSHOT)
    events = await drain(c.session.send("hello again"))
    assert_clean(c.session)
    assert types(events) == TEXT_RUN and last_assistant_text(c.session) == HELLO
    later = c.last_body
    assert "resume" not in later and "parentRunId" not in later
    assert [m["role"] for m in later["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert later["messages"][2]["toolCallId"] == call_id and later["state"] == snapshot


async def test_confirmation_edit_is_not_supported(adk: str):
    """No ``responseSchema`` offers ``editedArgs``; sent anyway, it is ToolConfirmation.payload, which ADK ignores."""
    edited = {"path": "/tmp/other", "count": 1}
    c = open_session(adk)
    _, interrupt_id, call_id = await confirmation(c)
    await drain(c.session.submit(c.session.tracker.resolve({"approved": True, "editedArgs": edited})))
    assert_clean(c.session)
    assert c.last_body["resume"][0]["payload"] == {"approved": True, "editedArgs": edited}
    assert last_assistant_text(c.session) == CONFIRMED  # the original arguments
    calls = c.session.transcript.tool_calls
    assert calls[call_id].args == DELETE_ARGS
    # the core puts editedArgs on the call the interrupt names: here ADK's synthetic confirmation call
    assert calls[interrupt_id].args == edited


async def test_confirmation_payload_adk_refuses_then_retry(adk: str):
    """ToolConfirmation forbids extra keys: RUN_ERROR after RUN_STARTED, and the interrupt is offered again (S15).

    The retry is a producer bug: ag-ui-adk already recorded its synthetic answer (message id ``resume-<id>``) in the
    failed run, so the same answer again is a no-op: an empty run, the tool never runs, and the thread moves on.
    """
    c = open_session(adk)
    _, interrupt_id, call_id = await confirmation(c)
    first_run = c.session.last_run_id
    events = await drain(c.session.submit(c.session.tracker.resolve({"confirmed": True, "note": "x"})))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[1].code == "BACKGROUND_EXECUTION_ERROR" and "Extra inputs are not permitted" in events[1].message
    assert c.session.transcript.status == "error" and "ToolConfirmation" in c.session.error
    pending = c.session.tracker.pending
    assert pending is not None and pending.ids == [interrupt_id] and pending.run_id == first_run

    events = await drain(c.session.submit(c.session.tracker.resolve({"confirmed": True})))
    assert_clean(c.session)
    assert c.last_body["parentRunId"] == first_run
    assert types(events) == ["RUN_STARTED", "RUN_FINISHED"]  # the answer is swallowed
    assert c.session.tracker.pending is None and c.session.transcript.tool_calls[call_id].result is None

    await drain(c.session.send("hello"))
    assert_clean(c.session)
    assert last_assistant_text(c.session) == HELLO


async def test_new_message_while_interrupted_is_refused(adk: str):
    """ag-ui-adk enforces coverage: a run without ``resume`` on a thread with an open interrupt is one RUN_ERROR."""
    c = open_session(adk)
    _, interrupt_id, _ = await confirmation(c)
    events = await drain(c.session.send("hello"))
    assert types(events) == ["RUN_ERROR"]  # no RUN_STARTED
    assert events[0].code == "INTERRUPT_RESUME_REQUIRED" and interrupt_id in events[0].message
    assert c.session.transcript.status == "error" and "INTERRUPT_RESUME_REQUIRED" in c.session.error
    assert "resume" not in c.last_body


async def test_interrupt_still_owed_after_a_refused_new_message(adk: str):
    c = open_session(adk)
    _, interrupt_id, _ = await confirmation(c)
    await drain(c.session.send("hello"))
    pending = c.session.tracker.pending
    assert pending is not None and pending.ids == [interrupt_id]


# --- frontend tools ------------------------------------------------------------------------------------------


async def steps_call(c: RecordedSession) -> str:
    events = await drain(c.session.send("Steps for cleaning up, please"))
    assert_clean(c.session)
    assert types(events) == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"]
    assert events[-1].outcome is None and c.session.tracker.pending is None  # a frontend call is no interrupt
    assert [t["name"] for t in c.last_body["tools"]] == ["generate_task_steps"]
    [wait] = c.session.tool_waits
    assert wait.name == "generate_task_steps" and wait.args == PLAN and wait.tool_call_id.startswith("adk-")
    assert c.session.transcript.tool_calls[wait.tool_call_id].status == "awaiting_approval"
    return wait.tool_call_id


@pytest.mark.parametrize(("result", "expected"), [
    (CHOSEN, "Running 2 of 3 steps: Back up the files, Email the team."),
    ("not today", "Tool said: not today"),  # ag-ui-adk wraps a non-JSON result; the model unwraps it
])
async def test_frontend_tool_respond(adk: str, result: Any, expected: str):
    c = open_session(adk, [STEPS])
    call_id = await steps_call(c)
    events = await drain(c.session.respond(call_id, result))
    assert_clean(c.session)
    assert types(events) == TEXT_RUN
    sent = c.last_body
    assert "resume" not in sent and "parentRunId" not in sent
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "tool"]
    [tool] = tool_messages(sent)
    assert tool["toolCallId"] == call_id
    assert tool["content"] == (result if isinstance(result, str) else json.dumps(result))
    assert last_assistant_text(c.session) == expected
    assert c.session.tool_waits == [] and c.session.transcript.tool_calls[call_id].status == "complete"

    await drain(c.session.send("hello"))
    assert_clean(c.session)
    assert last_assistant_text(c.session) == HELLO


async def test_frontend_tool_decline(adk: str):
    c = open_session(adk, [STEPS])
    call_id = await steps_call(c)
    await drain(c.session.decline(call_id))
    assert_clean(c.session)
    [tool] = tool_messages(c.last_body)
    assert tool["toolCallId"] == call_id and json.loads(tool["content"])["cancelled"] is True
    assert last_assistant_text(c.session) == f"Tool said: {tool['content']}"
    await drain(c.session.send("hello"))
    assert_clean(c.session)
    assert last_assistant_text(c.session) == HELLO


async def test_confirmation_on_a_chat_with_frontend_tools(adk: str):
    """The confirmed call is held behind ADK's own confirmation call: on a chat with frontend tools it neither
    waits nor gets an error result (S29); the approval runs it and its one result is the tool's."""
    c = open_session(adk, [STEPS])
    _, interrupt_id, call_id = await confirmation(c)
    assert c.session.tool_waits == []
    assert c.session.transcript.tool_calls[call_id].result is None
    await drain(c.session.submit(c.session.tracker.resolve({"approved": True})))
    assert_clean(c.session)
    body = c.last_body
    assert body["resume"] == [{"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}]
    assert tool_messages(body) == []
    assert last_assistant_text(c.session) == CONFIRMED
    assert c.session.transcript.tool_calls[call_id].result == DELETED
