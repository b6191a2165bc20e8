"""InterruptTracker against rules S1-S15 (docs/semantics.md), one group per rule."""

from __future__ import annotations

import json
import logging
import pickle
from datetime import UTC, datetime, timedelta

import pytest
from ag_ui.core import CustomEvent, Interrupt, RunFinishedEvent, RunFinishedInterruptOutcome, RunStartedEvent

from interrupt_chat.agui import Decision, InterruptTracker

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


class Clock:
    def __init__(self, start: datetime = T0) -> None:
        self.value = start

    def __call__(self) -> datetime:
        return self.value


def started(run_id: str = "r1") -> dict:
    return {"type": "RUN_STARTED", "threadId": "t1", "runId": run_id}


def finished(run_id: str = "r1", *interrupts: dict) -> dict:
    event = {"type": "RUN_FINISHED", "threadId": "t1", "runId": run_id}
    if interrupts:
        event["outcome"] = {"type": "interrupt", "interrupts": list(interrupts)}
    return event


def intr(id_: str, reason: str = "confirmation", **extra) -> dict:
    return {"id": id_, "reason": reason, **extra}


def legacy(value) -> dict:
    return {"type": "CUSTOM", "name": "on_interrupt", "value": value}


def run(tracker: InterruptTracker, *events: dict, run_id: str = "r1") -> None:
    tracker.observe(started(run_id))
    for event in events:
        tracker.observe(event)
    tracker.finalize()


def standard(*ids: str, run_id: str = "r1", clock=None, **extra) -> InterruptTracker:
    tracker = InterruptTracker(now=clock)
    run(tracker, finished(run_id, *[intr(i, **extra) for i in ids]), run_id=run_id)
    return tracker


# -- S1 collect both flows ----------------------------------------------------------------------

def test_s01_standard_interrupts_collected_from_outcome():
    t = standard("a", "b")
    assert t.pending.kind == "standard"
    assert [i.id for i in t.pending.interrupts] == ["a", "b"]
    assert all(isinstance(i, Interrupt) for i in t.pending.interrupts)
    assert t.pending.run_id == "r1"


def test_s01_legacy_json_string_value_is_parsed():
    t = InterruptTracker()
    run(t, legacy(json.dumps({"question": "Ship it?"})), finished())
    assert t.pending.kind == "legacy"
    assert t.pending.interrupts == []
    assert t.pending.event == {"name": "on_interrupt", "value": {"question": "Ship it?"}}


def test_s01_legacy_plain_string_kept_as_string():
    t = InterruptTracker()
    run(t, legacy("approval: publish?"), finished())
    assert t.pending.event["value"] == "approval: publish?"


def test_s01_legacy_object_value_kept():
    t = InterruptTracker()
    run(t, legacy({"message": "hi", "reason": "x"}), finished())
    assert t.pending.event["value"] == {"message": "hi", "reason": "x"}


def test_s01_last_legacy_event_wins():
    t = InterruptTracker()
    run(t, legacy('{"n": 1}'), legacy('{"n": 2}'), finished())
    assert t.pending.event["value"] == {"n": 2}


def test_s01_typed_events_are_accepted_too():
    t = InterruptTracker()
    t.observe(RunStartedEvent(thread_id="t", run_id="r9"))
    t.observe(CustomEvent(name="on_interrupt", value="plain"))
    t.observe(RunFinishedEvent(thread_id="t", run_id="r9",
                               outcome=RunFinishedInterruptOutcome(interrupts=[Interrupt(id="x", reason="r")])))
    t.finalize()
    assert t.pending.kind == "standard" and t.pending.run_id == "r9"


# -- S2 standard wins -----------------------------------------------------------------------------

def test_s02_standard_wins_over_legacy_in_same_run():
    t = InterruptTracker()
    run(t, legacy('{"question": "old"}'), finished("r1", intr("s1")))
    assert t.pending.kind == "standard"
    assert [i.id for i in t.pending.interrupts] == ["s1"]


# -- S3 nothing while streaming -------------------------------------------------------------------

def test_s03_nothing_surfaced_until_finalize():
    t = InterruptTracker()
    t.observe(started())
    t.observe(legacy("x"))
    t.observe(finished("r1", intr("a")))
    assert t.pending is None
    assert t.resolve({"ok": 1}).kind == "ignored"
    t.finalize()
    assert t.pending is not None


def test_s03_run_without_interrupt_surfaces_nothing():
    t = InterruptTracker()
    run(t, finished())
    assert t.pending is None


# -- S4 RUN_STARTED clears ------------------------------------------------------------------------

def test_s04_run_started_clears_pending_answers_and_seal():
    t = standard("a")
    d = t.resolve({"approved": True})
    assert d.kind == "resume" and t.sealed
    assert t.pending is not None  # the card stays (disabled) until the resume run starts
    t.observe(started("r2"))
    assert t.pending is None and not t.sealed and t.answers == {}


def test_s04_answers_cleared_by_new_run():
    t = standard("a", "b")
    assert t.resolve(1, "a").kind == "waiting"
    t.observe(started("r2"))
    t.observe(finished("r2", intr("a"), intr("b")))
    t.finalize()
    assert t.answers == {}
    assert t.resolve(2, "b").kind == "waiting"


# -- S5 failed run discards -----------------------------------------------------------------------

def test_s05_run_error_discards_collected_interrupt():
    t = InterruptTracker()
    run(t, legacy("x"), {"type": "RUN_ERROR", "message": "boom"})
    assert t.pending is None
    assert t.error == "boom"


def test_s05_run_error_after_run_finished_still_fails():
    t = InterruptTracker()
    run(t, finished("r1", intr("a")), {"type": "RUN_ERROR", "message": "late"})
    assert t.pending is None


def test_s05_run_error_after_finalize_retracts_the_set():
    t = standard("a")
    t.observe({"type": "RUN_ERROR", "message": "late"})
    assert t.pending is None


def test_s05_transport_error_discards():
    t = InterruptTracker()
    t.observe(started())
    t.observe(finished("r1", intr("a")))
    t.fail(ConnectionError("dropped"))
    t.finalize()
    assert t.pending is None and "dropped" in t.error


# -- S6 resolve / cancel record -------------------------------------------------------------------

def test_s06_resolve_records_resolved_with_payload():
    t = standard("a")
    d = t.resolve({"approved": True})
    assert d.kind == "resume"
    entry = d.resume[0]
    assert (entry.interrupt_id, entry.status, entry.payload) == ("a", "resolved", {"approved": True})


def test_s06_cancel_records_cancelled_without_payload():
    t = standard("a")
    d = t.cancel()
    dumped = d.resume[0].model_dump(by_alias=True, exclude_none=True)
    assert dumped == {"interruptId": "a", "status": "cancelled"}


def test_s06_later_answer_replaces_earlier():
    t = standard("a", "b")
    t.resolve(1, "a")
    t.cancel("a")
    d = t.resolve(2, "b")
    assert [e.status for e in d.resume] == ["cancelled", "resolved"]


# -- S7 accumulate, resume once, array order ------------------------------------------------------

def test_s07_multi_interrupt_resumes_once_in_array_order():
    t = standard("a", "b", "c")
    assert t.resolve({"x": 3}, "c").kind == "waiting"
    assert t.cancel("a").kind == "waiting"
    d = t.resolve(None, "b")
    assert d.kind == "resume" and d.parent_run_id == "r1"
    wire = [e.model_dump(by_alias=True, exclude_none=True) for e in d.resume]
    assert wire == [
        {"interruptId": "a", "status": "cancelled"},
        {"interruptId": "b", "status": "resolved"},  # no payload given: no payload key
        {"interruptId": "c", "status": "resolved", "payload": {"x": 3}},
    ]
    assert "payload" not in d.resume[1].model_fields_set  # not even as an explicit None
    assert t.resolve(1, "a").kind == "ignored"  # and only once


# -- S8 omitted id with several open --------------------------------------------------------------

def test_s08_omitted_id_targets_first_and_warns(caplog):
    t = standard("a", "b")
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.agui.interrupts"):
        d = t.resolve({"v": 1})
    assert d.kind == "waiting"
    assert set(t.answers) == {"a"}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and "2" in warnings[0].getMessage()


def test_s08_single_open_interrupt_does_not_warn(caplog):
    t = standard("a")
    with caplog.at_level(logging.WARNING):
        t.resolve(True)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# -- S9 unknown id ----------------------------------------------------------------------------------

def test_s09_unknown_id_ignored_with_warning(caplog):
    t = standard("a")
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.agui.interrupts"):
        d = t.resolve({"v": 1}, "nope")
        d2 = t.cancel("nope")
    assert d.kind == "ignored" and d2.kind == "ignored"
    assert t.answers == {} and not t.sealed
    assert sum("nope" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING) == 2


# -- S10 exactly once ---------------------------------------------------------------------------------

def test_s10_double_click_sends_once():
    t = standard("a")
    assert t.resolve({"approved": True}).kind == "resume"
    assert t.resolve({"approved": True}).kind == "ignored"
    assert t.cancel().kind == "ignored"


def test_s10_legacy_resolve_sends_once():
    t = InterruptTracker()
    run(t, legacy("x"), finished())
    assert t.resolve("yes").kind == "legacy-resume"
    assert t.resolve("yes").kind == "ignored"


# -- S11 expiry ------------------------------------------------------------------------------------

def test_s11_resolve_on_expired_refused_cancel_allowed():
    clock = Clock()
    t = standard("a", clock=clock, expiresAt=(T0 + timedelta(seconds=30)).isoformat())
    clock.value = T0 + timedelta(seconds=31)
    assert t.resolve({"approved": True}).kind == "expired"
    assert t.answers == {}
    d = t.cancel()
    assert d.kind == "resume" and d.resume[0].status == "cancelled"


def test_s11_boundary_counts_as_expired():
    clock = Clock()
    t = standard("a", clock=clock, expiresAt="2026-11-30T12:00:30Z")
    clock.value = T0 + timedelta(seconds=30)
    assert t.resolve(1).kind == "expired"


def test_s11_offset_honoured_and_naive_is_utc():
    clock = Clock(T0 + timedelta(seconds=10))
    t = standard("a", clock=clock, expiresAt="2026-11-30T13:00:05+01:00")  # = 12:00:05Z
    assert t.resolve(1).kind == "expired"
    t2 = standard("a", clock=clock, expiresAt="2026-11-30T12:00:20")  # naive -> UTC, not yet
    assert t2.resolve(1).kind == "resume"


def test_s11_unparseable_never_expires():
    clock = Clock(T0 + timedelta(days=3650))
    t = standard("a", clock=clock, expiresAt="tomorrow-ish")
    assert t.resolve(1).kind == "resume"


def test_s11_member_expired_by_submission_is_sent_cancelled():
    clock = Clock()
    t = InterruptTracker(now=clock)
    run(t, finished("r1", intr("a", expiresAt="2026-11-30T12:00:30+00:00"), intr("b")))
    assert t.resolve({"ok": True}, "a").kind == "waiting"
    clock.value = T0 + timedelta(minutes=5)
    d = t.resolve({"ok": True}, "b")
    wire = [e.model_dump(by_alias=True, exclude_none=True) for e in d.resume]
    assert wire == [{"interruptId": "a", "status": "cancelled"},
                    {"interruptId": "b", "status": "resolved", "payload": {"ok": True}}]


# -- S12 resume decision --------------------------------------------------------------------------

def test_s12_resume_decision_names_interrupting_run():
    t = standard("a", run_id="run-42")
    d = t.resolve({"approved": False})
    assert d.parent_run_id == "run-42"
    assert d.resume[0].payload == {"approved": False}  # a denial is an answer, not a cancel


# -- S13 legacy resume ----------------------------------------------------------------------------

def test_s13_legacy_resume_forwarded_props_with_raw_event_value():
    raw = json.dumps({"question": "Ship it?"})
    t = InterruptTracker()
    run(t, legacy(raw), finished("rL"), run_id="rL")
    d = t.resolve({"approved": True})
    assert d.kind == "legacy-resume" and d.parent_run_id == "rL"
    assert d.forwarded_props == {"command": {"resume": {"approved": True}, "interruptEvent": raw}}
    assert d.resume is None


def test_s13_legacy_resume_without_payload_has_no_resume_key():
    t = InterruptTracker()
    run(t, legacy("approval: go"), finished())
    d = t.resolve()
    assert d.forwarded_props == {"command": {"interruptEvent": "approval: go"}}


# -- S14 legacy cancel dismisses --------------------------------------------------------------------

def test_s14_legacy_cancel_dismisses_and_warns(caplog):
    t = InterruptTracker()
    run(t, legacy("x"), finished())
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.agui.interrupts"):
        d = t.cancel()
    assert d.kind == "dismiss" and d.resume is None and d.forwarded_props is None
    assert t.pending is None
    assert any(r.levelno == logging.WARNING for r in caplog.records)


# -- S15 failures around the resume ---------------------------------------------------------------

def test_s15_submission_failure_keeps_answers_and_lifts_seal():
    t = standard("a", "b")
    t.resolve(1, "a")
    d = t.resolve(2, "b")
    assert d.kind == "resume" and t.sealed
    t.submission_failed("HTTP 500")
    assert not t.sealed and set(t.answers) == {"a", "b"}
    again = t.resolve(3, "b")
    assert again.kind == "resume" and [e.payload for e in again.resume] == [1, 3]


def test_s15_fail_before_run_started_counts_as_submission_failure():
    t = standard("a")
    t.resolve(1)
    t.fail("connection refused")
    assert t.pending is not None and not t.sealed and "a" in t.answers


def test_s15_resume_run_error_reoffers_interrupts_of_last_interrupted_run():
    t = standard("a", "b", run_id="r1")
    t.resolve(1, "a")
    t.resolve(2, "b")
    t.observe(started("r2"))
    t.observe({"type": "RUN_ERROR", "message": "bad payload", "code": "INVALID_PAYLOAD"})
    t.finalize()
    assert t.pending is not None and [i.id for i in t.pending.interrupts] == ["a", "b"]
    assert t.pending.run_id == "r1"
    assert t.answers == {} and not t.sealed
    assert t.resolve(5, "a").kind == "waiting"
    d = t.cancel("b")
    assert d.kind == "resume" and d.parent_run_id == "r1"


def test_s15_resume_run_success_clears_owed():
    t = standard("a")
    t.resolve(1)
    run(t, finished("r2"), run_id="r2")
    t.fail("later unrelated failure")
    assert t.pending is None


# -- misc: robustness and persistence --------------------------------------------------------------

def test_unknown_and_malformed_events_never_raise():
    t = InterruptTracker()
    t.observe({"type": "SOMETHING_NEW", "x": 1})
    t.observe({"type": "RUN_FINISHED"})  # missing ids: malformed, ignored
    t.observe({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "suspended"}})
    t.observe("not even a dict")
    t.finalize()
    assert t.pending is None


SECRET_SCHEMA = {"type": "object", "properties": {"api_key": {"type": "string", "format": "password"}}}


def test_s23_pickle_leaves_out_answers_holding_a_secret():
    t = InterruptTracker()
    run(t, finished("r1", intr("a", responseSchema=SECRET_SCHEMA), intr("b"), intr("c")))
    t.resolve({"api_key": "s3cr3t"}, "a")
    t.resolve({"note": "kept"}, "b")
    blob = pickle.dumps(t)
    assert b"s3cr3t" not in blob
    restored = pickle.loads(blob)
    assert [i.id for i in restored.pending.interrupts] == ["a", "b", "c"]
    assert set(restored.answers) == {"b"}  # S7 still accumulates across a round trip; "a" is asked again


def test_s10_seal_survives_a_round_trip():
    t = standard("a", "b")
    t.resolve(1, "a")
    assert t.resolve(2, "b").kind == "resume"
    restored = pickle.loads(pickle.dumps(t))
    assert restored.sealed and restored.resolve(3, "a").kind == "ignored"


def test_decision_is_plain_data():
    assert Decision("ignored").sends is False
    with pytest.raises(AttributeError):
        Decision("ignored").kind = "resume"  # frozen
