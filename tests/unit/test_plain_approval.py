"""What a plain approval is (policies.approval_payload), read from each producer's recorded approval.

A plain approval asks for a boolean decision and nothing a person must type: the card offers the rule
buttons on it (P1) and a bulk action answers it. The interrupts are the producers' own, replayed from
tests/fixtures/streams (pydantic-ai's schema has an optional ``reason``; Microsoft Agent Framework's
adds ``accepted``, per-argument edits and an ``anyOf``; Google ADK's confirmation has no schema).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from ag_ui.core import Interrupt

from interrupt_chat.model import policies
from interrupt_chat.model.cards import build_cards
from interrupt_chat.model.forms import validate_payload
from interrupt_chat.model.policies import Rule
from tests.unit.test_replay import replay_until

# capture -> (the tool each of its approvals names, whether a rule may answer them)
APPROVALS = {
    "pydanticai_std_approve": (["delete_files"], True),
    "pydanticai_std_multi-mixed": (["delete_files", "send_report"], True),
    "strands_std_approve": (["delete_files"], True),
    "microsoft_std_approve": (["delete_files"], True),
    "adk_std_approve": (["delete_files"], True),  # the call ADK's confirmation asks about, not its own
    "langgraph_std_approval-approve": ([""], False),  # a graph node's interrupt(): no tool to remember
    "langgraph_std_multi-mixed": (["", ""], False),
}


@pytest.mark.parametrize("capture", list(APPROVALS))
def test_every_producers_approval_is_a_plain_approval(capture: str):
    replay, _, _ = replay_until(capture, 1)
    pending = replay.tracker.pending
    assert pending is not None and pending.kind == "standard"
    tools, remembered = APPROVALS[capture]
    cards = build_cards(pending, replay.tracker, replay.transcript, (), policies.remember_fn(None))
    assert cards and all(card.plain for card in cards), "bulk would skip it: 'not a plain approval'"
    assert [card.rememberable for card in cards] == [remembered] * len(cards), "the rule buttons"
    assert [policies.tool_name(i, replay.transcript) for i in pending.interrupts] == tools
    for interrupt in pending.interrupts:
        for effect, decision in (("allow", True), ("deny", False)):
            payload = policies.approval_payload(interrupt, effect)
            assert payload == {"approved": decision}  # the schema's own shape: optional fields left out
            validate_payload(interrupt.response_schema, payload)


@pytest.mark.parametrize("capture", [c for c, (_, remembered) in APPROVALS.items() if remembered])
def test_an_always_allow_rule_answers_every_producers_tool_approval(capture: str):
    replay, _, _ = replay_until(capture, 1)
    pending = replay.tracker.pending
    rules = [Rule(1, "delete_files", "always", "allow"), Rule(2, "send_report", "thread", "deny", "t1")]
    found = policies.answers_for(pending, set(), replay.transcript, rules, "t1", policies.remember_fn(None),
                                 datetime.now(UTC))
    assert [a.interrupt_id for a in found] == [i.id for i in pending.interrupts]
    assert [a.payload for a in found] == [{"approved": a.rule.effect == "allow"} for a in found]


def _approval(schema: Any, reason: str = "tool_call") -> Interrupt:
    return Interrupt(id="i1", reason=reason, response_schema=schema, tool_call_id="c1",
                     metadata={"tool_name": "delete_files"})


def test_a_required_field_with_a_default_is_filled_and_optional_ones_are_left_out():
    schema = {"type": "object", "required": ["approved", "scope"],
              "properties": {"approved": {"type": "boolean"}, "scope": {"type": "string", "default": "once"},
                             "note": {"type": "string", "default": "ignored: optional"}}}
    assert policies.approval_payload(_approval(schema), "allow") == {"approved": True, "scope": "once"}


@pytest.mark.parametrize("schema", [
    {"type": "object", "required": ["approved", "note"],  # asks for more: a person types it
     "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}}},
    {"type": "object", "required": ["accepted"], "properties": {"accepted": {"type": "boolean"}}},  # no decision
    {"type": "object", "properties": {"approved": {"type": "string"}}},  # not a boolean decision
    {"type": "object", "required": ["approved"], "properties": {"approved": {"type": "boolean"},
                                                               "token": {"type": "string", "writeOnly": True}}},
    {"type": "object", "required": ["approved", "scope"],  # a default the schema itself refuses
     "properties": {"approved": {"type": "boolean"}, "scope": {"type": "string", "enum": ["a"], "default": "b"}}},
], ids=["required-note", "no-approved", "string-approved", "secret", "bad-default"])
def test_what_asks_for_more_than_a_decision_is_not_plain(schema):
    interrupt = _approval(schema)
    assert policies.approval_payload(interrupt, "allow") is None
    assert not policies.rememberable(interrupt, "delete_files", policies.remember_fn(None))


def test_a_confirmation_is_a_tool_approval_only_when_it_names_its_tool():
    """Bound to a tool call, or its metadata names the tool (contracts §6.4); a confirmation naming none is not."""
    bound = _approval(None, reason="confirmation")
    assert policies.rememberable(bound, "delete_files", policies.remember_fn(None))
    named = Interrupt(id="i2", reason="confirmation", metadata={"tool_name": "delete_files"})
    assert policies.rememberable(named, "delete_files", policies.remember_fn(None))
    unnamed = Interrupt(id="i3", reason="confirmation", metadata={"source": "review_node"})
    assert not policies.tool_approval(unnamed)
