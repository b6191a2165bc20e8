"""Rules that fit (issue 43): argument conditions, expiry, the tool's fingerprint, and the one evaluation of a
surfacing set (:func:`interrupt_chat.model.policies.surface`): file rules before the person's, shadow, pause."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ag_ui.core import (
    Interrupt,
    RunStartedEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from interrupt_chat.agui import Transcript
from interrupt_chat.agui.interrupts import Pending
from interrupt_chat.model import conditions, policies
from interrupt_chat.model.policies import Rule
from interrupt_chat.model.policy_file import FileRule, Risk

APPROVAL = {"type": "object", "required": ["approved"],
            "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}}}
NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
EVERY = policies.remember_fn(None)


def _interrupt(id: str = "i1", tool: str = "pay_invoice", args: Any = None, *, reason: str = "tool_call",
               schema: Any = APPROVAL, **extra: Any) -> Interrupt:
    metadata: dict[str, Any] = {"tool_name": tool, **extra.pop("metadata", {})}
    if args is not None:
        metadata["tool_input"] = args
    return Interrupt(id=id, reason=reason, tool_call_id=extra.pop("tool_call_id", f"call-{id}"),
                     response_schema=schema, metadata=metadata, **extra)


def _pending(*interrupts: Interrupt, kind: str = "standard") -> Pending:
    return Pending(kind, list(interrupts), {"name": "on_interrupt", "value": None}, "run-1")


def _surface(*interrupts: Interrupt, rules: list[Rule] | None = None, file_rules: tuple[FileRule, ...] = (),
             remember: policies.RememberFn = EVERY, paused: bool = False, kind: str = "standard",
             transcript: Transcript | None = None) -> policies.Surfacing:
    return policies.surface(_pending(*interrupts, kind=kind), set(), transcript, rules or [], "t1", remember, NOW,
                            file_rules=file_rules, paused=paused)


# -- the operators ---------------------------------------------------------------------------------------------


def test_equals_is_json_equality_strict_about_types():
    assert conditions.holds({"amount": {"equals": 100}}, {"amount": 100.0})
    assert not conditions.holds({"amount": {"equals": 100}}, {"amount": "100"})
    assert not conditions.holds({"amount": {"equals": "100"}}, {"amount": 100})
    assert not conditions.holds({"flag": {"equals": True}}, {"flag": 1})
    assert not conditions.holds({"flag": {"equals": 1}}, {"flag": True})
    assert conditions.holds({"flag": {"equals": False}}, {"flag": False})
    assert not conditions.holds({"x": {"equals": None}}, {"x": 0})
    assert conditions.holds({"to": {"equals": ["a", 1]}}, {"to": ["a", 1.0]})
    assert not conditions.holds({"to": {"equals": ["a", 1]}}, {"to": ["a", True]})
    assert conditions.holds({"o": {"equals": {"k": [1]}}}, {"o": {"k": [1]}})
    assert not conditions.holds({"o": {"equals": {"k": [1]}}}, {"o": {"k": [1], "extra": 2}})


def test_matches_is_a_case_sensitive_glob_on_strings_only():
    when = {"to": {"matches": "*@example.com"}}
    assert conditions.holds(when, {"to": "bob@example.com"})
    assert not conditions.holds(when, {"to": "bob@example.com.evil.org"})
    assert not conditions.holds(when, {"to": "bob@EXAMPLE.com"})
    assert not conditions.holds(when, {"to": ["bob@example.com"]})  # not a string: fails
    assert conditions.holds({"id": {"matches": "inv-??"}}, {"id": "inv-42"})
    assert not conditions.holds({"n": {"matches": "4*"}}, {"n": 42})


def test_at_most_and_at_least_compare_numbers_only():
    assert conditions.holds({"amount": {"at-most": 1000}}, {"amount": 1000})
    assert conditions.holds({"amount": {"at-most": 1000}}, {"amount": 999.5})
    assert not conditions.holds({"amount": {"at-most": 1000}}, {"amount": 1000.01})
    assert not conditions.holds({"amount": {"at-most": 1000}}, {"amount": "5"})  # a numeric string fails
    assert not conditions.holds({"amount": {"at-most": 1000}}, {"amount": True})  # a bool is not a number
    assert not conditions.holds({"amount": {"at-most": 1000}}, {"amount": math.nan})
    assert not conditions.holds({"amount": {"at-least": 0}}, {"amount": math.inf})
    assert not conditions.holds({"amount": {"at-most": 0}}, {"amount": -math.inf})
    both = {"amount": {"at-least": 10, "at-most": 20}}  # several ops on one argument: all hold
    assert conditions.holds(both, {"amount": 15}) and not conditions.holds(both, {"amount": 5})


def test_one_of_uses_the_same_equality():
    when = {"env": {"one-of": ["dev", "staging", 3]}}
    assert conditions.holds(when, {"env": "staging"}) and conditions.holds(when, {"env": 3.0})
    assert not conditions.holds(when, {"env": "prod"}) and not conditions.holds(when, {"env": "3"})


def test_a_missing_argument_or_args_that_are_not_an_object_fail():
    when = {"amount": {"at-most": 10}, "to": {"matches": "*"}}
    assert conditions.holds(when, {"amount": 5, "to": "x"})
    assert not conditions.holds(when, {"amount": 5})  # every argument's conditions must hold
    assert not conditions.holds(when, None) and not conditions.holds(when, [5, "x"])
    assert conditions.holds({}, None) and conditions.holds({}, "anything")
    assert not conditions.holds({"x": {"bogus": 1}}, {"x": 1})  # an op the code does not know never holds
    assert conditions.matched(when, {"amount": 5, "other": 1}) == {"amount": 5}
    assert conditions.matched({}, {"amount": 5}) == {} and conditions.matched(when, None) == {}


@pytest.mark.parametrize("when", [
    [], {"amount": {"atmost": 1}}, {"amount": {"at-most": "10"}}, {"amount": {"at-least": True}},
    {"amount": {"at-most": math.nan}}, {"env": {"one-of": "dev"}}, {"to": {"matches": 3}}, {3: {"equals": 1}},
    {"amount": {}}, {"amount": 5},
], ids=["not-mapping", "unknown-op", "str-number", "bool-number", "nan", "one-of-str", "matches-int", "int-arg",
        "no-op", "scalar"])
def test_check_refuses_malformed_conditions(when):
    with pytest.raises(ValueError):
        conditions.check(when)


def test_check_accepts_several_ops_and_returns_plain_dicts():
    when = {"amount": {"at-least": 1, "at-most": 2.5}, "env": {"one-of": ["a"]}, "x": {"equals": {"k": None}}}
    assert conditions.check(when) == when


# -- the rule editor -----------------------------------------------------------------------------------------

SHOWN = {"amount": 1200, "rate": 0.5, "to": "bob@example.com", "urgent": False, "tags": ["a"], "meta": None}


def test_from_editor_reads_the_text_in_the_shown_values_type():
    rows = [("amount", "at-most", "5000"), ("rate", "equals", "0.5"), ("to", "matches", "*@example.com"),
            ("urgent", "equals", "true"), ("tags", "equals", '["a", "b"]'), ("meta", "equals", "null"),
            ("amount", "at-least", " 10 ")]
    assert conditions.from_editor(rows, SHOWN) == {
        "amount": {"at-most": 5000, "at-least": 10}, "rate": {"equals": 0.5},
        "to": {"matches": "*@example.com"}, "urgent": {"equals": True}, "tags": {"equals": ["a", "b"]},
        "meta": {"equals": None}}
    assert conditions.from_editor([("to", "equals", "1200")], SHOWN) == {"to": {"equals": "1200"}}  # text as is
    assert conditions.from_editor([("amount", "equals", "1200")], SHOWN) == {"amount": {"equals": 1200}}
    assert conditions.from_editor([("amount", "any", "whatever"), ("to", "any", "")], SHOWN) == {}


@pytest.mark.parametrize(("row", "message"), [
    (("amount", "at-most", "lots"), "amount: not a number"),
    (("amount", "equals", "12k"), "amount: not a number"),
    (("to", "at-least", "x"), "to: only a number is at most or at least a value"),
    (("amount", "at-most", "inf"), "amount: not a number"),
    (("urgent", "equals", "yes"), "urgent"),
    (("tags", "equals", "[a"), "tags"),
    (("missing", "equals", "1"), "missing"),
    (("amount", "one-of", "[1]"), "amount"),  # not an editor op
    (("amount", "bogus", "1"), "amount"),
])
def test_from_editor_refuses_what_does_not_read(row, message):
    with pytest.raises(ValueError, match=message):
        conditions.from_editor([row], SHOWN)


def test_describe_says_the_conditions():
    when = {"amount": {"at-most": 10000}, "to": {"matches": "*@example.com"}}
    assert conditions.describe(when) == "amount ≤ 10000, to matches *@example.com"
    assert conditions.describe({"env": {"one-of": ["a"]}, "n": {"at-least": 1, "equals": "x"}}) == \
        'env is one of ["a"], n ≥ 1, n = "x"'
    assert conditions.describe({}) == ""


# -- a person's rule: conditions, expiry, fingerprint ---------------------------------------------------------


def test_a_rule_with_conditions_covers_only_the_calls_that_meet_them():
    rule = Rule(1, "pay_invoice", "always", "allow", conditions={"amount": {"at-most": 100}})
    assert rule.covers("pay_invoice", "t1", {"amount": 100}, NOW)
    assert not rule.covers("pay_invoice", "t1", {"amount": 101}, NOW)
    assert not rule.covers("pay_invoice", "t1", None, NOW)
    assert Rule(2, "pay_invoice", "always", "allow").covers("pay_invoice", "t1")  # the old call still works


def test_an_expired_rule_covers_nothing_and_the_boundary_counts_as_expired():
    rule = Rule(1, "pay_invoice", "always", "allow", expires_at=NOW)
    assert rule.covers("pay_invoice", "t1", {}, NOW - timedelta(microseconds=1))
    assert not rule.covers("pay_invoice", "t1", {}, NOW)
    assert not rule.covers("pay_invoice", "t1", {}, NOW + timedelta(hours=1))
    naive = Rule(1, "pay_invoice", "always", "allow", expires_at=NOW.replace(tzinfo=None))  # read as UTC
    assert not naive.covers("pay_invoice", "t1", {}, NOW)
    assert not Rule(1, "x", "always", "allow", expires_at=datetime(2000, 1, 1, tzinfo=UTC)).covers("x", "t1")


def test_describe_adds_conditions_and_expiry():
    rule = Rule(1, "pay_invoice", "always", "allow", conditions={"amount": {"at-most": 100}},
                expires_at=datetime(2026, 12, 5, 15, 0, tzinfo=UTC) + timedelta(hours=-1))
    assert rule.describe() == "always allow when amount ≤ 100 (until 2026-12-05 14:00 UTC)"
    assert Rule(2, "x", "thread", "deny", "t1").describe() == "deny in this thread"


def test_the_fingerprint_is_the_schemas_canonical_json_hash():
    one = _interrupt(metadata={"toolSchema": {"b": 1, "a": [1, "é"]}})
    same = Interrupt(id="other", reason="tool_call", response_schema=dict(reversed(list(APPROVAL.items()))),
                     metadata={"tool_name": "x", "toolSchema": {"a": [1, "é"], "b": 1}})
    assert policies.fingerprint(one) == policies.fingerprint(same)
    assert len(policies.fingerprint(one)) == 64
    snake = _interrupt(metadata={"tool_schema": {"b": 1, "a": [1, "é"]}})
    assert policies.fingerprint(snake) == policies.fingerprint(one)
    assert policies.fingerprint(_interrupt()) != policies.fingerprint(one)  # no tool schema: None
    changed = _interrupt(metadata={"toolSchema": {"b": 2, "a": [1, "é"]}})
    assert policies.fingerprint(changed) != policies.fingerprint(one)


def test_a_rule_made_for_another_schema_does_not_answer():
    call = _interrupt(args={"amount": 5}, metadata={"toolSchema": {"v": 2}})
    made_for = policies.fingerprint(_interrupt(metadata={"toolSchema": {"v": 1}}))
    stale = Rule(1, "pay_invoice", "always", "allow", schema_hash=made_for)
    assert _surface(call, rules=[stale]).answers == []
    fits = Rule(2, "pay_invoice", "always", "allow", schema_hash=policies.fingerprint(call))
    assert [a.rule for a in _surface(call, rules=[stale, fits]).answers] == [fits]
    assert stale.covers("pay_invoice", "t1", {}, NOW)  # no fingerprint given: not judged


def test_match_keeps_its_order_among_the_rules_that_fit():
    small = {"amount": {"at-most": 100}}
    rules = [Rule(1, "pay_invoice", "always", "allow"), Rule(2, "pay_invoice", "always", "deny", conditions=small),
             Rule(3, "pay_invoice", "thread", "allow", "t1", conditions={"amount": {"equals": 50}})]
    assert policies.match(rules, "pay_invoice", "t1", {"amount": 50}, NOW) == rules[2]  # thread first
    assert policies.match(rules, "pay_invoice", "t1", {"amount": 60}, NOW) == rules[1]  # then deny
    assert policies.match(rules, "pay_invoice", "t1", {"amount": 600}, NOW) == rules[0]


def test_call_args_come_from_the_transcript_else_the_metadata():
    transcript = Transcript()
    for event in [RunStartedEvent(thread_id="t1", run_id="r1"),
                  ToolCallStartEvent(tool_call_id="call-i1", tool_call_name="pay_invoice"),
                  ToolCallArgsEvent(tool_call_id="call-i1", delta='{"amount": 7}'),
                  ToolCallEndEvent(tool_call_id="call-i1")]:
        transcript.apply(event)
    interrupt = _interrupt(args={"amount": 9999})
    assert policies.call_args(interrupt, transcript) == {"amount": 7}
    assert policies.call_args(interrupt, None) == {"amount": 9999}
    assert policies.call_args(_interrupt(), None) is None
    rule = Rule(1, "pay_invoice", "always", "allow", conditions={"amount": {"at-most": 10}})
    [answer] = _surface(interrupt, rules=[rule], transcript=transcript).answers  # the call's real arguments count
    assert answer.matched == {"amount": 7} and answer.payload == {"approved": True}
    assert _surface(interrupt, rules=[rule]).answers == []


# -- the one evaluation: file rules, the person's, shadow, pause ------------------------------------------------

ALLOW_ALL = Rule(1, "pay_invoice", "always", "allow")


def test_a_file_deny_beats_a_persons_allow():
    deny = FileRule("pay_*", "deny", {"amount": {"at-least": 1000}}, line=3)
    [answer] = _surface(_interrupt(args={"amount": 5000}), rules=[ALLOW_ALL], file_rules=(deny,)).answers
    assert (answer.rule, answer.payload, answer.matched) == (deny, {"approved": False}, {"amount": 5000})
    [small] = _surface(_interrupt(args={"amount": 5}), rules=[ALLOW_ALL], file_rules=(deny,)).answers
    assert small.rule == ALLOW_ALL  # the file rule does not cover it: the person's answers


def test_the_most_restrictive_file_rule_wins_first_in_file_order_among_equals():
    allow1, allow2 = FileRule("pay_invoice", "allow", line=1), FileRule("*", "allow", line=2)
    ask, deny = FileRule("pay_invoice", "ask", line=3), FileRule("pay_*", "deny", line=4)
    assert _surface(_interrupt(args={}), file_rules=(allow1, allow2)).answers[0].rule == allow1
    found = _surface(_interrupt(args={}), file_rules=(allow1, ask))
    assert found.answers == [] and found.forced == {"i1"}
    assert _surface(_interrupt(args={}), file_rules=(allow1, ask, deny)).answers[0].rule == deny


def test_a_file_ask_forces_a_card_even_with_a_persons_allow():
    ask = FileRule("pay_invoice", "ask", risk=Risk("high", "Moves money"))
    found = _surface(_interrupt(args={"amount": 1}), rules=[ALLOW_ALL], file_rules=(ask,))
    assert found.answers == [] and found.forced == {"i1"} and found.risks == {"i1": Risk("high", "Moves money")}


def test_a_persons_allow_answers_when_no_file_rule_matches():
    other = FileRule("send_email", "deny")
    found = _surface(_interrupt(args={"amount": 1}), rules=[ALLOW_ALL], file_rules=(other,))
    assert [(a.rule, a.payload) for a in found.answers] == [(ALLOW_ALL, {"approved": True})]
    assert found.forced == set() and found.shadows == [] and found.risks == {}


def test_a_shadow_rule_is_noted_and_decides_nothing():
    shadow_deny = FileRule("pay_*", "deny", shadow=True, risk=Risk("medium", "big"), line=7)
    shadow_ask = FileRule("pay_*", "ask", shadow=True)
    found = _surface(_interrupt(args={}), file_rules=(shadow_deny, shadow_ask))
    assert found.answers == [] and found.forced == set()
    assert found.shadows == [policies.ShadowNote("i1", "pay_invoice", shadow_deny, "call-i1")]  # ask: no note
    assert found.risks == {"i1": Risk("medium", "big")}
    with_person = _surface(_interrupt(args={}), rules=[ALLOW_ALL], file_rules=(shadow_deny,))
    assert [a.rule for a in with_person.answers] == [ALLOW_ALL] and len(with_person.shadows) == 1


def test_an_enforced_rules_risk_comes_before_a_shadow_rules():
    shadow = FileRule("*", "allow", shadow=True, risk=Risk("low"))
    enforced = FileRule("*", "allow", risk=Risk("high", "why"))
    assert _surface(_interrupt(args={}), file_rules=(shadow, enforced)).risks == {"i1": Risk("high", "why")}


def test_paused_nothing_answers_but_shadows_are_still_noted():
    deny, shadow = FileRule("pay_invoice", "deny"), FileRule("*", "allow", shadow=True)
    found = _surface(_interrupt(args={}), rules=[ALLOW_ALL], file_rules=(deny, shadow), paused=True)
    assert found.answers == [] and [n.rule for n in found.shadows] == [shadow]
    assert _surface(_interrupt(args={}), rules=[ALLOW_ALL], paused=True).answers == []
    forced = _surface(_interrupt(args={}), file_rules=(FileRule("*", "ask"),), paused=True)
    assert forced.forced == {"i1"}


def test_the_apps_remember_filter_limits_the_persons_rules_not_the_files():
    never = lambda _tool, _interrupt: False  # noqa: E731 - the app remembers nothing
    assert _surface(_interrupt(args={}), rules=[ALLOW_ALL], remember=never).answers == []
    [answer] = _surface(_interrupt(args={}), rules=[ALLOW_ALL], file_rules=(FileRule("pay_invoice", "allow"),),
                        remember=never).answers
    assert isinstance(answer.rule, FileRule)


SECRET = {"type": "object", "required": ["approved"], "properties": {
    "approved": {"type": "boolean"}, "api_key": {"type": "string", "format": "password"}}}
FORM = {"type": "object", "required": ["color"], "properties": {"color": {"type": "string"}}}


@pytest.mark.parametrize("case", ["form", "credential", "legacy", "expired", "answered", "no-tool", "confirmation"])
def test_a_rule_never_answers_what_is_not_an_open_tool_approval(case):
    past = (NOW - timedelta(seconds=1)).isoformat()
    interrupt, kind, answered = {
        "form": (_interrupt(reason="input_required", schema=FORM, args={}), "standard", set()),
        "credential": (_interrupt(schema=SECRET, args={}), "standard", set()),
        "legacy": (_interrupt(args={}), "legacy", set()),
        "expired": (_interrupt(args={}, expires_at=past), "standard", set()),
        "answered": (_interrupt(args={}), "standard", {"i1"}),
        "no-tool": (Interrupt(id="i1", reason="tool_call", response_schema=APPROVAL), "standard", set()),
        # a confirmation that names no tool (no toolCallId, no metadata.tool_name): a LangGraph node's interrupt()
        "confirmation": (Interrupt(id="i1", reason="confirmation", response_schema=APPROVAL,
                                   metadata={"tool_input": {}}), "standard", set()),
    }[case]
    file_rules = (FileRule("*", "allow"), FileRule("*", "allow", shadow=True))
    found = policies.surface(_pending(interrupt, kind=kind), answered, None,
                             [Rule(1, "pay_invoice", "always", "allow")], "t1", EVERY, NOW, file_rules=file_rules)
    assert found == policies.Surfacing()


def test_answers_for_is_the_persons_rules_alone():
    first, second = _interrupt("a", args={"amount": 1}), _interrupt("b", args={"amount": 500})
    rule = Rule(1, "pay_invoice", "always", "allow", conditions={"amount": {"at-most": 100}})
    found = policies.answers_for(_pending(first, second), set(), None, [rule], "t1", EVERY, NOW)
    assert [(a.interrupt_id, a.matched, a.tool_call_id) for a in found] == [("a", {"amount": 1}, "call-a")]
    assert policies.answers_for(None, set(), None, [rule], "t1", EVERY, NOW) == []
