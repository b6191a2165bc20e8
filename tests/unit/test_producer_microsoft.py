"""Interop: the protocol core (``AgentSession``) against the real Microsoft Agent Framework producer.

``examples/microsoft/server.py`` runs from its own venv (``agent-framework-ag-ui`` pins ``ag-ui-protocol<0.2``)
via ``tests.producers.producer_server``, one server per module, on a real loopback socket: an ``Agent`` whose
chat client is a script, served by ``add_agent_framework_fastapi_endpoint``. Human-in-the-loop styles it
supports, each checked end to end:

- tool approval: ``delete_files`` is ``approval_mode="always_require"``; the run ends with a ``tool_call``
  interrupt (``RUN_FINISHED.outcome``, plus a ``CUSTOM function_approval_request`` the core ignores); approve,
  reject (``{"approved": false}``), approve-with-edits (``editedArgs``, a full replacement, or the schema's flat
  per-argument properties, merged) and cancel resume it. Cancel ends the resumed run at once: the model is not called.
- frontend tools: ``generate_task_steps`` declared in ``RunAgentInput.tools``; the call waits in the chat
  (``tool_waits``), the answer goes back as a ``tool`` message (``respond`` / ``decline``).
- ``/confirm``: the package default ``require_confirmation=True`` adds a ``confirm_changes`` tool call that an
  AG-UI 1.0 client never answers; the interrupt still works.

Every flow checks the request the core built (recorded on the wire by ``producer_session.open_session``), the
agent's follow-up text (which proves the answer arrived), nothing left pending, and a further message on the same
thread.
"""

from __future__ import annotations

import json
import re

import pytest
from ag_ui.core import EventType

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
    assistant_texts,
    drain,
    interrupted,
    last_assistant_text,
    open_session,
    producer_fixture,
    types,
)

pytestmark = pytest.mark.loopback

EDITED = {"path": "/tmp/other", "count": 1}
HELLO = "Hello from Microsoft Agent Framework!"
REJECTED = "Error: Tool call invocation was rejected by user."  # what the framework gives the model on a reject
INTERRUPTING = ["RUN_STARTED", "TEXT_MESSAGE_START", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
                "CUSTOM", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
TEXT_RUN = ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT",
            "RUN_FINISHED"]

microsoft = producer_fixture("microsoft", path="")


async def say_hello_again(session: AgentSession, bodies: list[Body]) -> Body:
    """A further plain message on the same thread works; returns the request it sent."""
    events = await drain(session.send("hello again"))
    assert_clean(session)
    assert types(events) == TEXT_RUN
    assert last_assistant_text(session) == HELLO
    assert session.tracker.pending is None and session.tool_waits == []
    body = bodies[-1]
    assert "resume" not in body and "parentRunId" not in body
    return body


# --- plain text --------------------------------------------------------------------------------------------------


async def test_plain_hello(microsoft: str):
    session, bodies = open_session(microsoft + "/")
    events = await drain(session.send("hello there"))
    assert_clean(session)
    # the text arrives as TEXT_MESSAGE_* and again in MESSAGES_SNAPSHOT (same id); ag-ui-protocol 0.1: no outcome
    assert types(events) == TEXT_RUN
    assert events[-1].outcome is None
    [snapshot] = [e for e in events if e.type == EventType.MESSAGES_SNAPSHOT]
    assert [m.content for m in snapshot.messages] == ["hello there", HELLO]
    assert snapshot.messages[1].id == events[1].message_id
    assert assistant_texts(session) == [HELLO]
    assert session.tracker.pending is None and session.transcript.tool_calls == {}
    body = bodies[0]
    assert body["protocolVersion"] == "1.0" and body["tools"] == [] and body["forwardedProps"] == {}


# --- tool approval (/) -------------------------------------------------------------------------------------------


PAYLOADS = {"approve": APPROVE, "accepted": {"accepted": True}, "reject": REJECT,
            "edit": {"approved": True, "editedArgs": EDITED},
            "flat-edit": {"approved": True, "count": 7}}  # the schema's per-argument properties: a merge
FLOWS = {  # answer: (the tool's result as the chat sees it, whether the run streams TOOL_CALL_RESULT)
    "approve": ("deleted 3 files in /tmp/demo", True),
    "accepted": ("deleted 3 files in /tmp/demo", True),  # the legacy spelling the schema also allows
    "edit": ("deleted 1 files in /tmp/other", True),
    "flat-edit": ("deleted 7 files in /tmp/demo", True),
    "reject": (REJECTED, False),  # the result arrives only in MESSAGES_SNAPSHOT
}


@pytest.mark.parametrize("answer", list(FLOWS))
async def test_tool_approval(microsoft: str, answer: str):
    result, streamed = FLOWS[answer]
    session, bodies = open_session(microsoft + "/")
    first = await interrupted(session, "clean up")
    first_run = session.last_run_id
    assert types(first) == INTERRUPTING  # no confirm_changes call on this route (require_confirmation=False)
    pending = session.tracker.pending
    [interrupt] = pending.interrupts
    assert pending.kind == "standard" and pending.run_id == first_run
    assert interrupt.reason == "tool_call" and interrupt.tool_call_id == "call_1"
    assert re.fullmatch(r"af-call-[0-9a-f]{32}", interrupt.id)
    assert interrupt.message == "Approve running delete_files?"
    schema = interrupt.response_schema
    assert set(schema["properties"]) == {"approved", "accepted", "path", "count", "editedArgs"}
    assert schema["anyOf"] == [{"required": ["approved"]}, {"required": ["accepted"]}]
    assert schema["properties"]["editedArgs"]["required"] == ["path", "count"]
    assert interrupt.metadata["agent_framework"]["function_call"] == {
        "call_id": "call_1", "name": "delete_files", "arguments": DELETE_ARGS}
    # the older channel rides along in the same run; the outcome is what the core follows
    [custom] = [e for e in first if e.type == EventType.CUSTOM]
    assert custom.name == "function_approval_request" and custom.value["id"] == interrupt.id
    call = session.transcript.tool_calls["call_1"]
    assert call.name == "delete_files" and call.args == DELETE_ARGS and call.status == "awaiting_approval"

    decision = session.tracker.resolve(PAYLOADS[answer])
    assert decision.kind == "resume"
    events = await drain(session.submit(decision))
    assert_clean(session)

    # S12: a new run on the thread with parentRunId, the resume list and the history with the assistant's toolCalls
    body = bodies[-1]
    assert body["parentRunId"] == first_run and body["runId"] != first_run and body["protocolVersion"] == "1.0"
    assert body["resume"] == [{"interruptId": interrupt.id, "status": "resolved", "payload": PAYLOADS[answer]}]
    user, assistant = body["messages"]
    assert (user["role"], user["content"]) == ("user", "clean up")
    assert [(c["id"], c["function"]["name"]) for c in assistant["toolCalls"]] == [("call_1", "delete_files")]

    expected_types = TEXT_RUN[:1] + ["TOOL_CALL_RESULT"] * streamed + TEXT_RUN[1:]
    assert types(events) == expected_types
    assert last_assistant_text(session) == f"Tool said: {result}"
    assert call.status == "complete" and call.result == result
    assert call.rejected == (answer == "reject")
    # the resumed run's MESSAGES_SNAPSHOT restores the original arguments, also after an edit
    assert call.args == DELETE_ARGS
    assert session.tracker.pending is None

    follow_up = await say_hello_again(session, bodies)
    assert [m["role"] for m in follow_up["messages"]][-1] == "user"
    assert any(m["role"] == "tool" and m["toolCallId"] == "call_1" and m["content"] == result
               for m in follow_up["messages"])


async def test_tool_approval_cancel_ends_the_run_without_calling_the_model(microsoft: str):
    session, bodies = open_session(microsoft + "/")
    await interrupted(session, "clean up")
    [interrupt] = session.tracker.pending.interrupts
    events = await drain(session.submit(session.tracker.cancel()))
    assert_clean(session)
    assert bodies[-1]["resume"] == [{"interruptId": interrupt.id, "status": "cancelled"}]  # no payload key
    # the framework retires the approval and stops: no tool result, no model call, no text, no outcome
    assert types(events) == ["RUN_STARTED", "RUN_FINISHED"] and events[-1].outcome is None
    assert assistant_texts(session) == []
    call = session.transcript.tool_calls["call_1"]
    assert call.result is None and call.rejected and call.status == "running"
    assert session.tracker.pending is None

    # the next message carries the unanswered call; the framework tells the model it was skipped (not in the stream)
    follow_up = await say_hello_again(session, bodies)
    assert [m["role"] for m in follow_up["messages"]] == ["user", "assistant", "user"]


async def test_tool_approval_bad_payload_then_retry(microsoft: str):
    """A partial ``editedArgs`` fails the resumed run (RUN_ERROR); the interrupt is offered again and a retry works."""
    session, bodies = open_session(microsoft + "/")
    await interrupted(session, "clean up")
    first_run = session.last_run_id
    [interrupt] = session.tracker.pending.interrupts

    events = await drain(session.submit(session.tracker.resolve({"approved": True, "editedArgs": {"path": "/x"}})))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1].code == "APPROVAL_RESUME_INVALID_RESPONSE"
    assert "full replacement" in session.error
    pending = session.tracker.pending
    assert pending is not None and pending.ids == [interrupt.id] and pending.run_id == first_run

    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    assert bodies[-1]["parentRunId"] == first_run
    assert last_assistant_text(session) == "Tool said: deleted 3 files in /tmp/demo"
    assert session.tracker.pending is None


async def test_tool_result_keeps_its_snapshot_position(microsoft: str):
    session, _ = open_session(microsoft + "/")
    await interrupted(session, "clean up")
    events = await drain(session.submit(session.tracker.resolve(APPROVE)))
    [snapshot] = [e for e in events if e.type == EventType.MESSAGES_SNAPSHOT]
    assert [m.role for m in snapshot.messages] == ["user", "assistant", "tool", "assistant"]
    assert [m.role for m in session.transcript.messages] == [m.role for m in snapshot.messages]


# --- the package default: require_confirmation=True (/confirm) ---------------------------------------------------


@pytest.mark.parametrize("declared", [False, True])
async def test_confirm_changes_call_rides_along(microsoft: str, declared: bool):
    session, bodies = open_session(microsoft + "/confirm", [STEPS] if declared else None)
    first = await interrupted(session, "clean up")
    assert types(first) == [*INTERRUPTING[:6], "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
                            *INTERRUPTING[6:]]
    [interrupt] = session.tracker.pending.interrupts
    assert interrupt.tool_call_id == "call_1"
    [confirm] = [c for c in session.transcript.tool_calls.values() if c.name == "confirm_changes"]
    assert confirm.args["function_call_id"] == "call_1" and confirm.args["function_arguments"] == DELETE_ARGS
    assert session.tool_waits == []
    if declared:  # S29: an undeclared tool called while the chat declares tools gets an error result
        assert "not available in this chat" in json.loads(confirm.result)["error"]
    else:  # S26: no declared tools, the call is left alone: it never gets a result
        assert confirm.result is None and confirm.status == "running"

    await drain(session.submit(session.tracker.resolve(APPROVE)))
    assert_clean(session)
    tool_messages = [m for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert [m["toolCallId"] for m in tool_messages] == ([confirm.id] if declared else [])  # the producer minds not
    assert last_assistant_text(session) == "Tool said: deleted 3 files in /tmp/demo"
    assert session.transcript.tool_calls["call_1"].status == "complete"
    assert session.tracker.pending is None
    await say_hello_again(session, bodies)


# --- frontend tool (generate_task_steps) -------------------------------------------------------------------------


async def steps_waiting(session: AgentSession, bodies: list[Body]) -> str:
    events = await drain(session.send("steps please"))
    assert_clean(session)
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TOOL_CALL_START", "TOOL_CALL_ARGS",
                             "TOOL_CALL_END", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert events[-1].outcome is None and session.tracker.pending is None  # no interrupt: the chat answers
    [wait] = session.tool_waits
    assert (wait.tool_call_id, wait.name, wait.args) == ("call_1", "generate_task_steps", PLAN)
    assert session.transcript.tool_calls["call_1"].status == "awaiting_approval"
    body = bodies[0]
    assert body["tools"] == [{"name": STEPS.name, "description": STEPS.description, "parameters": STEPS.parameters}]
    return wait.tool_call_id


@pytest.mark.parametrize("answer", ["respond", "decline"])
async def test_frontend_tool_steps(microsoft: str, answer: str):
    session, bodies = open_session(microsoft + "/", [STEPS])
    call_id = await steps_waiting(session, bodies)
    if answer == "respond":
        events = await drain(session.respond(call_id, CHOSEN))
        content = json.dumps(CHOSEN)
        expected = "Running 2 of 3 steps: Back up the files, Email the team."
    else:
        events = await drain(session.decline(call_id))
        content = json.dumps(DECLINED)
        expected = f"Tool said: {content}"
    assert_clean(session)
    assert types(events) == TEXT_RUN
    body = bodies[-1]
    assert "resume" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool"]
    assert body["messages"][2] == {"id": f"result-{call_id}", "role": "tool", "toolCallId": call_id,
                                   "content": content}
    assert last_assistant_text(session) == expected
    assert session.tool_waits == [] and session.transcript.tool_calls[call_id].status == "complete"
    # the client's own tool message keeps its id and place: the snapshot agrees with the transcript
    assert [m.role for m in session.transcript.messages] == ["user", "assistant", "tool", "assistant"]

    await say_hello_again(session, bodies)


async def test_steps_without_the_tool_declared(microsoft: str):
    session, _ = open_session(microsoft + "/")
    await drain(session.send("steps please"))
    assert_clean(session)
    assert session.tool_waits == [] and session.transcript.tool_calls == {}
    assert assistant_texts(session) == ["The chat did not declare the generate_task_steps tool."]
