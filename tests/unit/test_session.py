"""AgentSession end to end against scripted in-process agents (tests/unit/agents.py).

Rule ids are from docs/semantics.md. The agents here are written for these
tests (no dependency on interrupt_chat.demo.agent).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import pickle
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from ag_ui.core import EventType
from starlette.responses import PlainTextResponse

from interrupt_chat.agui import AgentClient, AgentSession
from tests.unit.agents import (
    ScriptedAgent,
    Stream,
    echo_run,
    free_port,
    run_error,
    sse,
    text,
    tool_call,
    tool_result,
)

SCHEMA = {"type": "object", "required": ["approved"], "properties": {"approved": {"type": "boolean"},
                                                                     "editedArgs": {"type": "object"}}}


def interrupt(id_: str, **extra) -> dict:
    return {"id": id_, "reason": "tool_call", "message": "Delete 3 files?", "responseSchema": SCHEMA, **extra}


def started(body: dict) -> dict:
    return {"type": "RUN_STARTED", "threadId": body["threadId"], "runId": body["runId"]}


def finished(body: dict, interrupts: list[dict] | None = None, **extra) -> dict:
    event = {"type": "RUN_FINISHED", "threadId": body["threadId"], "runId": body["runId"], **extra}
    if interrupts:
        event["outcome"] = {"type": "interrupt", "interrupts": interrupts}
    return event


def approval_run(body: dict, *, interrupts: list[dict] | None = None) -> list[dict]:
    """pydantic-ai style: empty text message, a tool call on it, state, an activity, interrupt outcome."""
    return [started(body),
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            *tool_call("call_1", "delete_files", {"count": 3}, parent="m1"),
            {"type": "ACTIVITY_SNAPSHOT", "messageId": "act1", "activityType": "progress", "content": {"pct": 50}},
            {"type": "STATE_SNAPSHOT", "snapshot": {"files": ["a", "b", "c"], "confirmed": False}},
            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/confirmed", "value": None}]},
            finished(body, interrupts or [interrupt("int-call_1", toolCallId="call_1")])]


def resumed_run(body: dict) -> list[dict]:
    return [started(body), tool_result("tool-1", "call_1", "deleted 3 files"), *text("m2", "Done."),
            finished(body, outcome={"type": "success"})]


def legacy_run(body: dict, value) -> list[dict]:
    return [started(body), *text("m1", "I need a decision."),
            {"type": "CUSTOM", "name": "on_interrupt", "value": value}, finished(body)]


def session_for(agent: ScriptedAgent, **kwargs) -> AgentSession:
    client = AgentClient("http://agent.test/", transport=httpx.ASGITransport(app=agent))
    return AgentSession(client, thread_id="t1", **kwargs)


async def drain(stream) -> list:
    return [event async for event in stream]


async def interrupted_session(**kwargs) -> tuple[AgentSession, ScriptedAgent]:
    agent = ScriptedAgent(approval_run, **kwargs)
    session = session_for(agent)
    await drain(session.send("delete my files", message_id="u1"))
    return session, agent


# -- a plain run -------------------------------------------------------------------------------------

async def test_send_runs_the_agent_and_folds_the_transcript():
    agent = ScriptedAgent(lambda body: echo_run(body, "Hi!"))
    session = session_for(agent)
    events = await drain(session.send("hello", message_id="u1"))
    assert events[0].type == EventType.RUN_STARTED and events[-1].type == EventType.RUN_FINISHED
    assert [(m.role, m.content) for m in session.transcript.messages] == [("user", "hello"), ("assistant", "Hi!")]
    assert session.transcript.status == "finished"
    assert session.error is None and not session.running
    body = agent.bodies[0]
    assert body["threadId"] == "t1" and body["runId"] == session.last_run_id
    assert body["messages"] == [{"id": "u1", "role": "user", "content": "hello"}]
    assert "parentRunId" not in body and "resume" not in body


async def test_each_run_has_a_fresh_run_id_and_the_full_history():
    agent = ScriptedAgent(lambda body: echo_run(body, "one"), lambda body: echo_run(body, "two"))
    session = session_for(agent)
    await drain(session.send("a", message_id="u1"))
    await drain(session.send("b", message_id="u2"))
    first, second = agent.bodies
    assert first["runId"] != second["runId"]
    assert second["threadId"] == first["threadId"] == "t1"
    assert [m["id"] for m in second["messages"]] == ["u1", f"{first['runId']}-m", "u2"]


async def test_null_state_snapshot_still_sends_a_state():
    def null_state(body):
        return [started(body), {"type": "STATE_SNAPSHOT", "snapshot": None}, finished(body)]

    agent = ScriptedAgent(null_state)
    session = session_for(agent)
    await drain(session.send("a"))
    await drain(session.send("b"))
    assert "state" in agent.bodies[1]


async def test_running_flag_during_the_stream():
    session = session_for(ScriptedAgent())
    flags = [session.running async for _ in session.send("x")]
    assert all(flags) and not session.running


async def test_one_run_at_a_time_from_the_moment_send_returns():
    agent = ScriptedAgent(lambda body: echo_run(body, "one"), lambda body: echo_run(body, "two"))
    session = session_for(agent)
    first = session.send("a", message_id="u1")
    assert session.running  # claimed before the first event: a double Enter cannot start two runs
    with pytest.raises(RuntimeError, match="already in flight"):
        session.send("b")
    assert [m.id for m in session.transcript.messages] == ["u1"]  # the refused message was not added
    await drain(first)
    assert not session.running
    await drain(session.send("b"))
    assert len(agent.bodies) == 2


def test_cancel_with_nothing_running_returns_false():
    assert AgentSession("http://127.0.0.1:9/").cancel() is False


# -- S3 / S12: standard interrupt and its resume -----------------------------------------------------------

async def test_s03_interrupt_surfaced_only_after_the_run_finalizes():
    agent = ScriptedAgent(approval_run)
    session = session_for(agent)
    seen_pending = []
    async for _event in session.send("delete my files", message_id="u1"):
        seen_pending.append(session.tracker.pending)
    assert seen_pending[-1] is None  # not even after RUN_FINISHED was applied
    assert all(p is None for p in seen_pending)
    pending = session.tracker.pending
    assert pending is not None and pending.kind == "standard"
    assert pending.ids == ["int-call_1"]
    assert pending.run_id == agent.bodies[0]["runId"]
    assert session.transcript.tool_calls["call_1"].status == "awaiting_approval"
    assert session.transcript.status == "finished"
    assert session.error is None


async def test_s05_a_new_request_refused_with_an_opening_run_error_leaves_the_interrupts_owed():
    session, agent = await interrupted_session()
    owed = session.tracker.pending
    agent.then(lambda body: [run_error("answer the pending interrupt first", "INTERRUPT_RESUME_REQUIRED")])
    await drain(session.send("never mind", message_id="u2"))  # ADK refuses a message while an interrupt waits
    assert session.error and "answer the pending interrupt first" in session.error
    assert session.tracker.pending is not None and session.tracker.pending.ids == owed.ids  # still owed
    agent.then(resumed_run)
    await drain(session.submit(session.tracker.resolve({"approved": True})))
    assert agent.bodies[-1]["resume"][0]["interruptId"] == "int-call_1" and session.tracker.pending is None


async def test_s12_resume_request_fields():
    session, agent = await interrupted_session()
    agent.then(resumed_run)
    decision = session.tracker.resolve({"approved": True})
    assert decision.kind == "resume"
    await drain(session.submit(decision))
    first, resume = agent.bodies
    assert resume["threadId"] == first["threadId"] == "t1"
    assert resume["runId"] not in (first["runId"], None)
    assert resume["parentRunId"] == first["runId"]
    assert resume["protocolVersion"] == "1.0"
    assert resume["messages"] == [
        {"id": "u1", "role": "user", "content": "delete my files"},
        {"id": "m1", "role": "assistant", "toolCalls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "delete_files", "arguments": json.dumps({"count": 3})}}]},
    ]  # the activity message is never sent back
    assert resume["state"] == {"files": ["a", "b", "c"], "confirmed": None}
    assert resume["resume"] == [{"interruptId": "int-call_1", "status": "resolved", "payload": {"approved": True}}]
    assert resume["tools"] == [] and resume["context"] == [] and resume["forwardedProps"] == {}


async def test_s22_edited_args_go_in_the_payload_and_then_show_on_the_tool_call():
    session, agent = await interrupted_session()
    agent.then(resumed_run)
    edited = {"count": 1}
    await drain(session.submit(session.tracker.resolve({"approved": True, "editedArgs": edited})))
    resume = agent.bodies[1]
    assert resume["resume"][0]["payload"]["editedArgs"] == edited
    sent_call = resume["messages"][1]["toolCalls"][0]["function"]["arguments"]
    assert json.loads(sent_call) == {"count": 3}  # the history is what the agent asked; the payload edits it
    assert session.transcript.tool_calls["call_1"].args == edited  # what ran is what the chat shows


async def test_s12_after_the_resume_the_tool_result_sits_after_its_assistant_message():
    session, agent = await interrupted_session()
    agent.then(resumed_run)
    await drain(session.submit(session.tracker.resolve({"approved": True})))
    assert session.tracker.pending is None
    assert session.transcript.tool_calls["call_1"].status == "complete"
    assert session.transcript.tool_calls["call_1"].result == "deleted 3 files"
    assert [(m.id, m.role) for m in session.transcript.messages] == [
        ("u1", "user"), ("m1", "assistant"), ("tool-1", "tool"), ("act1", "activity"), ("m2", "assistant")]
    history = session.build_input().messages
    assert [(m.id, m.role) for m in history] == [("u1", "user"), ("m1", "assistant"), ("tool-1", "tool"),
                                                 ("m2", "assistant")]


async def test_s04_card_stays_sealed_until_the_resume_run_starts():
    session, agent = await interrupted_session()
    seen = []

    def resume_reply(body):
        return resumed_run(body)

    agent.then(resume_reply)
    decision = session.tracker.resolve({"approved": True})
    assert session.tracker.sealed and session.tracker.pending is not None
    async for event in session.submit(decision):
        seen.append((event.type, session.tracker.pending is not None))
    assert seen[0] == (EventType.RUN_STARTED, False)
    assert session.tracker.pending is None


async def test_s07_resume_lists_answers_in_interrupt_order_not_click_order():
    two = [interrupt("a", toolCallId="call_1"), interrupt("b", reason="confirmation")]
    agent = ScriptedAgent(lambda body: approval_run(body, interrupts=two))
    session = session_for(agent)
    await drain(session.send("go", message_id="u1"))
    assert session.tracker.cancel("b").kind == "waiting"
    decision = session.tracker.resolve({"approved": False}, "a")
    agent.then(resumed_run)
    await drain(session.submit(decision))
    assert agent.bodies[1]["resume"] == [{"interruptId": "a", "status": "resolved", "payload": {"approved": False}},
                                         {"interruptId": "b", "status": "cancelled"}]


async def test_s11_expired_interrupt_is_sent_cancelled():
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    clock = [now]
    expiring = [interrupt("a", toolCallId="call_1", expiresAt=(now + timedelta(seconds=30)).isoformat()),
                interrupt("b", reason="confirmation")]
    agent = ScriptedAgent(lambda body: approval_run(body, interrupts=expiring))
    session = session_for(agent, now=lambda: clock[0])
    await drain(session.send("go"))
    assert session.tracker.resolve({"approved": True}, "a").kind == "waiting"
    clock[0] = now + timedelta(minutes=1)
    decision = session.tracker.resolve({"approved": True}, "b")
    await drain(session.submit(decision))
    assert agent.bodies[1]["resume"] == [{"interruptId": "a", "status": "cancelled"},
                                         {"interruptId": "b", "status": "resolved", "payload": {"approved": True}}]


async def test_submit_of_a_non_sending_decision_runs_nothing():
    session, agent = await interrupted_session()
    assert await drain(session.submit(session.tracker.resolve({"approved": True}, "nope"))) == []
    assert len(agent.requests) == 1


# -- S13 / S14: legacy ------------------------------------------------------------------------------------

async def test_s13_legacy_resolve_sends_forwarded_props_command_without_resume():
    raw_value = json.dumps({"question": "Ship it?"})
    agent = ScriptedAgent(lambda body: legacy_run(body, raw_value))
    session = session_for(agent)
    await drain(session.send("ship", message_id="u1"))
    pending = session.tracker.pending
    assert pending.kind == "legacy" and pending.event == {"name": "on_interrupt", "value": {"question": "Ship it?"}}
    decision = session.tracker.resolve({"approved": True})
    assert decision.kind == "legacy-resume"
    await drain(session.submit(decision))
    first, resume = agent.bodies
    assert resume["forwardedProps"] == {"command": {"resume": {"approved": True}, "interruptEvent": raw_value}}
    assert "resume" not in resume
    assert resume["threadId"] == "t1" and resume["runId"] != first["runId"]
    assert resume["parentRunId"] == first["runId"]
    assert resume["protocolVersion"] == "1.0"
    assert [m["id"] for m in resume["messages"]] == ["u1", "m1"]
    assert session.tracker.pending is None


async def test_s02_standard_wins_over_legacy_in_the_same_run():
    def both(body):
        events = approval_run(body)
        return [*events[:-1], {"type": "CUSTOM", "name": "on_interrupt", "value": "legacy"}, events[-1]]

    session = session_for(ScriptedAgent(both))
    await drain(session.send("x"))
    assert session.tracker.pending.kind == "standard"


async def test_s14_legacy_cancel_sends_nothing():
    agent = ScriptedAgent(lambda body: legacy_run(body, "approve?"))
    session = session_for(agent)
    await drain(session.send("x"))
    decision = session.tracker.cancel()
    assert decision.kind == "dismiss"
    assert await drain(session.submit(decision)) == []
    assert len(agent.requests) == 1 and session.tracker.pending is None


# -- S15: failures around the resume -------------------------------------------------------------------------

async def test_s15_resume_http_500_keeps_answers_and_allows_resubmit():
    two = [interrupt("a", toolCallId="call_1"), interrupt("b", reason="confirmation")]
    agent = ScriptedAgent(lambda body: approval_run(body, interrupts=two))
    session = session_for(agent)
    await drain(session.send("go", message_id="u1"))
    interrupted_run = agent.bodies[0]["runId"]
    agent.then(PlainTextResponse("resume store unavailable", status_code=500), resumed_run)
    session.tracker.resolve({"approved": True}, "a")
    decision = session.tracker.resolve({"approved": False}, "b")
    assert decision.kind == "resume" and session.tracker.sealed
    events = await drain(session.submit(decision))
    assert events == []
    assert "HTTP 500" in session.error and "resume store unavailable" in session.error
    assert session.transcript.status == "error"
    tracker = session.tracker
    assert tracker.pending is not None and tracker.pending.ids == ["a", "b"]
    assert tracker.pending.run_id == interrupted_run
    assert set(tracker.answers) == {"a", "b"}  # answers kept
    assert not tracker.sealed  # seal lifted
    assert session.transcript.tool_calls["call_1"].status == "awaiting_approval"
    # resubmit: re-answering one interrupt completes the set again with the kept answer for the other
    retry = tracker.resolve({"approved": True}, "b")
    assert retry.kind == "resume" and retry.parent_run_id == interrupted_run
    await drain(session.submit(retry))
    assert agent.bodies[2]["resume"] == [
        {"interruptId": "a", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "b", "status": "resolved", "payload": {"approved": True}}]
    assert agent.bodies[2]["parentRunId"] == interrupted_run
    assert session.error is None and tracker.pending is None
    assert session.transcript.status == "finished"


async def test_s15_resume_agent_down_keeps_answers():
    agent = ScriptedAgent(approval_run)
    session = session_for(agent)
    await drain(session.send("go"))
    decision = session.tracker.resolve({"approved": True})
    session.client = AgentClient(f"http://127.0.0.1:{free_port()}/", connect_timeout=2)
    await drain(session.submit(decision))
    assert "cannot reach the agent" in session.error
    assert session.tracker.answers and not session.tracker.sealed
    assert session.tracker.pending.ids == ["int-call_1"]


async def test_s15_resume_run_error_after_run_started_reoffers_interrupts():
    session, agent = await interrupted_session()
    interrupted_run = agent.bodies[0]["runId"]
    agent.then(lambda body: [started(body), run_error("payload rejected", "INVALID_PAYLOAD")], resumed_run)
    await drain(session.submit(session.tracker.resolve({"approvd": True})))
    assert session.error == "payload rejected (INVALID_PAYLOAD)"
    assert session.transcript.status == "error"
    pending = session.tracker.pending
    assert pending is not None and pending.ids == ["int-call_1"]
    assert pending.run_id == interrupted_run  # original run id
    assert session.tracker.answers == {} and not session.tracker.sealed
    assert session.transcript.tool_calls["call_1"].status == "awaiting_approval"
    decision = session.tracker.resolve({"approved": True})
    assert decision.parent_run_id == interrupted_run
    await drain(session.submit(decision))
    assert agent.bodies[2]["parentRunId"] == interrupted_run
    assert session.tracker.pending is None and session.error is None


async def test_s15_resume_run_replaying_the_tool_call_then_failing_still_awaits_approval():
    """A producer that replays TOOL_CALL_START in the resumed run, then fails: the call is still owed."""
    session, agent = await interrupted_session()
    agent.then(lambda body: [started(body), *tool_call("call_1", "delete_files", {"count": 3}, parent="m1"),
                             run_error("model crashed")])
    await drain(session.submit(session.tracker.resolve({"approved": True})))
    assert session.tracker.pending.ids == ["int-call_1"]
    assert session.transcript.tool_calls["call_1"].status == "awaiting_approval"


async def test_s15_resume_stream_drop_after_run_started_reoffers_interrupts(loopback):
    agent = ScriptedAgent(approval_run)
    session = AgentSession(AgentClient(loopback.mount(agent)), thread_id="t1")
    await drain(session.send("go"))
    interrupted_run = agent.bodies[0]["runId"]
    agent.then(lambda body: Stream([started(body), *text("m2", "working")[:2], RuntimeError("crash")]))
    await drain(session.submit(session.tracker.resolve({"approved": True})))
    assert "dropped" in session.error
    assert session.tracker.pending.run_id == interrupted_run
    assert session.tracker.answers == {}


async def test_s15_resume_run_error_before_run_started_keeps_answers():
    session, agent = await interrupted_session()
    agent.then([run_error("thread busy", "THREAD_BUSY")])
    await drain(session.submit(session.tracker.resolve({"approved": True})))
    assert session.error == "thread busy (THREAD_BUSY)"
    assert session.tracker.answers and not session.tracker.sealed


async def test_s15_empty_resume_stream_is_a_failed_submission():
    session, agent = await interrupted_session()
    agent.then(b": ping\n\n")
    await drain(session.submit(session.tracker.resolve({"approved": True})))
    assert session.error and "without any event" in session.error
    assert session.transcript.status == "error"
    assert session.tracker.answers and not session.tracker.sealed
    assert session.tracker.pending.ids == ["int-call_1"]


# -- S5: failed runs ----------------------------------------------------------------------------------------------

async def test_s05_run_error_discards_the_runs_interrupt():
    def failing(body):
        return [*approval_run(body)[:-1], run_error("late failure")]

    session = session_for(ScriptedAgent(failing))
    await drain(session.send("go"))
    assert session.tracker.pending is None
    assert session.error == "late failure"
    assert session.transcript.tool_calls["call_1"].status == "failed"


async def test_s05_late_run_error_after_run_finished_fails_the_run():
    def late(body):
        return [*approval_run(body), run_error("post-finish failure")]

    session = session_for(ScriptedAgent(late))
    await drain(session.send("go"))
    assert session.tracker.pending is None
    assert session.error == "post-finish failure"
    assert session.transcript.status == "error"


# -- broken streams -------------------------------------------------------------------------------------------------

async def test_protocol_violation_gives_a_clear_error_and_the_next_run_works():
    def broken(body):
        return [started(body), {"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost", "delta": "boo"},
                finished(body)]

    agent = ScriptedAgent(broken, lambda body: echo_run(body, "fine"))
    session = session_for(agent)
    events = await drain(session.send("a"))
    assert [e.type for e in events] == [EventType.RUN_STARTED]
    assert "TEXT_MESSAGE_CONTENT" in session.error and "ghost" in session.error and "not open" in session.error
    assert session.transcript.status == "error" and session.transcript.error == session.error
    assert not session.running
    await drain(session.send("b"))
    assert session.error is None and session.transcript.status == "finished"
    assert session.transcript.messages[-1].content == "fine"


async def test_protocol_violation_from_a_stale_interrupt_stream_discards_it():
    def broken(body):
        events = approval_run(body)
        return [*events, {"type": "CUSTOM", "name": "after-finish", "value": 1}]

    session = session_for(ScriptedAgent(broken))
    await drain(session.send("a"))
    assert "after RUN_FINISHED" in session.error
    assert session.tracker.pending is None  # S5: an invalid stream surfaces nothing


async def test_malformed_event_gives_a_clear_error_and_the_next_run_works():
    def malformed(body):
        return sse(started(body), "data: {broken\n\n")

    session = session_for(ScriptedAgent(malformed))
    await drain(session.send("a"))
    assert "not JSON" in session.error and "{broken" in session.error
    await drain(session.send("b"))
    assert session.error is None


async def test_chunk_error_gives_a_clear_error():
    def chunky(body):
        return [started(body), {"type": "TEXT_MESSAGE_CHUNK", "delta": "no id"}, finished(body)]

    session = session_for(ScriptedAgent(chunky))
    await drain(session.send("a"))
    assert "needs an id" in session.error and session.transcript.status == "error"


async def test_chunked_stream_is_expanded_and_flushed():
    def chunked(body):
        return [started(body), {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Hel"},
                {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"}, finished(body)]

    session = session_for(ScriptedAgent(chunked))
    events = await drain(session.send("a"))
    kinds = [e.type.value for e in events]
    # the two deltas are one event when they were read together (interrupt_chat.agui.coalesce)
    assert [k for i, k in enumerate(kinds) if k != "TEXT_MESSAGE_CONTENT" or kinds[i - 1] != k] == [
        "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert "".join(e.delta for e in events if e.type == EventType.TEXT_MESSAGE_CONTENT) == "Hello"
    assert session.transcript.messages[-1].content == "Hello" and session.error is None


async def test_read_ahead_counts_the_events_of_the_same_read_that_follow():
    """``read_ahead``: within each read, the events still to come, down to 0 at its last; 0 after the run."""
    session = session_for(ScriptedAgent(lambda body: [started(body), *text("m1", "one two"), finished(body)]))
    seen = [(event.type.value, session.read_ahead) async for event in session.send("a")]
    counts = [left for _, left in seen]
    assert counts[0] > 0 and counts[-1] == 0 and session.read_ahead == 0  # in process: one read
    for before, after in itertools.pairwise(counts):  # k, k-1, ..., 0, then the next read
        assert after == before - 1 if before else after >= 0
    assert seen[0][0] == "RUN_STARTED" and seen[-1][0] == "RUN_FINISHED"


async def test_a_stop_while_a_batch_is_applied_ends_the_run_there():
    """Events read together (one batch) after the stop button are not applied, a RUN_FINISHED included."""
    session = session_for(ScriptedAgent(lambda body: [started(body), *text("m1", "partial"), finished(body)]))
    seen = []
    async for event in session.send("a"):
        seen.append(event.type.value)
        if event.type == EventType.TEXT_MESSAGE_START:
            assert session.cancel() is True
    assert seen == ["RUN_STARTED", "TEXT_MESSAGE_START"]
    assert session.transcript.status == "cancelled" and session.error is None


async def test_a_chunk_error_comes_after_the_events_read_with_it():
    """Events read in one batch before a broken chunk are applied first: the partial answer stays (S5)."""
    def broken(body):
        return [started(body), {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Hel"},
                {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"}, {"type": "TOOL_CALL_CHUNK", "delta": "{}"},
                finished(body)]

    session = session_for(ScriptedAgent(broken))
    await drain(session.send("a"))
    assert "needs an id" in session.error and session.transcript.status == "error"
    assert [m.content for m in session.transcript.messages if m.id == "m1"] == ["Hello"]


async def test_stream_ending_before_run_finished_is_an_error():
    def cut(body):
        return [started(body), *text("m1", "half an answ"),
                {"type": "CUSTOM", "name": "on_interrupt", "value": "approve?"}]

    session = session_for(ScriptedAgent(cut))
    await drain(session.send("a"))
    assert session.error and "before RUN_FINISHED" in session.error
    assert session.transcript.status == "error"
    assert session.tracker.pending is None  # S5: a truncated run surfaces nothing


async def test_http_error_on_a_normal_send():
    agent = ScriptedAgent(PlainTextResponse("bad input", status_code=422))
    session = session_for(agent)
    await drain(session.send("a"))
    assert "HTTP 422" in session.error and session.transcript.status == "error"
    await drain(session.send("b"))
    assert session.error is None


# -- cancellation -----------------------------------------------------------------------------------------------------

def long_stream(body: dict, ticks: int = 200) -> Stream:
    items: list = [started(body), {"type": "TEXT_MESSAGE_START", "messageId": "m1"}]
    for i in range(ticks):
        items += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"{i} "}, 0.05]
    return Stream([*items, {"type": "TEXT_MESSAGE_END", "messageId": "m1"}, finished(body)])


async def run_until(session: AgentSession, stream, count: int) -> tuple[asyncio.Task, list]:
    seen: list = []

    async def consume():
        async for event in stream:
            seen.append(event)

    task = asyncio.create_task(consume())
    while len(seen) < count:
        assert not task.done(), task
        await asyncio.sleep(0.01)
    return task, seen


@pytest.mark.loopback
async def test_session_cancel_during_a_long_stream(loopback):
    streams: list[Stream] = []

    def reply(body):
        streams.append(long_stream(body))
        return streams[-1]

    agent = ScriptedAgent(reply)
    session = AgentSession(AgentClient(loopback.mount(agent)), thread_id="t1")
    task, _ = await run_until(session, session.send("go"), 4)
    assert session.running
    assert session.cancel() is True
    await asyncio.wait_for(task, 1.5)  # the session records the stop; it never raises
    assert not session.running
    assert session.transcript.status == "cancelled"
    assert session.error is None
    assert not session.transcript.message("m1").streaming
    assert await asyncio.to_thread(streams[0].disconnected.wait, 5)
    await drain(session.send("again"))
    assert session.transcript.status == "finished" and session.error is None


@pytest.mark.loopback
async def test_session_cancel_during_resume_run_reoffers_the_interrupts(loopback):
    agent = ScriptedAgent(approval_run, long_stream)
    session = AgentSession(AgentClient(loopback.mount(agent)), thread_id="t1")
    await drain(session.send("go"))
    interrupted_run = agent.bodies[0]["runId"]
    task, _ = await run_until(session, session.submit(session.tracker.resolve({"approved": True})), 3)
    session.cancel()
    await asyncio.wait_for(task, 1.5)
    assert session.transcript.status == "cancelled"
    assert session.tracker.pending.run_id == interrupted_run and not session.tracker.sealed


@pytest.mark.loopback
async def test_session_cancel_before_the_resume_run_starts_keeps_answers(loopback):
    agent = ScriptedAgent(approval_run, lambda body: Stream([3.0, *resumed_run(body)]))
    session = AgentSession(AgentClient(loopback.mount(agent)), thread_id="t1")
    await drain(session.send("go"))
    stream = session.submit(session.tracker.resolve({"approved": True}))
    task = asyncio.create_task(drain(stream))
    while not session.running:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    session.cancel()
    await asyncio.wait_for(task, 1.5)
    assert session.tracker.answers and not session.tracker.sealed
    assert session.tracker.pending.ids == ["int-call_1"]


@pytest.mark.loopback
async def test_consumer_abandoning_the_stream_leaves_the_session_consistent(loopback):
    """E.g. the UI task driving the stream is cancelled: the run is stopped, nothing stays 'running'."""
    streams: list[Stream] = []

    def reply(body):
        streams.append(long_stream(body))
        return streams[-1]

    session = AgentSession(AgentClient(loopback.mount(ScriptedAgent(reply))), thread_id="t1")
    task, _ = await run_until(session, session.send("go"), 3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not session.running
    assert session.transcript.status == "cancelled"
    assert not session.tracker.streaming
    assert await asyncio.to_thread(streams[0].disconnected.wait, 5)


async def test_consumer_closing_the_stream_after_run_finished_still_surfaces_the_interrupt():
    agent = ScriptedAgent(approval_run)
    session = session_for(agent)
    async with contextlib.aclosing(session.send("go")) as stream:
        async for event in stream:
            if event.type == EventType.RUN_FINISHED:
                break
    assert session.tracker.pending is not None and session.tracker.pending.ids == ["int-call_1"]
    assert session.transcript.status == "finished" and session.error is None
    assert not session.running


# -- misc ----------------------------------------------------------------------------------------------------------

async def test_session_pickles_without_its_live_run():
    session, _ = await interrupted_session()
    session.client = AgentClient("http://agent.example/")
    clone = pickle.loads(pickle.dumps(session))
    assert clone.thread_id == "t1" and clone._run is None
    assert clone.tracker.pending.ids == ["int-call_1"]
    assert [m.id for m in clone.transcript.messages] == [m.id for m in session.transcript.messages]


def test_url_string_builds_a_client():
    session = AgentSession("http://agent.example/run")
    assert session.client.url == "http://agent.example/run"
    assert session.thread_id.startswith("thread-")
    assert session.build_input().thread_id == session.thread_id
