"""Sessions as plain JSON records (interrupt_chat/agui/records.py): round trips after real runs
against the demo agent on loopback, S23 (no masked answer in a record), versions and migration."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from interrupt_chat.agui import AgentClient, AgentSession, InterruptTracker
from interrupt_chat.agui.records import (
    RECORD_VERSION,
    RecordError,
    migrate_record,
    session_from_record,
    session_record,
)
from interrupt_chat.demo.agent import create_app
from interrupt_chat.model.views import message_rows

SECRET = "sk-records-SECRET-4242"

pytestmark = pytest.mark.loopback


@pytest.fixture(scope="module")
def demo_app():
    return create_app(delay=0.0)


@pytest.fixture
def agent_url(loopback, demo_app):
    """The demo agent mounted on the loopback server (its routes live at "/")."""

    async def app(scope, receive, send):
        await demo_app({**scope, "path": "/", "raw_path": b"/"}, receive, send)

    return loopback.mount(app)


async def drain(stream) -> None:
    async for _ in stream:
        pass


async def ran(url: str, text: str) -> AgentSession:
    session = AgentSession(AgentClient(url))
    await drain(session.send(text))
    return session


def input_without_run_id(session: AgentSession, **kwargs: Any) -> dict[str, Any]:
    return session.build_input(**kwargs).model_dump(mode="json", by_alias=True, exclude={"run_id"})


def views(session: AgentSession) -> list[tuple]:
    return [(m.id, m.role, m.content, m.name, m.tool_call_ids, m.tool_call_id, m.error, m.encrypted_value)
            for m in session.transcript.messages if m.role != "activity"]


def calls(session: AgentSession) -> dict[str, tuple]:
    return {c.id: (c.name, c.parent_message_id, c.args_text, c.result, c.status, c.rejected, c.failed,
                   c.encrypted_value) for c in session.transcript.tool_calls.values()}


def through_json(record: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(record, allow_nan=False))  # plain JSON only: no pickle, no models


def assert_same(restored: AgentSession, original: AgentSession) -> None:
    assert restored.thread_id == original.thread_id
    assert views(restored) == views(original)
    assert calls(restored) == calls(original)
    assert restored.transcript.state == original.transcript.state
    assert restored.tracker.pending == original.tracker.pending
    assert restored.tracker.sealed == original.tracker.sealed
    assert restored.last_run_id == original.last_run_id
    assert restored.error == original.error
    assert restored.transcript.status == original.transcript.status
    assert input_without_run_id(restored) == input_without_run_id(original)


async def test_s25_approval_round_trip_keeps_the_awaiting_tool_call(agent_url):
    session = await ran(agent_url, "approval")
    record = session_record(session)
    assert record["version"] == RECORD_VERSION and record["threadId"] == session.thread_id
    assistant = next(m for m in record["messages"] if m.get("toolCalls"))
    assert assistant["toolCalls"][0]["function"]["name"] == "delete_files"  # camelCase wire dicts
    assert record["pending"]["kind"] == "standard" and record["pending"]["runId"] == session.last_run_id

    restored = session_from_record(through_json(record))
    assert_same(restored, session)
    (call,) = restored.transcript.tool_calls.values()
    assert call.status == "awaiting_approval"
    assert restored.client is None  # the client (and its headers) never goes into a record


async def test_s25_a_restored_approval_resumed_draws_the_result_inside_its_card(agent_url):
    """Issue 39: everything restored is history; the resume's TOOL_CALL_RESULT joins its call there, so the
    history's row draws it in the call's card and the live turn has no row of its own for it."""
    session = await ran(agent_url, "approval")
    restored = session_from_record(through_json(session_record(session)), AgentClient(agent_url))
    (call_id,) = restored.transcript.tool_calls
    await drain(restored.submit(restored.tracker.resolve({"approved": True}, restored.tracker.pending.ids[0])))
    assert restored.error is None and restored.tracker.pending is None
    transcript = restored.transcript
    history = message_rows(transcript.messages[:transcript.tail_start], transcript)
    live = message_rows(transcript.messages[transcript.tail_start:], transcript)
    (card,) = [c for row in history for c in row.tool_calls if c.id == call_id]
    assert card.status == "complete" and card.result_id and card.result == "deleted 3 files in /tmp/reports"
    assert [row.role for row in live] == ["assistant"] and "tool" not in [row.role for row in history]


async def test_s07_multi_round_trip_keeps_one_answer_and_resumes_once(agent_url):
    session = await ran(agent_url, "multi")
    pending = session.tracker.pending
    choice_id = pending.ids[1]
    assert session.tracker.resolve({"color": "green"}, choice_id).kind == "waiting"
    record = through_json(session_record(session))
    assert [a["interruptId"] for a in record["answers"]] == [choice_id]

    restored = session_from_record(record, AgentClient(agent_url))
    assert_same(restored, session)
    assert restored.tracker.answers == session.tracker.answers
    # the restored session finishes the set and the demo agent accepts the resume
    assert restored.tracker.resolve({"approved": True}, pending.ids[0]).kind == "waiting"
    decision = restored.tracker.resolve({"approved": False}, pending.ids[2])
    assert decision.kind == "resume" and [e.interrupt_id for e in decision.resume] == pending.ids
    await drain(restored.submit(decision))
    assert restored.error is None and restored.tracker.pending is None
    assert restored.transcript.status == "finished"


async def test_s13_legacy_round_trip_resumes_with_the_raw_value(agent_url):
    session = await ran(agent_url, "legacy")
    assert session.tracker.pending.kind == "legacy"
    record = through_json(session_record(session))
    assert record["pending"]["kind"] == "legacy" and isinstance(record["pending"]["rawValue"], str)

    restored = session_from_record(record)
    assert_same(restored, session)
    original, again = session.tracker.resolve({"approved": True}), restored.tracker.resolve({"approved": True})
    assert again.kind == "legacy-resume" and again.forwarded_props == original.forwarded_props
    assert again.parent_run_id == original.parent_run_id


async def test_tools_round_trip_keeps_tool_calls_and_results(agent_url):
    session = await ran(agent_url, "tools")
    record = through_json(session_record(session))
    roles = [m["role"] for m in record["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    tool = record["messages"][2]
    assert tool["toolCallId"] == record["messages"][1]["toolCalls"][0]["id"]

    restored = session_from_record(record)
    assert_same(restored, session)
    assert [c.status for c in restored.transcript.tool_calls.values()] == ["complete"]


async def test_s23_a_masked_answer_is_not_in_the_record(agent_url):
    session = await ran(agent_url, "credential")
    (interrupt_id,) = session.tracker.pending.ids
    decision = session.tracker.resolve({"api_key": SECRET}, interrupt_id)
    assert decision.kind == "resume" and session.tracker.sealed  # answered, not yet sent
    record = session_record(session)
    text = json.dumps(record)
    assert SECRET not in text
    assert record["answers"] == [] and record["sealed"] is False  # D6: dropped, and the seal lifted

    restored = session_from_record(through_json(record))
    assert restored.tracker.pending == session.tracker.pending
    assert restored.tracker.answers == {} and not restored.tracker.sealed  # asked again
    assert session.tracker.answers[interrupt_id].payload == {"api_key": SECRET}  # the live session keeps it


async def test_a_denied_tool_call_stays_rejected(agent_url):
    session = await ran(agent_url, "approval")
    await drain(session.submit(session.tracker.resolve({"approved": False})))
    (call,) = session.transcript.tool_calls.values()
    assert call.rejected
    record = through_json(session_record(session))
    assert record["toolCalls"] == {call.id: {"rejected": True}}
    restored = session_from_record(record)
    assert_same(restored, session)
    assert restored.transcript.tool_calls[call.id].rejected


async def test_a_failed_run_keeps_its_error(agent_url):
    session = await ran(agent_url, "error")
    assert session.error and session.transcript.status == "error"
    restored = session_from_record(through_json(session_record(session)))
    assert_same(restored, session)
    assert restored.transcript.error == session.transcript.error


def test_export_during_a_resume_run_offers_the_owed_set_again():
    tracker = InterruptTracker()
    tracker.observe({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"})
    tracker.observe({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1",
                     "outcome": {"type": "interrupt", "interrupts": [{"id": "a", "reason": "confirmation"}]}})
    tracker.finalize()
    owed = tracker.pending
    tracker.resolve({"approved": True}, "a")
    tracker.observe({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"})  # the resume run streams
    assert tracker.pending is None
    exported = json.loads(json.dumps(tracker.export()))
    assert exported["answers"] == [] and exported["sealed"] is False  # S15: as if that run had failed
    again = InterruptTracker()
    again.restore(exported)
    assert again.pending == owed and again.pending.run_id == "r1"


def test_getstate_still_drops_masked_answers_and_export_agrees():
    tracker = InterruptTracker()
    tracker.observe({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"})
    schema = {"type": "object", "properties": {"api_key": {"type": "string", "format": "password"}}}
    tracker.observe({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1", "outcome": {"type": "interrupt",
                     "interrupts": [{"id": "key", "reason": "input_required", "responseSchema": schema},
                                    {"id": "ok", "reason": "confirmation"}]}})
    tracker.finalize()
    tracker.resolve({"api_key": SECRET}, "key")
    tracker.resolve({"approved": True}, "ok")
    assert tracker.sealed
    state = tracker.__getstate__()
    assert set(state["_answers"]) == {"ok"} and state["_sealed"] is False
    exported = tracker.export()
    assert [a["interruptId"] for a in exported["answers"]] == ["ok"] and exported["sealed"] is False
    assert SECRET not in json.dumps(exported)


# -- versions --------------------------------------------------------------------------------------


def v1_record() -> dict[str, Any]:
    return {
        "version": 1, "threadId": "t1",
        "messages": [{"id": "u1", "role": "user", "content": "delete my files"},
                     {"id": "m1", "role": "assistant", "toolCalls": [
                         {"id": "c1", "type": "function", "encryptedValue": "enc-1",
                          "function": {"name": "delete_files", "arguments": "{\"count\": 3}"}}]}],
        "toolCalls": {}, "state": {"files": 3},
        "pending": {"kind": "standard", "runId": "r1", "interrupts": [
            {"id": "i1", "reason": "tool_call", "toolCallId": "c1"}, {"id": "i2", "reason": "confirmation"}]},
        "answers": [{"interruptId": "i2", "status": "cancelled"}], "sealed": False, "trackerError": None,
        "status": "finished", "statusError": None, "lastRunId": "r1", "error": None,
    }


def test_v1_record_restores_encrypted_values_and_awaiting_calls():
    session = session_from_record(v1_record())
    call = session.transcript.tool_calls["c1"]
    assert call.encrypted_value == "enc-1" and call.status == "awaiting_approval"
    assert session.tracker.pending.ids == ["i1", "i2"] and set(session.tracker.answers) == {"i2"}
    assert session_record(session)["messages"] == v1_record()["messages"]


def test_version_0_is_migrated():
    record = v1_record()
    old = {"thread_id": "t1", "messages": record["messages"], "state": record["state"],
           "pending": {"kind": "standard", "run_id": "r1", "interrupts": record["pending"]["interrupts"]},
           "answers": {"i2": {"status": "cancelled"}}, "last_run_id": "r1", "error": None}
    migrated = migrate_record(old)
    assert migrated["version"] == RECORD_VERSION and migrated["threadId"] == "t1"
    assert migrated["answers"] == [{"interruptId": "i2", "status": "cancelled"}]
    session = session_from_record(old)
    assert session.thread_id == "t1" and session.last_run_id == "r1"
    assert session.tracker.pending.run_id == "r1" and set(session.tracker.answers) == {"i2"}


def test_a_newer_version_is_read_as_far_as_understood_with_a_warning(caplog):
    record = {**v1_record(), "version": 7, "labels": ["work"]}
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.agui.records"):
        session = session_from_record(record)
    assert session.tracker.pending.ids == ["i1", "i2"]
    text = caplog.text
    assert "version 7" in text and "labels" in text  # nothing is dropped silently


def test_unknown_fields_are_named_in_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.agui.records"):
        session_from_record({**v1_record(), "mystery": 1})
    assert "mystery" in caplog.text


@pytest.mark.parametrize("broken", [
    "not a record",
    {"version": "one", "threadId": "t1"},
    {"version": 1, "messages": []},  # no threadId
    {"version": 1, "threadId": "t1", "messages": [{"id": "x", "role": "alien"}]},
    {"version": 1, "threadId": "t1", "messages": "nope"},
    {"version": 1, "threadId": "t1", "pending": {"kind": "sideways"}},
    {"version": 1, "threadId": "t1", "pending": {"kind": "standard", "interrupts": []}},
    {"version": 1, "threadId": "t1", "pending": {"kind": "standard", "interrupts": [{"reason": "no id"}]}},
])
def test_unreadable_records_raise_record_error(broken):
    with pytest.raises(RecordError):
        session_from_record(broken)


def test_a_record_saved_mid_run_comes_back_idle():
    session = session_from_record({**v1_record(), "status": "running"})
    assert session.transcript.status == "idle" and not session.running


# -- digests of changed messages only ----------------------------------------------------------------


def test_message_digests_follow_every_change_of_a_message():
    from interrupt_chat.agui import Transcript, parse_event
    from interrupt_chat.agui.records import MessageDigests, message_digest, wire_messages

    transcript, memo = Transcript(), MessageDigests()

    def apply(*events: dict) -> None:
        for wire in events:
            transcript.apply(parse_event(wire))

    def check() -> None:
        scanned = memo.scan(transcript)
        assert [d for _, d in scanned] == [message_digest(b) for b in wire_messages(transcript)]
        assert [v.id for v, _ in scanned] == [b["id"] for b in wire_messages(transcript)]

    transcript.add_user_message("u1", "hello")
    check()
    apply({"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"})
    check()  # an empty assistant message is not sent: no digest
    apply({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Hi"})
    check()
    apply({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": " there"})
    check()
    apply({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f", "parentMessageId": "a1"},
          {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"x\": 1}"},
          {"type": "TOOL_CALL_END", "toolCallId": "c1"})
    check()
    transcript.set_tool_call_args("c1", {"x": 2})
    check()
    apply({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "tool-call", "entityId": "c1", "encryptedValue": "e"})
    check()
    apply({"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "c1", "content": "done"})
    check()
    apply({"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "p", "content": {"pct": 1}})
    check()
    apply({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "edited"}]},
        {"id": "a1", "role": "assistant", "content": "Hi there"}]})
    check()
