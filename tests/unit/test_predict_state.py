"""Predictive state updates (S33–S35): a tool's streaming argument mirrored into the shared state, the agent's
snapshot winning, and the person's answer to ``confirm_changes`` keeping or restoring it."""

from __future__ import annotations

import json

from ag_ui.core import (
    CustomEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from interrupt_chat.agui import AgentSession
from interrupt_chat.agui.frontend_tools import FrontendTool, FrontendTools, ToolWait
from interrupt_chat.agui.predict import Predictor, parse_predictions, rejects
from interrupt_chat.agui.records import session_from_record, session_record
from interrupt_chat.agui.transcript import Transcript

PREDICT = CustomEvent(name="PredictState", value=[{"state_key": "document", "tool": "write_document_local",
                                                   "tool_argument": "document"}])


def _stream(transcript: Transcript, call_id: str, name: str, args: str, step: int = 5) -> list[object]:
    seen = []
    transcript.apply(ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name))
    for i in range(0, len(args), step):
        transcript.apply(ToolCallArgsEvent(tool_call_id=call_id, delta=args[i:i + step]))
        seen.append(transcript.state.get("document") if isinstance(transcript.state, dict) else None)
    transcript.apply(ToolCallEndEvent(tool_call_id=call_id))
    return seen


def _run(transcript: Transcript) -> None:
    transcript.apply(RunStartedEvent(thread_id="t", run_id="r"))


def test_s33_the_state_follows_the_partial_argument_while_it_streams():
    transcript = Transcript()
    transcript.state = {"document": "old text", "title": "kept"}
    _run(transcript)
    transcript.apply(PREDICT)
    seen = _stream(transcript, "c1", "write_document_local", json.dumps({"document": "Once upon a time, a dog."}))
    assert seen[0] == "old text"  # '{"doc': no value yet
    grown = [s for s in seen if s != "old text"]
    assert grown == sorted(grown, key=len) and len(set(grown)) > 3  # it grows delta by delta
    assert transcript.state == {"document": "Once upon a time, a dog.", "title": "kept"}
    assert transcript.predictor.holding and transcript.predictor.prior == {"document": "old text", "title": "kept"}


def test_s33_only_the_announced_tool_in_this_run_moves_the_state():
    transcript = Transcript()
    _run(transcript)
    transcript.apply(PREDICT)
    _stream(transcript, "c1", "other_tool", json.dumps({"document": "no"}))
    assert transcript.state == {}
    _run(transcript)  # announcements are per run
    _stream(transcript, "c2", "write_document_local", json.dumps({"document": "no"}))
    assert transcript.state == {} and not transcript.predictor.holding


def test_s34_a_later_state_snapshot_wins():
    transcript = Transcript()
    _run(transcript)
    transcript.apply(PREDICT)
    args = json.dumps({"document": "predicted words here"})
    transcript.apply(ToolCallStartEvent(tool_call_id="c1", tool_call_name="write_document_local"))
    transcript.apply(ToolCallArgsEvent(tool_call_id="c1", delta=args[:20]))
    assert transcript.state["document"].startswith("pre")
    transcript.apply(StateSnapshotEvent(snapshot={"document": "the agent's own"}))
    transcript.apply(ToolCallArgsEvent(tool_call_id="c1", delta=args[20:]))
    transcript.apply(ToolCallEndEvent(tool_call_id="c1"))
    assert transcript.state == {"document": "the agent's own"}


def _waiting_confirm(session: AgentSession) -> None:
    session.tools = FrontendTools([FrontendTool("confirm_changes", "Keep the change?", {"type": "object"})])
    session.transcript.apply(ToolCallStartEvent(tool_call_id="ok", tool_call_name="confirm_changes"))
    session.transcript.apply(ToolCallArgsEvent(tool_call_id="ok", delta="{}"))
    session.transcript.apply(ToolCallEndEvent(tool_call_id="ok"))
    session.tool_waits = [ToolWait("ok", "confirm_changes", {})]


def _predicted_session() -> AgentSession:
    session = AgentSession("http://127.0.0.1:9/", thread_id="t")
    session.transcript.state = {"document": "before"}
    _run(session.transcript)
    session.transcript.apply(PREDICT)
    _stream(session.transcript, "c1", "write_document_local", json.dumps({"document": "after"}))
    _waiting_confirm(session)
    return session


async def test_s35_rejecting_the_change_restores_the_state_from_before_the_prediction():
    session = _predicted_session()
    assert session.transcript.state == {"document": "after"}
    restored = session_from_record(json.loads(json.dumps(session_record(session))))  # a reload in between
    restored.tools = FrontendTools([FrontendTool("confirm_changes", "Keep the change?", {"type": "object"})])
    await restored.respond("ok", {"accepted": False}).aclose()
    assert restored.transcript.state == {"document": "before"} and not restored.transcript.predictor.holding
    declined = _predicted_session()
    await declined.decline("ok").aclose()
    assert declined.transcript.state == {"document": "before"}


async def test_s35_keeping_the_change_forgets_the_old_state():
    session = _predicted_session()
    await session.respond("ok", {"accepted": True}).aclose()
    assert session.transcript.state == {"document": "after"} and not session.transcript.predictor.holding
    assert "prediction" not in session_record(session)


def test_s33_predictions_are_parsed_leniently_and_long_arguments_are_parsed_sparsely():
    assert parse_predictions('[{"state_key": "a", "tool": "t", "tool_argument": "x"}]')[0].tool == "t"
    assert parse_predictions([{"state_key": "a"}, "junk", None]) == [] and parse_predictions("not json") == []
    assert rejects('{"accepted": false}') and rejects({"accepted": False}) and not rejects({"accepted": True})
    predictor = Predictor()
    predictor.announce([{"state_key": "doc", "tool": "w", "tool_argument": "doc"}])
    predictor.call_started("c", "w")
    assert predictor.due("c", 100) and predictor.due("c", 16 * 1024)
    predictor.follow("c", '{"doc": "' + "a" * 20_000, {})
    assert not predictor.due("c", 20_100) and predictor.due("c", 21_400)  # a sixteenth more


def test_s35_a_pickled_copy_of_the_transcript_still_knows_whether_a_change_waits():
    import pickle

    transcript = Transcript()
    copy = pickle.loads(pickle.dumps(transcript))  # another worker's copy (Redis)
    assert not copy.predictor.holding and copy.predictor.export() is None
    session = _predicted_session()
    again = pickle.loads(pickle.dumps(session.transcript))
    assert again.predictor.holding and again.predictor.export() == {"prior": {"document": "before"}}
    json.dumps(session_record(session))  # a stored thread is plain JSON
