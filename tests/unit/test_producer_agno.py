"""Interop: the protocol core (``AgentSession``) against the real Agno producer (``agno.os.interfaces.agui``).

``examples/agno/server.py`` runs from its own venv (``tests.producers.producer_server``, one server per module)
on a real loopback socket: an Agno ``Agent`` whose model is a script, served by Agno's ``AGUI`` router.

Agno 3.1.10 never raises an AG-UI interrupt: ``RUN_FINISHED`` has no ``outcome`` and ``resume`` is ignored.
Every human-in-the-loop pause is a run that ends with ``TOOL_CALL_START/ARGS/END`` for the paused call and no
result; the next run resumes it when its messages end with the call's ``tool`` message. Styles, end to end:

- frontend tools: ``generate_task_steps`` declared in ``RunAgentInput.tools`` (Agno turns it into an
  ``external_execution`` tool); the call waits in the chat (``tool_waits``); ``respond`` / ``decline`` send the
  answer as a ``tool`` message and the model reads it as is.
- tool confirmation: ``delete_files`` is ``requires_confirmation=True``; the paused call looks like a frontend
  tool call (plus Agno's text "I have tools to execute, but I need confirmation."). The core answers it only
  when the chat declares a frontend tool of that name (Agno keeps its own tool and skips the duplicate); the
  answer is parsed as JSON: ``{"accepted": true}`` runs the tool, anything else rejects it (``note`` becomes
  the result). There are no edits. A chat that does not declare the tool cannot answer it.

Each flow checks the request the core built (recorded on the wire by ``producer_session.open_session``), the
agent's follow-up text (which proves the answer arrived), nothing left pending, and a further message on the
same thread.
"""

from __future__ import annotations

import json
import re

import pytest
from ag_ui.core import BaseEvent, EventType

from interrupt_chat.agui import AgentSession
from interrupt_chat.agui.frontend_tools import FrontendTool
from interrupt_chat.agui.session import DECLINED
from tests.unit.producer_session import (
    CHOSEN,
    DELETE_ARGS,
    PLAN,
    STEPS,
    Body,
    assert_clean,
    drain,
    last_assistant_text,
    open_session,
    producer_fixture,
)
from tests.unit.producer_session import types as event_types

pytestmark = pytest.mark.loopback

HELLO = "Hello from Agno!"
NEEDS_CONFIRMATION = "I have tools to execute, but I need confirmation."  # Agno's text on a confirmation pause
REJECTED = "Function call was rejected by the user"  # what Agno gives the model for a rejection without a note
DELETED = "deleted 3 files in /tmp/demo"
# the chat's side of Agno's confirmation: a frontend tool named like the backend tool, answered {accepted, note}
CONFIRM = FrontendTool(
    name="delete_files", description="Confirm deleting files.",
    parameters={"type": "object", "required": ["path", "count"],
                "properties": {"path": {"type": "string"}, "count": {"type": "integer"}}})
CALL_ID = re.compile(r"call_[0-9a-f]{12}")  # the scripted model's ids (Agno keeps the model's)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # Agno's message ids

# event types, RAW left out (Agno forwards its unmapped run events as RAW, source "agno")
TEXT_RUN = ["RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
            "STATE_SNAPSHOT", "RUN_FINISHED"]
TOOL_CALL = ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
FRONTEND_PAUSE = ["RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END", *TOOL_CALL,
                  "STATE_SNAPSHOT", "RUN_FINISHED"]
CONFIRMATION_PAUSE = ["RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                      "TEXT_MESSAGE_END", *TOOL_CALL, "STATE_SNAPSHOT", "RUN_FINISHED"]
# a confirmed call runs in the resumed run: Agno streams the call again (same id, new empty parent), its result,
# a STATE_DELTA (jsonpatch) that adds Agno's bookkeeping keys, and a final STATE_SNAPSHOT {} that drops them again
CONFIRMED_RUN = ["RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END", *TOOL_CALL,
                 "TOOL_CALL_RESULT", "STATE_DELTA", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                 "STATE_SNAPSHOT", "RUN_FINISHED"]

agno = producer_fixture("agno")


def types(events: list[BaseEvent]) -> list[str]:
    """The run's event types without Agno's RAW passthrough events."""
    return event_types(events, skip={EventType.RAW})


def assert_plain_finish(events: list[BaseEvent], *, continued: bool = False) -> None:
    """Agno's runs: no protocolVersion on RUN_STARTED, no outcome on RUN_FINISHED (success by default).

    Its own run events come along as RAW: ``RunStarted`` first, or ``RunContinued`` for a resumed run.
    """
    assert events[0].type == EventType.RUN_STARTED and events[0].protocol_version is None
    assert events[-1].type == EventType.RUN_FINISHED and events[-1].outcome is None
    raws = [e for e in events if e.type == EventType.RAW]
    assert raws and {e.source for e in raws} == {"agno"}
    assert raws[0].event["event"] == ("RunContinued" if continued else "RunStarted")


async def hello_again(session: AgentSession, bodies: list[Body]) -> None:
    """A further plain message on the same thread: a fresh Agno run with the plain answer."""
    events = await drain(session.send("hello again"))
    assert_clean(session)
    assert types(events) == TEXT_RUN
    assert last_assistant_text(session) == HELLO
    assert session.tracker.pending is None and session.tool_waits == []
    body = bodies[-1]
    assert body["messages"][-1]["role"] == "user" and "resume" not in body and "parentRunId" not in body


async def test_agno_plain_message(agno: str):
    session, bodies = open_session(agno)
    events = await drain(session.send("hello there"))
    assert_clean(session)
    assert types(events) == TEXT_RUN  # the text comes only as TEXT_MESSAGE_*: no MESSAGES_SNAPSHOT
    assert_plain_finish(events)
    assert [e.snapshot for e in events if e.type == EventType.STATE_SNAPSHOT] == [{}, {}]
    assert session.tracker.pending is None and session.transcript.tool_calls == {}
    assert [(m.role, m.content) for m in session.transcript.messages] == [("user", "hello there"), ("assistant", HELLO)]
    assert UUID.fullmatch(session.transcript.messages[1].id)
    [body] = bodies
    assert body["protocolVersion"] == "1.0" and body["tools"] == [] and body["state"] == {}
    await hello_again(session, bodies)


# --- frontend tool: generate_task_steps ---------------------------------------------------------------------


async def steps_call(session: AgentSession, bodies: list[Body]) -> str:
    """Send ``steps …``; the run must end with one waiting ``generate_task_steps`` call and no interrupt."""
    events = await drain(session.send("steps for the cleanup"))
    assert_clean(session)
    assert types(events) == FRONTEND_PAUSE
    assert_plain_finish(events)
    assert bodies[-1]["tools"] == [{"name": STEPS.name, "description": STEPS.description,
                                           "parameters": STEPS.parameters}]
    assert session.tracker.pending is None  # no interrupt: the call itself is the question
    [wait] = session.tool_waits
    assert wait.name == STEPS.name and wait.args == PLAN and wait.cancellable
    assert CALL_ID.fullmatch(wait.tool_call_id)
    call = session.transcript.tool_calls[wait.tool_call_id]
    assert call.status == "awaiting_approval" and call.result is None
    [start] = [e for e in events if e.type == EventType.TOOL_CALL_START]
    assert start.parent_message_id == call.parent_message_id  # Agno's empty assistant message (TEXT_MESSAGE_START/END)
    return wait.tool_call_id


STEPS_FLOWS = {
    # answer: (the tool message's content, the model's answer)
    "respond": (json.dumps(CHOSEN), "Running 2 of 3 steps: Back up the files, Email the team."),
    "respond_text": ("not now", "Tool said: not now"),
    "decline": (json.dumps(DECLINED), f"Tool said: {json.dumps(DECLINED)}"),
}


@pytest.mark.parametrize("answer", list(STEPS_FLOWS))
async def test_agno_frontend_tool(agno: str, answer: str):
    content, expected = STEPS_FLOWS[answer]
    session, bodies = open_session(agno, [STEPS])
    call_id = await steps_call(session, bodies)
    if answer == "decline":
        events = await drain(session.decline(call_id))
    else:
        events = await drain(session.respond(call_id, CHOSEN if answer == "respond" else content))
    assert_clean(session)

    # the answer went back as a tool message at the end of the history: Agno resumes the paused run with it
    body = bodies[-1]
    assert len(bodies) == 2 and "resume" not in body and "parentRunId" not in body
    user, assistant, tool = body["messages"]
    assert (user["role"], user["content"]) == ("user", "steps for the cleanup")
    [tool_call] = assistant["toolCalls"]
    assert tool_call["id"] == call_id and json.loads(tool_call["function"]["arguments"]) == PLAN
    assert tool == {"id": f"result-{call_id}", "role": "tool", "toolCallId": call_id, "content": content}

    # the resumed run: no TOOL_CALL_RESULT for an external call, just the model's text
    assert types(events) == TEXT_RUN
    assert_plain_finish(events, continued=True)
    assert last_assistant_text(session) == expected
    call = session.transcript.tool_calls[call_id]
    assert call.status == "complete" and call.result == content
    assert session.tool_waits == [] and session.tracker.pending is None
    assert [m.role for m in session.transcript.messages if m.content or m.tool_call_ids] == [
        "user", "assistant", "tool", "assistant"]

    await hello_again(session, bodies)


# --- tool confirmation: delete_files (requires_confirmation=True) -----------------------------------------------


async def confirmation_call(session: AgentSession) -> tuple[str, list[BaseEvent]]:
    """Send ``clean up``; the run must end paused on ``delete_files``: a bare tool call, no interrupt."""
    events = await drain(session.send("clean up"))
    assert_clean(session)
    assert types(events) == CONFIRMATION_PAUSE
    assert_plain_finish(events)
    assert session.tracker.pending is None
    [start] = [e for e in events if e.type == EventType.TOOL_CALL_START]
    call = session.transcript.tool_calls[start.tool_call_id]
    assert CALL_ID.fullmatch(call.id) and call.name == "delete_files" and call.args == DELETE_ARGS
    parent = session.transcript.message(call.parent_message_id)
    assert parent is not None and parent.content == NEEDS_CONFIRMATION  # the tool call hangs off Agno's text
    return call.id, events


CONFIRM_FLOWS = {
    # answer: (what the chat sends, the call's result in the transcript, the model's answer)
    "accept": ({"accepted": True}, json.dumps(DELETED), f"Tool said: {DELETED}"),
    # approve-with-edits does not exist: editedArgs is ignored, the original arguments run
    "edit": ({"accepted": True, "editedArgs": {"path": "/tmp/other", "count": 1}}, json.dumps(DELETED),
             f"Tool said: {DELETED}"),
    "reject": ({"accepted": False}, None, f"Tool said: {REJECTED}"),
    "reject_note": ({"accepted": False, "note": "not today"}, None, "Tool said: not today"),
    "decline": (None, None, f"Tool said: {REJECTED}"),  # DECLINED has no accepted: true, so Agno rejects
}


@pytest.mark.parametrize("answer", list(CONFIRM_FLOWS))
async def test_agno_confirmation_answered_as_a_frontend_tool(agno: str, answer: str):
    payload, result, expected = CONFIRM_FLOWS[answer]
    session, bodies = open_session(agno, [STEPS, CONFIRM])
    call_id, _ = await confirmation_call(session)
    [wait] = session.tool_waits  # declared by the chat, so the core waits for the person's answer
    assert (wait.tool_call_id, wait.name, wait.args) == (call_id, "delete_files", DELETE_ARGS)
    call = session.transcript.tool_calls[call_id]
    assert call.status == "awaiting_approval"

    events = await drain(session.decline(call_id) if payload is None else session.respond(call_id, payload))
    assert_clean(session)
    sent = json.dumps(DECLINED) if payload is None else json.dumps(payload)
    body = bodies[-1]
    assert [t["name"] for t in body["tools"]] == ["generate_task_steps", "delete_files"]
    assert body["messages"][-1] == {"id": f"result-{call_id}", "role": "tool", "toolCallId": call_id,
                                    "content": sent}
    assert [c["id"] for c in body["messages"][-2]["toolCalls"]] == [call_id]

    if result is not None:  # accepted: the tool runs now, its call streams again and its result follows
        assert types(events) == CONFIRMED_RUN
        [start] = [e for e in events if e.type == EventType.TOOL_CALL_START]
        assert start.tool_call_id == call_id and start.parent_message_id != call.parent_message_id
        [tool_result] = [e for e in events if e.type == EventType.TOOL_CALL_RESULT]
        assert (tool_result.message_id, tool_result.role, tool_result.content) == (call_id, "tool", result)
        assert call.result == result  # Agno JSON-quotes a plain string result
        [delta] = [e for e in events if e.type == EventType.STATE_DELTA]
        assert [(op.op, op.path) for op in delta.delta] == [("add", "/current_session_id"),
                                                                   ("add", "/current_run_id")]
        assert session.transcript.state == {}  # the last STATE_SNAPSHOT wins
        assert call.parent_message_id != start.parent_message_id  # the replay did not move the call
        assert call.args == DELETE_ARGS
        # two tool messages for the call: the chat's answer, then Agno's result (message id = the call id)
        tools = [(m.id, m.content) for m in session.transcript.messages if m.role == "tool"]
        assert tools == [(f"result-{call_id}", sent), (call_id, result)]
        # the replay's parent stays an empty assistant message, never sent back
        assert session.transcript.message(start.parent_message_id).content == ""
        assert start.parent_message_id not in [m.id for m in session.transcript.to_messages()]
    else:  # rejected: nothing runs, only the model's answer
        assert types(events) == TEXT_RUN
        assert call.result == sent
    assert_plain_finish(events, continued=True)
    assert call.status == "complete"
    assert last_assistant_text(session) == expected
    assert session.tool_waits == [] and session.tracker.pending is None

    await hello_again(session, bodies)


async def test_agno_confirmation_without_the_tool_declared_cannot_be_answered(agno: str):
    """No frontend tools: the paused call is the agent's business, nothing waits; the thread goes on."""
    session, bodies = open_session(agno)
    call_id, _ = await confirmation_call(session)
    call = session.transcript.tool_calls[call_id]
    assert session.tool_waits == [] and call.status == "running" and call.result is None
    # the next message starts a fresh Agno run; the paused run stays paused in Agno's session
    await hello_again(session, bodies)
    assert [c["id"] for m in bodies[-1]["messages"] for c in m.get("toolCalls") or []] == [call_id]
    assert not [m for m in bodies[-1]["messages"] if m["role"] == "tool"]


async def test_agno_confirmation_with_other_tools_declared_gets_an_error_result(agno: str):
    """Frontend tools declared, but not delete_files: the core answers the call with an error (S29), no run."""
    session, bodies = open_session(agno, [STEPS])
    call_id, _ = await confirmation_call(session)
    call = session.transcript.tool_calls[call_id]
    assert session.tool_waits == [] and len(bodies) == 1
    assert "is not available in this chat" in json.loads(call.result)["error"]
    # the error result travels with the next message; Agno starts a fresh run (the tool message is not trailing)
    await hello_again(session, bodies)
    roles = [m["role"] for m in bodies[-1]["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]


async def test_agno_steps_without_the_tool_declared_asks_to_delete(agno: str):
    """``steps`` when the chat declares no generate_task_steps: the script falls back to delete_files."""
    session, _ = open_session(agno)
    events = await drain(session.send("steps please"))
    assert_clean(session)
    assert types(events) == CONFIRMATION_PAUSE
    assert [c.name for c in session.transcript.tool_calls.values()] == ["delete_files"]


async def test_agno_ignores_resume_entries(agno: str):
    """``resume`` is not Agno's channel: a resume list without a trailing tool message starts a fresh run."""
    session, bodies = open_session(agno)
    await confirmation_call(session)
    run_input = session.build_input(resume=[{"interruptId": "int-x", "status": "resolved",
                                             "payload": {"approved": True}}])
    events = await drain(session.stream(run_input))
    assert_clean(session)
    assert bodies[-1]["resume"] == [{"interruptId": "int-x", "status": "resolved",
                                            "payload": {"approved": True}}]
    # the last message is the user's "clean up" again: the model asks again, a new paused call
    assert types(events) == CONFIRMATION_PAUSE
    assert len(session.transcript.tool_calls) == 2
