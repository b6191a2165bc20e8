"""Interop: the protocol core (``AgentSession``) against the real Strands producer (``ag-ui-strands``).

``examples/strands/server.py`` runs from its own venv (``tests.producers.producer_server``, one server per
module) on a real loopback socket: a Strands ``Agent`` whose model is a script, served by
``add_strands_fastapi_endpoint``. Human-in-the-loop styles it supports, each checked end to end:

- tool approval: ``delete_files`` is gated by ``ToolBehavior(interrupt_on_call=True)``; the run ends with a
  ``tool_call`` interrupt; approve, deny (``{"approved": false}``) and cancel resume it. There is no
  approve-with-edits: ``editedArgs`` is ignored (the tool runs with the original arguments).
- frontend tools: ``generate_task_steps`` declared in ``RunAgentInput.tools``; the call waits in the chat
  (``tool_waits``), the answer goes back as a ``tool`` message (``respond`` / ``decline``).

Every flow checks the request the core built (recorded on the wire by ``producer_session.open_session``), the
agent's follow-up text (which proves the answer arrived), nothing left pending, and a further message on the
same thread.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from ag_ui.core import BaseEvent, EventType

from interrupt_chat.agui import AgentSession
from interrupt_chat.agui.session import DECLINED
from tests.unit.producer_session import (
    APPROVE,
    CHOSEN,
    DELETE_ARGS,
    PLAN,
    REJECT,
    STEPS,
    Body,
    assert_clean,
    drain,
    last_assistant_text,
    open_session,
    producer_fixture,
    types,
)

pytestmark = pytest.mark.loopback

HELLO = "Hello from Strands Agents!"
DENIED = "User denied approval for 'delete_files'."  # what Strands gives the model for a denied or cancelled call
APPROVAL_SCHEMA = {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}
ALL_STEPS = "Running 3 of 3 steps: Back up the files, Delete the temp folder, Email the team."

strands = producer_fixture("strands")


def messages_snapshot(events: list[BaseEvent]) -> list[dict[str, Any]]:
    """The last MESSAGES_SNAPSHOT of a run, as wire dicts."""
    [*_, snapshot] = [e for e in events if e.type == EventType.MESSAGES_SNAPSHOT]
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in snapshot.messages]


INTERRUPTING_RUN = ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "TOOL_CALL_START", "TOOL_CALL_ARGS",
                    "TOOL_CALL_END", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]
TEXT_RUN = ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]


async def test_strands_plain_message(strands: str):
    session, bodies = open_session(strands)
    events = await drain(session.send("hello there"))
    assert_clean(session)
    assert types(events) == TEXT_RUN  # the text comes as TEXT_MESSAGE_* and again in MESSAGES_SNAPSHOT
    assert events[0].protocol_version == "1.0" and events[-1].outcome.type == "success"
    assert session.tracker.pending is None and session.transcript.tool_calls == {}
    assert [(m.role, m.content) for m in session.transcript.messages] == [("user", "hello there"), ("assistant", HELLO)]
    [body] = bodies
    assert body["protocolVersion"] == "1.0" and body["tools"] == [] and "resume" not in body


async def approval_interrupt(session: AgentSession, text: str = "clean up") -> Any:
    """Send ``text``; the run must end with one ``tool_call`` interrupt for ``delete_files``."""
    events = await drain(session.send(text))
    assert_clean(session)
    assert types(events) == INTERRUPTING_RUN
    pending = session.tracker.pending
    assert pending is not None and pending.kind == "standard" and pending.run_id == session.last_run_id
    [interrupt] = pending.interrupts
    assert interrupt.reason == "tool_call"
    assert interrupt.message == "Approve call to delete_files?"
    assert interrupt.response_schema == APPROVAL_SCHEMA  # no editedArgs: no edit UI
    call_id = interrupt.tool_call_id
    assert call_id and re.fullmatch(rf"v1:before_tool_call:{re.escape(call_id)}:[0-9a-f-]{{36}}", interrupt.id)
    assert interrupt.metadata == {"tool_name": "delete_files", "tool_input": DELETE_ARGS,
                                  "strandsName": "ag_ui:tool_call:delete_files"}
    call = session.transcript.tool_calls[call_id]
    assert call.name == "delete_files" and call.args == DELETE_ARGS and call.status == "awaiting_approval"
    # the adapter's own snapshot carries the assistant message with the call; the core merged it by id
    assert messages_snapshot(events)[-1]["id"] == call.parent_message_id
    return interrupt


def decide(session: AgentSession, answer: str):
    if answer == "approve":
        return session.tracker.resolve(APPROVE)
    if answer == "deny":
        return session.tracker.resolve(REJECT)
    if answer == "edit":  # not advertised by the schema; Strands ignores the edit
        return session.tracker.resolve({"approved": True, "editedArgs": {"path": "/tmp/other", "count": 1}})
    return session.tracker.cancel()


APPROVAL_FLOWS = {
    # answer: (the tool result the model got, the RAW tool_cancel_event Strands sends for a call that did not run)
    "approve": ("deleted 3 files in /tmp/demo", False),
    "deny": (DENIED, True),
    "cancel": (DENIED, True),
    "edit": ("deleted 3 files in /tmp/demo", False),  # editedArgs ignored: the original arguments ran
}


@pytest.mark.parametrize("answer", list(APPROVAL_FLOWS))
async def test_strands_tool_approval(strands: str, answer: str):
    result, cancelled = APPROVAL_FLOWS[answer]
    session, bodies = open_session(strands)
    interrupt = await approval_interrupt(session)
    first_run, call_id = session.last_run_id, interrupt.tool_call_id
    call = session.transcript.tool_calls[call_id]

    decision = decide(session, answer)
    assert decision.kind == "resume"
    events = await drain(session.submit(decision))
    assert_clean(session)

    # the resume: a new run on the thread, parentRunId, the history with the assistant's toolCalls, one entry
    body = bodies[-1]
    assert len(bodies) == 2 and body["threadId"] == session.thread_id
    assert body["parentRunId"] == first_run and body["runId"] != first_run and body["protocolVersion"] == "1.0"
    assert body["state"] == {}  # the last STATE_SNAPSHOT, carried across the gap
    user, assistant = body["messages"]
    assert (user["role"], user["content"]) == ("user", "clean up")
    assert assistant["id"] == call.parent_message_id
    [tool_call] = assistant["toolCalls"]
    assert tool_call["id"] == call_id and json.loads(tool_call["function"]["arguments"]) == DELETE_ARGS
    entry = {"interruptId": interrupt.id, "status": "cancelled"} if answer == "cancel" else {
        "interruptId": interrupt.id, "status": "resolved", "payload": decision.resume[0].payload}
    assert body["resume"] == [entry]

    # the resumed run: the result for the original call (no TOOL_CALL_START again), then the model's text
    expected = ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "TOOL_CALL_RESULT", "MESSAGES_SNAPSHOT",
                "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT",
                "STATE_SNAPSHOT", "RUN_FINISHED"]
    if cancelled:
        expected.insert(3, "RAW")  # {"tool_cancel_event": {...}}, source "strands"
    assert types(events) == expected
    assert events[-1].outcome.type == "success"
    [tool_result] = [e for e in events if e.type == EventType.TOOL_CALL_RESULT]
    assert tool_result.tool_call_id == call_id and tool_result.role is None
    assert tool_result.content == json.dumps(result)  # Strands JSON-encodes the result text
    assert call.status == "complete" and call.result == json.dumps(result)
    assert call.args == DELETE_ARGS  # after an edit too: the resumed run's MESSAGES_SNAPSHOT has the arguments that ran
    assert last_assistant_text(session) == f"Tool said: {result}"  # the model got the answer
    assert session.tracker.pending is None
    assert [m.role for m in session.transcript.messages] == ["user", "assistant", "tool", "assistant"]

    # a plain message on the same thread carries the whole history and works
    await drain(session.send("hello again"))
    assert_clean(session)
    assert last_assistant_text(session) == HELLO
    follow_up = bodies[-1]
    assert "resume" not in follow_up and "parentRunId" not in follow_up
    assert [m["role"] for m in follow_up["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert follow_up["messages"][2]["toolCallId"] == call_id

    # and another approval on it gets a fresh call and interrupt id
    again = await approval_interrupt(session, "clean up again")
    assert again.tool_call_id != call_id and again.id != interrupt.id
    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    assert last_assistant_text(session) == "Tool said: deleted 3 files in /tmp/demo"
    assert session.tracker.pending is None


async def test_strands_bad_payload_then_retry(strands: str):
    """A payload that breaks the schema: RUN_ERROR INVALID_PAYLOAD; the interrupt is offered again; a retry works."""
    session, bodies = open_session(strands)
    interrupt = await approval_interrupt(session)
    first_run = session.last_run_id

    events = await drain(session.submit(session.tracker.resolve({"approved": "yes"})))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1].code == "INVALID_PAYLOAD"
    assert session.error and "approved" in session.error
    pending = session.tracker.pending
    assert pending is not None and pending.ids == [interrupt.id] and pending.run_id == first_run
    assert session.transcript.tool_calls[interrupt.tool_call_id].status == "awaiting_approval"

    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    assert bodies[-1]["parentRunId"] == first_run
    assert last_assistant_text(session) == "Tool said: deleted 3 files in /tmp/demo"
    assert session.tracker.pending is None


async def test_strands_new_message_while_interrupted_is_refused(strands: str):
    """Strands refuses fresh input on a thread with an open interrupt; the interrupt stays answerable."""
    session, bodies = open_session(strands)
    interrupt = await approval_interrupt(session)
    first_run = session.last_run_id

    events = await drain(session.send("never mind"))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1].code == "PENDING_INTERRUPTS"
    assert session.error and "pending interrupts" in session.error
    assert session.tracker.pending is not None and session.tracker.pending.ids == [interrupt.id]

    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    body = bodies[-1]
    assert body["parentRunId"] == first_run and body["resume"][0]["interruptId"] == interrupt.id
    assert [m["content"] for m in body["messages"] if m["role"] == "user"] == ["clean up", "never mind"]
    assert last_assistant_text(session) == "Tool said: deleted 3 files in /tmp/demo"
    assert session.tracker.pending is None


async def steps_call(session: AgentSession, bodies: list[Body]) -> str:
    """Send ``steps …``; the run must end with a waiting call to the frontend tool (not an interrupt)."""
    events = await drain(session.send("steps for the cleanup"))
    assert_clean(session)
    assert types(events) == INTERRUPTING_RUN
    assert events[-1].outcome.type == "success"  # a frontend tool call is not an interrupt for Strands
    assert session.tracker.pending is None
    assert bodies[-1]["tools"] == [{"name": STEPS.name, "description": STEPS.description,
                                           "parameters": STEPS.parameters}]
    [wait] = session.tool_waits
    assert wait.name == STEPS.name and wait.args == PLAN
    assert session.transcript.tool_calls[wait.tool_call_id].status == "awaiting_approval"
    return wait.tool_call_id


@pytest.mark.parametrize(("answer", "expected"), [
    (CHOSEN, "Running 2 of 3 steps: Back up the files, Email the team."),
    (PLAN, ALL_STEPS),
    ("not now", "Tool said: not now"),
])
async def test_strands_frontend_tool_respond(strands: str, answer: Any, expected: str):
    session, bodies = open_session(strands, tools=[STEPS])
    call_id = await steps_call(session, bodies)

    events = await drain(session.respond(call_id, answer))
    assert_clean(session)
    body = bodies[-1]
    assert len(bodies) == 2 and "resume" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool"]
    tool_message = body["messages"][2]
    content = answer if isinstance(answer, str) else json.dumps(answer)
    assert (tool_message["toolCallId"], tool_message["content"]) == (call_id, content)
    # no TOOL_CALL_RESULT: the client's own tool message is echoed in MESSAGES_SNAPSHOT, then the model answers
    assert types(events) == TEXT_RUN
    assert messages_snapshot(events)[2] == tool_message
    assert last_assistant_text(session) == expected
    assert session.tool_waits == [] and session.transcript.tool_calls[call_id].status == "complete"
    assert [m.role for m in session.transcript.messages] == ["user", "assistant", "tool", "assistant"]

    await drain(session.send("hello"))
    assert_clean(session)
    assert last_assistant_text(session) == HELLO
    assert session.tool_waits == []


async def test_strands_frontend_tool_decline(strands: str):
    session, bodies = open_session(strands, tools=[STEPS])
    call_id = await steps_call(session, bodies)

    await drain(session.decline(call_id))
    assert_clean(session)
    [tool_message] = [m for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_message["content"]) == DECLINED
    assert last_assistant_text(session) == f"Tool said: {tool_message['content']}"
    assert session.tool_waits == [] and session.transcript.tool_calls[call_id].status == "complete"

    # the thread goes on: another plan, answered this time
    call_id = await steps_call(session, bodies)
    await drain(session.respond(call_id, PLAN))
    assert_clean(session)
    assert last_assistant_text(session) == ALL_STEPS
