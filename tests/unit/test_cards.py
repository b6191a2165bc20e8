"""model/cards.py: the default slot's view model (S7, S11, S22), built from a real tracker and transcript."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import pytest
from ag_ui.core import (
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from interrupt_chat.agui import InterruptTracker, Transcript
from interrupt_chat.model.cards import Card, build_cards, legacy_fields, prompt_of, refresh_expiry

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)

APPROVE = {"type": "object", "required": ["approved"], "properties": {"approved": {"type": "boolean"}}}
EDIT = {"type": "object", "required": ["approved"],
        "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}}}
FORM = {"type": "object", "required": ["color"],
        "properties": {"color": {"type": "string", "enum": ["red", "green"]},
                       "api_key": {"type": "string", "format": "password"}}}


class Clock:
    def __init__(self, start: datetime = T0) -> None:
        self.value = start

    def __call__(self) -> datetime:
        return self.value


def surfaced(*interrupts: dict, legacy=None, clock=None, run_id: str = "r1") -> InterruptTracker:
    """A tracker whose run ``run_id`` ended with these standard interrupts and/or a legacy event."""
    tracker = InterruptTracker(now=clock or Clock())
    tracker.observe({"type": "RUN_STARTED", "threadId": "t1", "runId": run_id})
    if legacy is not None:
        tracker.observe({"type": "CUSTOM", "name": "on_interrupt", "value": legacy})
    finished = {"type": "RUN_FINISHED", "threadId": "t1", "runId": run_id}
    if interrupts:
        finished["outcome"] = {"type": "interrupt", "interrupts": list(interrupts)}
    tracker.observe(finished)
    tracker.finalize()
    assert tracker.pending is not None
    return tracker


def cards_of(tracker: InterruptTracker, transcript: Transcript | None = None) -> list[Card]:
    return build_cards(tracker.pending, tracker, transcript)


def transcript_with_call(call_id: str, name: str, args: dict, *, end: bool = True) -> Transcript:
    """A transcript built from the events a producer streams: text, then a tool call in two deltas."""
    transcript = Transcript()
    raw = json.dumps(args)
    for event in [
        RunStartedEvent(thread_id="t1", run_id="r1"),
        TextMessageStartEvent(message_id="m1", role="assistant"),
        TextMessageContentEvent(message_id="m1", delta="Let me do that."),
        TextMessageEndEvent(message_id="m1"),
        ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name, parent_message_id="m1"),
        ToolCallArgsEvent(tool_call_id=call_id, delta=raw[:5]),
        ToolCallArgsEvent(tool_call_id=call_id, delta=raw[5:]),
        *([ToolCallEndEvent(tool_call_id=call_id)] if end else []),
    ]:
        transcript.apply(event)
    return transcript


# -- standard sets -----------------------------------------------------------------------------------

def test_no_pending_no_cards():
    assert build_cards(None, InterruptTracker(), None) == []


def test_s22_one_card_per_interrupt_in_array_order():
    tracker = surfaced({"id": "b", "reason": "confirmation", "message": "Second?"},
                       {"id": "a", "reason": "input_required", "message": "First?"},
                       {"id": "c", "reason": "acme:custom_reason"})
    cards = cards_of(tracker)
    assert [(c.id, c.reason) for c in cards] == [("b", "confirmation"), ("a", "input_required"),
                                                ("c", "acme:custom_reason")]
    assert all(isinstance(c, Card) for c in cards)


@pytest.mark.parametrize(("fields", "prompt"), [
    ({"message": "Delete 3 files?", "metadata": {"tool_name": "rm"}, "reason": "tool_call"}, "Delete 3 files?"),
    ({"metadata": {"tool_name": "delete_files"}, "reason": "tool_call"}, "Approve call to delete_files?"),
    ({"message": "   ", "metadata": {"tool_name": "delete_files"}, "reason": "tool_call"},
     "Approve call to delete_files?"),
    ({"metadata": {"other": 1}, "reason": "strands:interrupt"}, "strands:interrupt"),
    ({"reason": "confirmation"}, "confirmation"),
])
def test_s22_prompt_rule(fields, prompt):
    assert prompt_of(fields) == prompt
    tracker = surfaced({"id": "i1", **fields})
    assert cards_of(tracker)[0].prompt == prompt


@pytest.mark.parametrize(("schema", "kind"), [
    (APPROVE, "approve"),
    (EDIT, "edit"),
    (FORM, "form"),
    (None, "confirm"),
    ({"type": "object"}, "confirm"),
    ({"type": "object", "properties": {}}, "confirm"),
])
def test_s22_card_kind(schema, kind):
    interrupt = {"id": "i1", "reason": "confirmation"}
    if schema is not None:
        interrupt["responseSchema"] = schema
    card = cards_of(surfaced(interrupt))[0]
    assert card.kind == kind
    assert (card.fields != []) == (kind == "form")
    assert (card.edit_args != "") == (kind == "edit")


def test_s22_form_card_fields_carry_no_values():
    card = cards_of(surfaced({"id": "i1", "reason": "input_required", "responseSchema": FORM}))[0]
    assert [(f.name, f.type, f.required) for f in card.fields] == [("color", "enum", True),
                                                                   ("api_key", "secret", False)]
    assert card.fields[0].options == ["red", "green"]
    assert card.fields[1].default == ""


def test_s22_edit_args_prefilled_from_the_transcripts_tool_call():
    args = {"path": "/tmp/reports", "count": 3, "note": "größe"}
    transcript = transcript_with_call("call-1", "delete_files", args)
    tracker = surfaced({"id": "int-call-1", "reason": "tool_call", "toolCallId": "call-1", "responseSchema": EDIT,
                        "metadata": {"tool_name": "other_name", "tool_input": {"ignored": True}}})
    card = cards_of(tracker, transcript)[0]
    assert card.kind == "edit"
    assert json.loads(card.edit_args) == args
    assert "größe" in card.edit_args  # not \\u-escaped
    assert card.tool_name == "delete_files"  # the transcript's call wins over metadata


def test_s22_edit_args_from_metadata_tool_input_without_a_tool_call():
    tracker = surfaced({"id": "i1", "reason": "tool_call", "responseSchema": EDIT,
                        "metadata": {"tool_name": "send_mail", "tool_input": {"to": "a@b.c"}}})
    card = cards_of(tracker, Transcript())[0]
    assert json.loads(card.edit_args) == {"to": "a@b.c"}
    assert card.tool_name == "send_mail"
    assert card.prompt == "Approve call to send_mail?"


def test_s22_edit_args_fall_back_to_metadata_while_the_call_is_unfinished():
    transcript = transcript_with_call("call-1", "delete_files", {"path": "/x"}, end=False)
    tracker = surfaced({"id": "i1", "reason": "tool_call", "toolCallId": "call-1", "responseSchema": EDIT,
                        "metadata": {"tool_input": {"path": "/from-metadata"}}})
    assert json.loads(cards_of(tracker, transcript)[0].edit_args) == {"path": "/from-metadata"}


def test_s22_edit_args_empty_object_when_nothing_is_known():
    tracker = surfaced({"id": "i1", "reason": "tool_call", "toolCallId": "unknown-call", "responseSchema": EDIT})
    assert json.loads(cards_of(tracker, None)[0].edit_args) == {}


# -- legacy sets -------------------------------------------------------------------------------------

def test_s22_legacy_string_value_is_the_prompt():
    cards = cards_of(surfaced(legacy="approval: publish the draft?"))
    assert len(cards) == 1
    card = cards[0]
    assert card.id == "" and card.prompt == "approval: publish the draft?"
    assert card.reason == "on_interrupt" and card.kind == "confirm"


def test_s22_legacy_object_value_is_used_like_a_standard_interrupt():
    value = {"message": "Send the weekly report?", "responseSchema": APPROVE, "reason": "confirmation",
             "unrelated": {"x": 1}}
    card = cards_of(surfaced(legacy=json.dumps(value)))[0]  # a JSON string value is parsed (S1)
    assert (card.id, card.prompt, card.kind, card.reason) == ("", "Send the weekly report?", "approve", "confirmation")


def test_s22_legacy_object_with_a_form_schema():
    card = cards_of(surfaced(legacy={"message": "Pick", "responseSchema": FORM}))[0]
    assert card.kind == "form" and [f.name for f in card.fields] == ["color", "api_key"]


def test_s22_legacy_question_key_is_the_prompt():
    card = cards_of(surfaced(legacy=json.dumps({"question": "Ship it?"})))[0]
    assert card.prompt == "Ship it?" and card.id == ""


def test_s22_legacy_fields():
    assert legacy_fields("plain") == {"message": "plain"}
    assert legacy_fields({"question": "q", "message": "m", "other": 1}) == {"question": "q", "message": "m"}
    assert legacy_fields(42) == {"message": "42"}
    assert legacy_fields([1, "a"]) == {"message": '[1, "a"]'}


def test_s02_both_flows_give_standard_cards_only():
    tracker = surfaced({"id": "s1", "reason": "confirmation", "message": "Standard"}, legacy="legacy prompt")
    assert [(c.id, c.prompt) for c in cards_of(tracker)] == [("s1", "Standard")]


def test_s22_legacy_card_has_no_answered_status():
    assert cards_of(surfaced(legacy="x"))[0].answered == ""


# -- S7: answered status -----------------------------------------------------------------------------

def test_s07_answered_status_after_resolving_one_of_several():
    tracker = surfaced(*[{"id": i, "reason": "confirmation", "responseSchema": APPROVE} for i in ("a", "b", "c")])
    assert tracker.resolve({"approved": True}, "b").kind == "waiting"
    assert [c.answered for c in cards_of(tracker)] == ["", "resolved", ""]
    assert tracker.cancel("c").kind == "waiting"
    assert [c.answered for c in cards_of(tracker)] == ["", "resolved", "cancelled"]
    assert tracker.cancel("b").kind == "waiting"  # S6: a later answer replaces the earlier one
    assert [c.answered for c in cards_of(tracker)] == ["", "cancelled", "cancelled"]


def test_s07_all_answered_before_the_resume_run_starts():
    tracker = surfaced({"id": "a", "reason": "confirmation"}, {"id": "b", "reason": "confirmation"})
    tracker.resolve({"approved": True}, "a")
    assert tracker.resolve(None, "b").kind == "resume"
    assert [c.answered for c in cards_of(tracker)] == ["resolved", "resolved"]  # S4: stays until RUN_STARTED


def test_s23_cards_never_hold_a_payload():
    secret = "sk-THE-SECRET-0042"
    tracker = surfaced({"id": "a", "reason": "input_required", "responseSchema": FORM}, {"id": "b", "reason": "x"})
    tracker.resolve({"color": "red", "api_key": secret}, "a")
    assert secret not in repr([asdict(c) for c in cards_of(tracker)])


# -- S11: expiry with an injected clock --------------------------------------------------------------

def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


def test_s11_seconds_left_counts_down():
    clock = Clock()
    tracker = surfaced({"id": "a", "reason": "confirmation", "expiresAt": at(30)}, clock=clock)
    card = cards_of(tracker)[0]
    assert (card.expires_at, card.seconds_left, card.expired) == (at(30), 30, False)
    clock.value = T0 + timedelta(seconds=29.2)
    card = cards_of(tracker)[0]
    assert (card.seconds_left, card.expired) == (1, False)  # rounded up: never shows 0 while answerable


def test_s11_expired_at_the_boundary():
    clock = Clock(T0 + timedelta(seconds=30))
    card = cards_of(surfaced({"id": "a", "reason": "confirmation", "expiresAt": at(30)}, clock=clock))[0]
    assert (card.seconds_left, card.expired) == (0, True)
    clock.value = T0 + timedelta(seconds=29.999)
    card = cards_of(surfaced({"id": "a", "reason": "confirmation", "expiresAt": at(30)}, clock=clock))[0]
    assert card.expired is False


def test_s11_long_expired():
    clock = Clock(T0 + timedelta(hours=2))
    card = cards_of(surfaced({"id": "a", "reason": "confirmation", "expiresAt": at(30)}, clock=clock))[0]
    assert (card.seconds_left, card.expired) == (0, True)


@pytest.mark.parametrize(("expires_at", "left"), [
    ("2026-11-30T12:00:10Z", 10),
    ("2026-11-30T12:00:10", 10),  # naive: UTC
    ("2026-11-30T13:00:10+01:00", 10),  # the offset is honoured
    ("2026-11-30T12:00:10.500+00:00", 11),
])
def test_s11_iso_8601_forms(expires_at, left):
    card = cards_of(surfaced({"id": "a", "reason": "confirmation", "expiresAt": expires_at}))[0]
    assert (card.seconds_left, card.expired) == (left, False)


@pytest.mark.parametrize("expires_at", ["tomorrow", "2026-13-45T99:00:00Z", "", "   "])
def test_s11_unparseable_expires_at_never_expires(expires_at):
    clock = Clock(T0 + timedelta(days=3650))
    card = cards_of(surfaced({"id": "a", "reason": "confirmation", "expiresAt": expires_at}, clock=clock))[0]
    assert card.expired is False and card.seconds_left == -1


def test_s11_refresh_expiry_returns_a_copy():
    card = cards_of(surfaced({"id": "a", "reason": "confirmation", "expiresAt": at(5)}))[0]
    before = asdict(card)
    later = refresh_expiry(card, T0 + timedelta(seconds=6))
    assert later is not card and (later.expired, later.seconds_left) == (True, 0)
    assert asdict(card) == before  # the original is untouched
    assert asdict(later) == {**before, "expired": True, "seconds_left": 0}


def test_s11_refresh_expiry_without_expiry_is_a_copy_too():
    card = cards_of(surfaced({"id": "a", "reason": "confirmation"}))[0]
    again = refresh_expiry(card, T0 + timedelta(days=1))
    assert again is not card and again == card and again.seconds_left == -1 and again.expired is False


def test_s11_legacy_object_with_expires_at():
    clock = Clock(T0 + timedelta(seconds=60))
    card = cards_of(surfaced(legacy={"message": "Hurry", "expiresAt": at(30)}, clock=clock))[0]
    assert card.expired is True and card.id == ""


def test_a_card_says_who_asks_from_metadata_the_langgraph_namespace_a_legacy_value_or_the_step():
    from interrupt_chat.model.cards import source_of

    assert source_of({"metadata": {"source": "billing"}}) == ("billing", True)
    assert source_of({"metadata": {"agent": "flights"}}, None, "plan") == ("flights", True)
    langgraph = {"metadata": {"langgraph": {"raw": {"message": "Pick one", "agent": "hotels"}, "ns": ["x:1"]}}}
    assert source_of(langgraph) == ("hotels", True)
    namespace = {"metadata": {"langgraph": {"raw": "plain", "ns": ["supervisor:1", "flights_agent:9f2"]}}}
    assert source_of(namespace) == ("flights_agent", True)
    assert source_of({"message": "Pick one"}, {"agent": "flights", "options": []}) == ("flights", True)  # legacy
    assert source_of({}, None, "plan") == ("plan", False)  # the step: data-source only, not named on the card
    assert source_of({"metadata": {"agent": ["not", "a", "name"]}}) == ("", False)
