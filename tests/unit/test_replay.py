"""Replay the recorded producer streams (tests/fixtures/streams/) through the protocol core, offline.

Every capture ``<flow>_<n>.jsonl`` is one test: runs 1..n of its flow go through the core pipeline a session uses
(``parse_event`` -> ``ChunkExpander`` -> ``Verifier`` -> ``Transcript.apply`` + ``InterruptTracker.observe``, then
``finalize``), with a fresh expander and verifier per run and one transcript and tracker per thread. Between runs
the replay does what a chat would: a user turn adds the request's user message; a resume turn answers the
interrupts through the tracker exactly as the recorded request did, and the tracker's decision must match that
request (S7, S13) unless the capture deliberately sent an uncovered resume. The capture's own run is then checked
against ``EXPECT``: which channel surfaced the interrupt (standard wins on ``/std`` routes, S2; legacy on
``/legacy`` routes, S1), its reasons, the follow-up text in the transcript, tool call statuses, errors (S5, S15).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import BaseEvent, EventType

from interrupt_chat.agui import ChunkExpander, InterruptTracker, Transcript, Verifier, parse_event

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "streams"
INDEX = json.loads((STREAMS / "index.json").read_text())
FLOWS = {flow["key"]: flow for flow in INDEX["flows"]}


@dataclass(frozen=True)
class Expect:
    """What the core must hold after one run of a capture."""

    channel: str | None = None  # "standard" | "legacy" | None: nothing pending after the run
    reasons: tuple[str, ...] = ()  # reasons of the pending interrupts (standard), or of the legacy value
    text: str | None = None  # the last assistant message's text in the transcript
    error: str | None = None  # a substring of the run's error (RUN_ERROR)
    tool_calls: dict[str, str] = field(default_factory=dict)  # tool call id -> status
    tool_results: dict[str, str] = field(default_factory=dict)  # tool call id -> result text


CONFIRM, FORM, TOOL = ("confirmation",), ("input_required",), ("tool_call",)
STD, LEGACY = "standard", "legacy"
AWAIT, DONE = "awaiting_approval", "complete"

EXPECT: dict[tuple[str, int], Expect] = {
    # LangGraph, emit_interrupt_outcome=True: CUSTOM and RUN_FINISHED.outcome in the same run -> standard (S2)
    ("langgraph_std_approval-approve", 1): Expect(STD, CONFIRM),
    ("langgraph_std_approval-approve", 2): Expect(text="approved: True"),
    ("langgraph_std_approval-reject", 1): Expect(STD, CONFIRM),
    ("langgraph_std_approval-reject", 2): Expect(text="approved: False"),
    ("langgraph_std_approval-cancel", 1): Expect(STD, CONFIRM),
    ("langgraph_std_approval-cancel", 2): Expect(text="cancelled"),
    ("langgraph_std_form-submit", 1): Expect(STD, FORM),
    ("langgraph_std_form-submit", 2): Expect(text="name=Ada count=3"),
    ("langgraph_std_form-cancel", 1): Expect(STD, FORM),
    ("langgraph_std_form-cancel", 2): Expect(text="cancelled"),
    ("langgraph_std_multi-mixed", 1): Expect(STD, CONFIRM * 2),
    ("langgraph_std_multi-mixed", 2): Expect(text="first: approved: True; second: cancelled"),
    ("langgraph_std_multi-partial", 1): Expect(STD, CONFIRM * 2),
    ("langgraph_std_multi-partial", 2): Expect(STD, CONFIRM),  # the uncovered one comes back
    ("langgraph_std_multi-partial", 3): Expect(text="first: approved: True; second: approved: False"),
    ("langgraph_std_approval-newmessage", 1): Expect(STD, CONFIRM),
    ("langgraph_std_approval-newmessage", 2): Expect(STD, CONFIRM),  # re-raised, still both channels
    # LangGraph, default flags: CUSTOM on_interrupt only -> legacy (S1)
    ("langgraph_legacy_approval-approve", 1): Expect(LEGACY, CONFIRM),
    ("langgraph_legacy_approval-approve", 2): Expect(text="approved: True"),
    ("langgraph_legacy_approval-reject", 1): Expect(LEGACY, CONFIRM),
    ("langgraph_legacy_approval-reject", 2): Expect(text="approved: False"),
    ("langgraph_legacy_form-submit", 1): Expect(LEGACY, FORM),
    ("langgraph_legacy_form-submit", 2): Expect(text="name=Ada count=3"),
    ("langgraph_legacy_multi-legacyresume", 1): Expect(LEGACY, CONFIRM),  # two CUSTOM events: the last wins (S1)
    ("langgraph_legacy_multi-legacyresume", 2): Expect(LEGACY, CONFIRM, error="multiple pending interrupts"),
    ("langgraph_legacy_approval-newmessage", 1): Expect(LEGACY, CONFIRM),
    ("langgraph_legacy_approval-newmessage", 2): Expect(LEGACY, CONFIRM),
    # pydantic-ai: standard only; tool-bound interrupts, results in the resumed run
    ("pydanticai_std_hello", 1): Expect(text="Hello! Say anything else and I will ask to delete some files."),
    ("pydanticai_std_approve", 1): Expect(STD, TOOL, tool_calls={"call_1_1": AWAIT}),
    ("pydanticai_std_approve", 2): Expect(text="Tool said: deleted 3 files in /tmp/demo", tool_calls={"call_1_1": DONE},
                                          tool_results={"call_1_1": "deleted 3 files in /tmp/demo"}),
    ("pydanticai_std_approve", 3): Expect(text="Hello! Say anything else and I will ask to delete some files.",
                                          tool_calls={"call_1_1": DONE}),
    ("pydanticai_std_deny", 1): Expect(STD, TOOL, tool_calls={"call_1_1": AWAIT}),
    ("pydanticai_std_deny", 2): Expect(text="Tool said: The tool call was denied.", tool_calls={"call_1_1": DONE},
                                       tool_results={"call_1_1": "The tool call was denied."}),
    ("pydanticai_std_edit", 1): Expect(STD, TOOL, tool_calls={"call_1_1": AWAIT}),
    ("pydanticai_std_edit", 2): Expect(text="Tool said: deleted 1 files in /tmp/other", tool_calls={"call_1_1": DONE},
                                       tool_results={"call_1_1": "deleted 1 files in /tmp/other"}),
    ("pydanticai_std_cancel", 1): Expect(STD, TOOL, tool_calls={"call_1_1": AWAIT}),
    ("pydanticai_std_cancel", 2): Expect(text="Tool said: Cancelled by user.", tool_calls={"call_1_1": DONE},
                                         tool_results={"call_1_1": "Cancelled by user."}),
    ("pydanticai_std_multi-mixed", 1): Expect(STD, TOOL * 2, tool_calls={"call_1_1": AWAIT, "call_1_2": AWAIT}),
    ("pydanticai_std_multi-mixed", 2): Expect(text="Tool said: deleted 3 files in /tmp/demo; Cancelled by user.",
                                              tool_calls={"call_1_1": DONE, "call_1_2": DONE},
                                              tool_results={"call_1_1": "deleted 3 files in /tmp/demo",
                                                            "call_1_2": "Cancelled by user."}),
    ("pydanticai_std_multi-partial", 1): Expect(STD, TOOL * 2, tool_calls={"call_1_1": AWAIT, "call_1_2": AWAIT}),
    # the producer strips the unanswered call and succeeds: nothing pending, call_1_2 never gets a result
    ("pydanticai_std_multi-partial", 2): Expect(text="Tool said: deleted 3 files in /tmp/demo",
                                                tool_calls={"call_1_1": DONE, "call_1_2": "running"}),
    ("pydanticai_std_badpayload", 1): Expect(STD, TOOL, tool_calls={"call_1_1": AWAIT}),
    # S15: the run failed after RUN_STARTED; the interrupt is offered again, its call still awaits approval
    ("pydanticai_std_badpayload", 2): Expect(STD, TOOL, error="does not match the `responseSchema`",
                                             tool_calls={"call_1_1": AWAIT}),
    # one approval run of each other producer: the approval shapes (tests/unit/test_plain_approval.py)
    ("strands_std_approve", 1): Expect(STD, TOOL, tool_calls={"call_1_1": AWAIT}),
    ("microsoft_std_approve", 1): Expect(STD, TOOL, tool_calls={"call_1": AWAIT}),
    ("adk_std_approve", 1): Expect(STD, CONFIRM, tool_calls={"adk-0a8001da-9cfa-456a-9d50-e366218d2989": AWAIT}),
}

CAPTURES = sorted(STREAMS.glob("*.jsonl"))


def _split(path: Path) -> tuple[str, int]:
    key, _, n = path.stem.rpartition("_")
    return key, int(n)


def _load(key: str, n: int) -> tuple[list[dict], dict]:
    stem = STREAMS / f"{key}_{n}"
    events = [json.loads(line) for line in stem.with_suffix(".jsonl").read_text().splitlines() if line.strip()]
    request = json.loads(stem.with_name(stem.name + ".request.json").read_text())
    return events, request


# --- the offline pipeline --------------------------------------------------------------------------------------


class Replay:
    """One thread replayed through the core: the stages an ``AgentSession`` chains, without the transport."""

    def __init__(self) -> None:
        self.transcript = Transcript()
        self.tracker = InterruptTracker()
        self.errors: list[str] = []

    def run(self, wire_events: list[dict]) -> list[BaseEvent]:
        chunks, verifier, out = ChunkExpander(), Verifier(), []
        for wire in wire_events:
            parsed = parse_event(wire)
            assert parsed is not None, f"the core dropped a known event: {wire}"
            for event in chunks.feed(parsed):
                out.append(self._apply(verifier, event))
        for event in chunks.flush():
            out.append(self._apply(verifier, event))
        self.tracker.finalize()
        pending = self.tracker.pending  # as AgentSession._after_run: tool calls an open interrupt names
        self.transcript.set_awaiting({i.tool_call_id for i in pending.interrupts if i.tool_call_id} if pending else ())
        return out

    def _apply(self, verifier: Verifier, event: BaseEvent) -> BaseEvent:
        verifier.check(event)  # raises ProtocolViolation: the test fails
        self.transcript.apply(event)
        self.tracker.observe(event)
        if event.type == EventType.RUN_ERROR:
            self.errors.append(self.transcript.error or "")
        return event

    # what the chat does before run n

    def user_turn(self, request: dict) -> None:
        message = request["messages"][-1]
        assert message["role"] == "user", "a user turn ends with the user's message"
        self.transcript.add_user_message(message["id"], message["content"])

    def resume_turn(self, request: dict) -> Any:
        """Answer as the recorded request did; return the tracker's last decision."""
        decision = None
        for entry in request["resume"]:
            if entry["status"] == "cancelled":
                decision = self.tracker.cancel(entry["interruptId"])
            else:
                decision = self.tracker.resolve(entry.get("payload"), entry["interruptId"])
        return decision

    def legacy_turn(self, request: dict) -> Any:
        return self.tracker.resolve(request["forwardedProps"]["command"]["resume"])


def _history(messages: list[dict]) -> list[tuple]:
    """The parts of a message history that a producer relies on (ids, roles, tool calls, tool results)."""
    out = []
    for m in messages:
        calls = tuple((c["id"], c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
                      for c in m.get("toolCalls") or ())
        out.append((m["id"], m["role"], m.get("content") or None, calls, m.get("toolCallId")))
    return out


def replay_until(key: str, last: int) -> tuple[Replay, list[BaseEvent], list[dict]]:
    """Replay runs 1..last of a flow; return the replay, the core's events of run ``last`` and its wire events."""
    flow = FLOWS[key]
    replay = Replay()
    events: list[BaseEvent] = []
    wire: list[dict] = []
    for run in flow["runs"][:last]:
        n, sends = run["n"], run["sends"]
        wire, request = _load(key, n)
        if sends == "user":
            replay.user_turn(request)
        elif sends == "resume":
            pending = replay.tracker.pending
            decision = replay.resume_turn(request)
            covered = {e["interruptId"] for e in request["resume"]} == set(pending.ids)
            if covered:  # S7: one resume, protocol order, payload only on resolved entries
                assert decision.kind == "resume", decision
                assert [e.model_dump(by_alias=True, exclude_none=True) for e in decision.resume] == request["resume"]
                # S12: the history the core would send is the one the producer accepted
                sent = [m.model_dump(mode="json", by_alias=True, exclude_none=True)
                        for m in replay.transcript.to_messages()]
                assert _history(sent) == _history(request["messages"])
            else:  # coverage: the core waits for the rest; the capture sent it anyway (producer behaviour)
                assert decision.kind == "waiting", decision
        elif sends == "legacy":
            decision = replay.legacy_turn(request)
            assert decision.kind == "legacy-resume", decision  # S13
            assert decision.forwarded_props["command"]["resume"] == request["forwardedProps"]["command"]["resume"]
            assert "resume" not in request or not request["resume"]
        events = replay.run(wire)
    return replay, events, wire


# --- tests -----------------------------------------------------------------------------------------------------


def test_every_capture_has_an_expectation_and_an_index_entry():
    keys = {_split(path) for path in CAPTURES}
    assert keys == set(EXPECT), "EXPECT must cover exactly the recorded captures"
    indexed = {(flow["key"], run["n"]) for flow in INDEX["flows"] for run in flow["runs"]}
    assert keys == indexed


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.stem)
def test_replay_capture_through_the_core(capture: Path):
    key, n = _split(capture)
    flow, expect = FLOWS[key], EXPECT[(key, n)]
    replay, events, wire = replay_until(key, n)

    # the core passed on every event the producer sent (no chunk expansion needed, none dropped)
    assert [e.type.value for e in events] == FLOWS[key]["runs"][n - 1]["events"].split(", ")
    assert [w["type"] for w in wire] == [e.type.value for e in events]

    tracker, transcript = replay.tracker, replay.transcript
    pending = tracker.pending
    if expect.channel is None:
        assert pending is None, f"nothing should be pending, got {pending}"
    else:
        assert pending is not None and pending.kind == expect.channel
        if expect.channel == STD:
            assert [i.reason for i in pending.interrupts] == list(expect.reasons)
            assert pending.event["value"] == pending.interrupts[0]  # S19
            if flow["producer"] == "pydanticai":
                assert all(i.tool_call_id and i.id == f"int-{i.tool_call_id}" for i in pending.interrupts)
        else:
            assert pending.interrupts == []
            assert isinstance(pending.event["value"], dict), "S1: a JSON string value is parsed"
            assert (pending.event["value"]["reason"],) == expect.reasons
            assert isinstance(pending.raw_value, str)  # kept as received for S13's interruptEvent

    if expect.error is None:
        assert replay.errors == [] and tracker.error is None
        assert transcript.status in ("finished", "cancelled")
    else:
        assert any(expect.error in e for e in replay.errors), replay.errors
        assert transcript.status == "error"

    if expect.text is not None:
        assistant = [m for m in transcript.messages if m.role == "assistant" and m.content]
        assert assistant and assistant[-1].content == expect.text
    for call_id, status in expect.tool_calls.items():
        assert transcript.tool_calls[call_id].status == status, call_id
    for call_id, result in expect.tool_results.items():
        assert transcript.tool_calls[call_id].result == result
    if not expect.tool_calls:
        assert transcript.tool_calls == {}


def _has_both_channels(wire: list[dict]) -> bool:
    custom = any(e["type"] == "CUSTOM" and e.get("name") == "on_interrupt" for e in wire)
    outcome = any(e["type"] == "RUN_FINISHED" and (e.get("outcome") or {}).get("type") == "interrupt" for e in wire)
    return custom and outcome


@pytest.mark.parametrize("key", [k for k, f in FLOWS.items() if f["mode"] == "std" and f["producer"] == "langgraph"])
def test_s02_standard_wins_on_langgraph_std_captures(key: str):
    """ag-ui-langgraph with emit_interrupt_outcome=True sends CUSTOM *and* the outcome: the outcome's ids win."""
    wire, _ = _load(key, 1)
    assert _has_both_channels(wire)
    replay, _, _ = replay_until(key, 1)
    outcome = next(e for e in wire if e["type"] == "RUN_FINISHED")["outcome"]
    assert replay.tracker.pending.kind == STD
    assert replay.tracker.pending.ids == [i["id"] for i in outcome["interrupts"]]


@pytest.mark.parametrize("key", [k for k, f in FLOWS.items() if f["mode"] == "legacy"])
def test_s01_legacy_captures_have_no_outcome(key: str):
    wire, _ = _load(key, 1)
    finished = next(e for e in wire if e["type"] == "RUN_FINISHED")
    assert "outcome" not in finished
    replay, _, _ = replay_until(key, 1)
    assert replay.tracker.pending.kind == LEGACY
    assert replay.tracker.pending.run_id == finished["runId"]


def test_s15_failed_resume_reoffers_the_interrupt_of_the_interrupting_run():
    replay, _, _ = replay_until("pydanticai_std_badpayload", 2)
    pending = replay.tracker.pending
    assert pending.run_id == "pydanticai-std-badpayload-run1"  # the next resume's parentRunId
    assert replay.tracker.answers == {} and not replay.tracker.sealed
    decision = replay.tracker.resolve({"approved": True})
    assert decision.kind == "resume" and decision.parent_run_id == "pydanticai-std-badpayload-run1"


def test_s12_pydantic_ai_resume_history_carries_the_assistant_tool_calls():
    """The core rebuilds the assistant message with toolCalls from TOOL_CALL_* (empty text message as parent)."""
    replay, _, wire = replay_until("pydanticai_std_multi-mixed", 1)
    parent = next(e["messageId"] for e in wire if e["type"] == "TEXT_MESSAGE_START")
    sent = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in replay.transcript.to_messages()]
    assert [m["role"] for m in sent] == ["user", "assistant"]
    assistant = sent[1]
    assert assistant["id"] == parent and "content" not in assistant
    assert [(c["id"], c["type"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in assistant["toolCalls"]] == [
        ("call_1_1", "function", "delete_files", {"path": "/tmp/demo", "count": 3}),
        ("call_1_2", "function", "send_report", {"to": "ada@example.com"}),
    ]


def test_tool_results_are_placed_after_their_assistant_message():
    """pydantic-ai sends the cancelled call's result first: both land right after the assistant message."""
    replay, _, _ = replay_until("pydanticai_std_multi-mixed", 2)
    roles = [(m.role, m.tool_call_id) for m in replay.transcript.messages]
    assert roles == [("user", None), ("assistant", None), ("tool", "call_1_2"), ("tool", "call_1_1"),
                     ("assistant", None)]


def test_langgraph_state_snapshot_messages_are_not_rendered():
    """STATE_SNAPSHOT.snapshot.messages holds LangChain dicts: the transcript takes messages from MESSAGES_SNAPSHOT."""
    replay, _, wire = replay_until("langgraph_std_approval-approve", 2)
    assert any(e["type"] == "STATE_SNAPSHOT" and e["snapshot"].get("messages") for e in wire)
    assert [(m.role, m.content) for m in replay.transcript.messages] == [
        ("user", "delete my files"), ("assistant", "approved: True")]
    assert not any(e["type"].startswith("TEXT_MESSAGE") for e in wire)  # the answer came only in the snapshot
