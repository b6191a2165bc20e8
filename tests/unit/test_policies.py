"""Policies and bulk decisions (docs/semantics.md P1–P5): the rule matcher, the schema-aware payloads, the rules'
storage, their application where a set surfaces (tabs as states, one SQLite file), and bulk answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ag_ui.core import Interrupt

import interrupt_chat as ic
from interrupt_chat.approvals import bulk, inbox
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.model import policies
from interrupt_chat.model.policies import Rule
from interrupt_chat.store import policies as store
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures
from tests.unit.test_consistency import Tab, wait_for

APPROVAL = {"type": "object", "required": ["approved"],
            "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}}}


def _interrupt(reason: str = "tool_call", schema: Any = APPROVAL, **extra: Any) -> Interrupt:
    return Interrupt(id=extra.pop("id", "int-1"), reason=reason, response_schema=schema,
                     metadata=extra.pop("metadata", {"tool_name": "delete_files"}), **extra)


# -- the matcher and the payloads (framework-free) ----------------------------------------------------------


def test_p1_the_payload_is_what_the_cards_own_buttons_send():
    assert policies.approval_payload(_interrupt(), "allow") == {"approved": True}
    assert policies.approval_payload(_interrupt(), "deny") == {"approved": False}
    assert policies.approval_payload(_interrupt(schema=None), "allow") == {"approved": True}  # a bare confirmation
    only = {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}
    assert policies.approval_payload(_interrupt(schema=only), "deny") == {"approved": False}


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"color": {"type": "string", "enum": ["red"]}}, "required": ["color"]},
    {"type": "object", "properties": {"approved": {"type": "boolean"}, "api_key": {"type": "string",
                                                                                 "format": "password"}}},
    {"type": "object", "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
     "required": ["approved", "reason"]},
    {"type": "object", "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}},
     "required": ["approved", "editedArgs"]},
    {"type": "object", "properties": {"approved": {"type": "boolean", "const": True}}},  # deny does not fit
    {"type": "object", "properties": "junk"},
], ids=["form", "credential", "more-fields", "edits-required", "no-deny", "junk"])
def test_p5_a_rule_never_answers_what_asks_for_more_than_the_approval(schema):
    interrupt = _interrupt(schema=schema)
    assert policies.approval_payload(interrupt, "deny") is None
    assert policies.answers_for(_pending([interrupt]), set(), None, [Rule(1, "delete_files", "always", "deny")],
                                "t1", policies.remember_fn(None), datetime.now(UTC)) == []


def test_p5_only_tool_approvals_with_a_tool_name_are_rememberable():
    every = policies.remember_fn(None)
    assert policies.rememberable(_interrupt(), "delete_files", every)
    # a confirmation is a tool approval when its metadata names its tool (contracts §6.4), not when nothing does
    assert policies.rememberable(_interrupt(reason="confirmation"), "delete_files", every)
    assert not policies.tool_approval(_interrupt(reason="confirmation", metadata={}))
    assert not policies.rememberable(_interrupt(reason="input_required", schema=None), "x", every)
    assert not policies.rememberable(_interrupt(metadata={}), policies.tool_name(_interrupt(metadata={}), None), every)
    assert policies.tool_name(_interrupt(), None) == "delete_files"
    named = policies.remember_fn(["send_email"])
    assert named("send_email", _interrupt()) and not named("delete_files", _interrupt())
    assert not policies.rememberable(_interrupt(), "delete_files", lambda tool, interrupt: tool != "delete_files")


def test_p3_a_thread_rule_wins_over_an_always_rule_and_a_deny_over_an_allow():
    rules = [Rule(1, "delete_files", "always", "allow"), Rule(2, "delete_files", "thread", "deny", "t1"),
             Rule(3, "send_email", "always", "allow"), Rule(4, "send_email", "always", "deny")]
    assert policies.match(rules, "delete_files", "t1") == rules[1]
    assert policies.match(rules, "delete_files", "t2") == rules[0]  # the thread rule ends with its thread
    assert policies.match(rules, "send_email", "t2") == rules[3]
    assert policies.match(rules, "other", "t1") is None


def _pending(interrupts: list[Interrupt]):
    from interrupt_chat.agui.interrupts import Pending

    return Pending("standard", interrupts, {"name": "on_interrupt", "value": None}, "run-1")


def test_p2_rules_answer_what_they_cover_and_leave_the_rest():
    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    covered = _interrupt(id="a")
    expired = _interrupt(id="b", expires_at=past)
    answered = _interrupt(id="c")
    form = _interrupt(id="d", reason="input_required", schema={"type": "object", "properties": {
        "color": {"type": "string"}}})
    other = _interrupt(id="e", metadata={"tool_name": "send_email"})
    found = policies.answers_for(_pending([covered, expired, answered, form, other]), {"c"}, None,
                                 [Rule(7, "delete_files", "always", "allow")], "t1", policies.remember_fn(None),
                                 datetime.now(UTC))
    assert [(f.interrupt_id, f.payload, f.rule.id) for f in found] == [("a", {"approved": True}, 7)]


# -- the rules in the database ----------------------------------------------------------------------------


def test_p4_rules_are_stored_per_owner_replaced_revoked_and_exported(database):
    first = store.add(database, "alice", "delete_files", "always", "allow")
    again = store.add(database, "alice", "delete_files", "always", "deny")  # replaces the allow
    thread = store.add(database, "alice", "delete_files", "thread", "allow", "t1")
    store.add(database, "bob", "delete_files", "always", "allow")
    assert [r.id for r in store.rules(database, "alice")] == [thread.id, again.id]
    assert [r.id for r in store.rules(database, "alice", "t2")] == [again.id]
    assert store.revoke(database, "alice", thread.id) and not store.revoke(database, "alice", thread.id)
    assert not store.revoke(database, "bob", again.id)  # not Bob's
    lines = [json.loads(line) for line in database.export_jsonl("alice").splitlines()]
    events = [(line["policyId"], line["event"]) for line in lines if line.get("kind") == "policy"]
    assert sorted(events) == sorted([(first.id, "created"), (first.id, "revoked"), (again.id, "created"),
                                     (thread.id, "created"), (thread.id, "revoked")])
    with pytest.raises(ValueError):
        store.add(database, "alice", "delete_files", "thread", "allow")  # a thread rule needs its thread


# -- applied where a set surfaces (tabs as states) ---------------------------------------------------------


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, DemoStore]]:
    app = create_app(delay=0.0, expires_in=1.0)
    with serve_in_thread(app) as base:
        yield f"{base}/", app.state.store


@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="policies")


def _resume_payloads(tab: Tab, thread_id: str | None = None) -> list[list[Any]]:
    return [[e["payload"] for e in r["resume"]] for r in tab.requests(thread_id) if r.get("resume")]


async def _remember(tab: Tab, scope: str, effect: str) -> None:
    [interrupt_id] = tab.ids()
    config = await tab.config()
    await tab.cls.default_config.remember_rule.fn(config, interrupt_id, tab.session.tracker.pending.run_id or "",
                                                 scope, effect)


async def test_p2_an_always_allow_answers_the_next_set_once_in_every_tab(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    await _remember(tab, "always", "allow")
    await tab.send("approval")  # the rule answers it: no card, one resume
    assert tab.ids() == [] and tab.chat.status == "idle"
    assert _resume_payloads(tab) == [[{"approved": True}], [{"approved": True}]]
    notes = tab.chat.policy_notes
    assert [(n["tool"], n["rule"], n["action"]) for n in notes] == [("delete_files", "always allow", "resolved")]
    assert notes[0]["call_id"]  # drawn in its tool call
    entries = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    assert [e.by for e in entries] == ["person", "policy"]
    assert entries[1].detail and entries[1].detail["tool"] == "delete_files"
    other = await Tab(chat.state, agent[1]).load()  # another tab of the owner: a new thread, answered too
    await other.chat.__class__.new_thread.fn(other.chat)
    await other.send("approval")
    assert other.ids() == [] and len(_resume_payloads(other)) == 1


async def test_p2_a_partly_covered_set_shows_only_the_rest_and_resumes_once(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    await _remember(tab, "thread", "allow")
    await tab.send("multi")
    config = await tab.config()
    assert [c.reason for c in config.cards] == ["input_required", "confirmation"]
    assert len(tab.ids()) == 3 and len(tab.session.tracker.answers) == 1
    choice, confirmation = config.cards
    await tab.resolve({"color": "red"}, choice.id)
    await tab.resolve({"approved": True}, confirmation.id)
    assert len(_resume_payloads(tab)) == 2  # the first approval, then the whole multi set once
    assert sorted(map(str, _resume_payloads(tab)[-1])) == sorted(map(str, [{"approved": True}, {"color": "red"},
                                                                          {"approved": True}]))


async def test_p4_a_revoke_brings_the_card_back(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    await _remember(tab, "always", "deny")
    await tab.chat.__class__.load_policies.fn(tab.chat)
    [row] = tab.chat.policies
    assert (row["tool"], row["scope"], row["effect"]) == ("delete_files", "always", "deny")
    await tab.chat.__class__.revoke_policy.fn(tab.chat, row["id"])
    assert tab.chat.policies == []
    await tab.send("approval")
    assert len(tab.ids()) == 1


# -- bulk decisions ------------------------------------------------------------------------------------------


async def test_bulk_answers_each_plain_approval_once_and_says_why_it_skipped_the_rest(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    threads = []
    for scenario in ("approval", "approval", "choice", "expiring"):
        await tab.chat.__class__.new_thread.fn(tab.chat)
        await tab.send(scenario)
        threads.append(tab.chat.thread_id)
    await asyncio.sleep(1.1)  # the expiring one has expired
    await inbox.load(tab.chat, chat.state)
    cards = list(tab.chat.inbox)
    assert len(cards) == 4
    result = await bulk.decide_all(chat.state, tab.chat._owner_key, cards, approve=True)
    assert result.done == 2, result.skipped
    assert sorted(next(why for why in (bulk.NOT_PLAIN, bulk.EXPIRED) if line.endswith(why))
                  for line in result.skipped) == sorted([bulk.NOT_PLAIN, bulk.EXPIRED])
    approvals = [c for c in cards if c.reason == "tool_call"]
    again = await bulk.decide_all(chat.state, tab.chat._owner_key, approvals, approve=False)
    assert again.done == 0 and len(again.skipped) == 2 and all(bulk.ELSEWHERE in line for line in again.skipped)
    await wait_for(lambda: all(len(_resume_payloads(tab, t)) == 1 for t in threads[:2]))
    assert [len(_resume_payloads(tab, t)) for t in threads] == [1, 1, 0, 0]
    await wait_for(lambda: all(database.decisions(tab.chat._owner_key, t) for t in threads[:2]))  # after the POSTs
    assert {e.by for t in threads[:2] for e in database.decisions(tab.chat._owner_key, t)} == {"bulk"}
    assert store.rules(database, tab.chat._owner_key) == []  # a bulk action never makes a rule


async def test_p2_rules_alone_resume_at_most_five_times_in_a_row(chat, agent):
    """An agent that asks again after every resume is not approved forever: the sixth set goes to the person."""
    from interrupt_chat.approvals import rule_answers

    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    tracker, asked = tab.session.tracker, tab.session.tracker.export()
    rules = [Rule(1, "delete_files", "always", "allow")]
    resumed = []
    for _ in range(rule_answers.MAX_RULE_RESUMES + 2):
        tracker.restore(asked)  # the same question again
        outcome = await rule_answers.apply(tab.chat, tab.session, rule_answers.Found(rules))
        resumed.append(outcome is not None and outcome.events is not None)
        if outcome is not None and outcome.events is not None:
            await outcome.events.aclose()
            tab.session.abandon("not sent")  # a resume handed out and dropped: the session is free again
    assert resumed == [True] * rule_answers.MAX_RULE_RESUMES + [False, True]  # then the count starts again
