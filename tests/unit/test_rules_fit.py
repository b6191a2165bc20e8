"""Rules that fit (§6.4): narrow and time-boxed rules in the database, the policy file before a person's rules,
shadow entries, the pause, the denial limit, answers bound to the shown call, and risk on the card.

Tabs are states of the real chat against the scripted demo agent (loopback HTTP), one SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import interrupt_chat as ic
from interrupt_chat.approvals import pause, rule_answers, rule_editor
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.model.cards import shown_hash
from interrupt_chat.model.policies import Rule
from interrupt_chat.store import audit as store_audit
from interrupt_chat.store import policies as store
from interrupt_chat.tab import answers, routing
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab, wait_for

POLICY = """\
- tool: pay_invoice
  when: {amount: {at-most: 100}}
  effect: allow
- tool: pay_invoice
  when: {amount: {at-least: 10000}}
  effect: deny
  risk: {level: high, why: Moves a lot of money}
- tool: pay_invoice
  when: {payee: {equals: Initech}}
  effect: ask
- tool: "delete_*"
  effect: deny
  mode: shadow
"""


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("policy") / "rules.yaml"
    path.write_text(POLICY)
    return path


@pytest.fixture(scope="module")
def chat(agent, policy_file) -> ic.Chat:
    def risk(request: ic.Request) -> ic.Risk | None:
        return ic.Risk("medium", "Deletes files") if request.tool == "delete_files" else None

    return ic.Chat(agent[0], name="rules-fit", policy_file=policy_file, risk=risk, denial_limit=3)


@pytest.fixture(name="counting")
async def counting_fixture() -> Any:
    """The sends left counting a card's expiry down (``pay`` sets ``expiresAt``): stopped after the test."""
    tasks: list[asyncio.Future[None]] = []
    yield tasks
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _pay(tab: Tab, text: str, counting: list[asyncio.Future[None]]) -> None:
    """Send ``text``; done when the run (and a rule's resume) is over: a card with an expiry keeps its send counting
    the seconds down, so that send is left running (``counting``) once its countdown started."""
    before = len(tab.requests()) if tab.chat.thread_id else 0
    task = asyncio.ensure_future(tab.send(text))
    counting.append(task)
    key = (tab.token, tab.cls.get_full_name())
    await wait_for(lambda: task.done() or (key in routing._COUNTDOWNS and tab.chat.status == "interrupted"
                                           and len(tab.requests()) > before))
    if task.done():
        task.result()


def _resumes(tab: Tab) -> list[list[Any]]:
    return [[e["payload"] for e in r["resume"]] for r in tab.requests() if r.get("resume")]


# -- the database ---------------------------------------------------------------------------------------------


def test_narrow_rules_are_stored_with_their_conditions_expiry_and_fingerprint(database):
    soon = datetime.now(UTC) + timedelta(hours=1)
    narrow = store.add(database, "alice", "pay_invoice", "always", "allow", conditions={"amount": {"at-most": 100}},
                       expires_at=soon, schema_hash="abc")
    wide = store.add(database, "alice", "pay_invoice", "always", "allow")  # other conditions: both stand
    [first, second] = store.rules(database, "alice")
    assert (first.id, second.id) == (wide.id, narrow.id)
    assert second.conditions == {"amount": {"at-most": 100}} and second.schema_hash == "abc"
    assert second.expires_at is not None and abs((second.expires_at - soon).total_seconds()) < 1
    again = store.add(database, "alice", "pay_invoice", "always", "allow", conditions={"amount": {"at-most": 100}})
    assert [r.id for r in store.rules(database, "alice")] == [again.id, wide.id]  # same conditions: replaced
    store.add(database, "alice", "send_email", "always", "allow", expires_at=datetime.now(UTC) - timedelta(seconds=1))
    assert "send_email" not in {r.tool for r in store.rules(database, "alice")}  # expired: not read, not listed
    with pytest.raises(ValueError):
        store.add(database, "alice", "pay_invoice", "always", "allow", conditions={"amount": {"about": 1}})


def test_the_pause_is_stored_once_and_the_rejections_are_counted_in_a_row(database):
    assert store.paused_since(database, "alice") is None
    assert store.set_pause(database, "alice", True) and not store.set_pause(database, "alice", True)
    assert store.paused_since(database, "alice") is not None and store.paused_since(database, "bob") is None
    assert store.set_pause(database, "alice", False) and store.paused_since(database, "alice") is None
    for action, by in (("rejected", "person"), ("resolved", "person"), ("rejected", "person"), ("rejected", "bulk"),
                       ("cancelled", "person"), ("rejected", "link"), ("rejected", "policy")):
        database.record_decision("alice", "t1", "r", "i", "tool_call", action, by=by)
    database.record_decision("alice", "t1", "r", "i", "input_required", "rejected")  # not a tool approval
    assert store_audit.rejection_streak(database, "alice", "t1") == 2  # person + link after the approval
    assert store_audit.rejection_streak(database, "alice", "t2") == 0


# -- where a set surfaces ----------------------------------------------------------------------------------------


async def test_the_policy_file_answers_first_and_its_ask_beats_a_persons_rule(chat, agent, database, counting):
    tab = await Tab(chat.state, agent[1]).load()
    await _pay(tab, "pay invoice 50 to Acme", counting)  # at most 100: the file allows it
    assert tab.ids() == [] and _resumes(tab) == [[{"approved": True}]]
    [entry] = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    assert entry.by == "policy" and entry.detail["source"] == "file" and entry.detail["line"] == 1
    assert entry.detail["matched"] == {"amount": 50}
    await _pay(tab, "pay invoice 20000 to Acme", counting)  # at least 10000: the file denies it
    assert tab.ids() == [] and _resumes(tab)[-1] == [{"approved": False}]
    store.add(database, tab.chat._owner_key, "pay_invoice", "always", "allow")  # the person's own wide rule
    await _pay(tab, "pay invoice 500 to Initech", counting)  # the file asks: a card, whatever the person allows
    [card] = (await tab.config()).cards
    assert card.reason == "tool_call" and len(_resumes(tab)) == 2
    await tab.resolve({"approved": True}, card.id)
    await _pay(tab, "pay invoice 500 to Acme", counting)  # no file rule: the person's rule answers
    assert tab.ids() == [] and len(_resumes(tab)) == 4


async def test_a_shadow_rule_decides_nothing_and_says_what_it_would_have_done(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    [card] = (await tab.config()).cards
    assert card.risk_level == "medium" and card.risk_why == "Deletes files"  # the app's risk function
    [entry] = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    assert (entry.action, entry.by, entry.interrupt_id) == ("shadow", "policy", card.id)
    assert entry.detail["shadow"] == "deny"
    assert [row["shadow"] for row in tab.chat.decisions] == ["deny"]
    assert tab.chat.policy_notes == []  # not an answer
    await tab.resolve({"approved": True}, card.id)
    assert _resumes(tab) == [[{"approved": True}]]


async def test_a_file_rules_risk_is_on_the_card_and_file_rules_are_listed_without_revoke(chat, agent, database,
                                                                                           counting):
    tab = await Tab(chat.state, agent[1]).load()
    await _pay(tab, "pay invoice 500 to Initech", counting)
    [card] = (await tab.config()).cards
    assert card.risk_level == ""  # the ask rule names no risk
    await chat.state.load_policies.fn(tab.chat)
    files = [row for row in tab.chat.policies if row["source"] == "file"]
    assert [(r["effect"], r["line"], r["mode"], r["revocable"]) for r in files] == [
        ("allow", "1", "", "false"), ("deny", "4", "", "false"), ("ask", "8", "", "false"),
        ("deny", "11", "shadow", "false")]
    assert files[0]["conditions"] == '{"amount": {"at-most": 100}}'


async def test_the_pause_stops_rules_refuses_messages_and_is_audited(chat, agent, database, counting):
    tab = await Tab(chat.state, agent[1]).load()
    other = await Tab(chat.state, agent[1]).load()  # another tab of the same person
    await chat.state.toggle_pause.fn(tab.chat)
    assert tab.chat.paused
    await _pay(tab, "pay invoice 50 to Acme", counting)
    assert tab.chat.notice.startswith("Your agents are paused") and tab.requests() == []
    await other.send("hello")  # the other tab's copy did not know yet: the stored pause refuses it
    assert other.chat.paused and other.requests() == []
    entries = [e for e in database.decisions(tab.chat._owner_key) if e.action in ("paused", "unpaused")]
    assert [e.action for e in entries] == ["paused"]
    await chat.state.toggle_pause.fn(tab.chat)
    assert not tab.chat.paused
    await _pay(tab, "pay invoice 50 to Acme", counting)
    assert tab.ids() == [] and len(_resumes(tab)) == 1


async def test_while_paused_no_rule_answers(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")  # the shadow rule notes it; nobody answers
    owner = tab.chat._owner_key
    store.set_pause(database, owner.rsplit("|", 1)[0], True)  # the person's pause: all of their chats
    found = await rule_answers.rules_for(owner, tab.session)
    assert found is not None and found.paused
    mine = [Rule(1, "delete_files", "always", "allow")]
    held = await rule_answers.apply(tab.chat, tab.session, rule_answers.Found(mine, paused=True))
    assert held is not None and held.events is None and [a.action for a in held.audits] == ["shadow"]
    assert tab.session.tracker.answers == {}
    going = await rule_answers.apply(tab.chat, tab.session, rule_answers.Found(mine))
    assert going is not None and going.events is not None  # not paused: the person's rule answers it
    await going.events.aclose()
    tab.session.abandon("not sent")


@pytest.fixture(scope="module")
def slow() -> Iterator[tuple[ic.Chat, DemoStore]]:
    """A chat on an agent that sleeps 4 ms before each delta: the ``long`` answer streams for 8 s."""
    app = create_app(delay=0.004)
    with serve_in_thread(app) as base:
        yield ic.Chat(f"{base}/", name="rules-fit-slow"), app.state.store


async def test_a_paused_persons_running_run_is_stopped(slow, database):
    chat, agent_store = slow
    tab = await Tab(chat.state, agent_store).load()
    owner = tab.chat._owner_key
    task = asyncio.ensure_future(tab.send("long"))
    try:  # the pause stops the runs whose claim it reads in the database
        await wait_for(lambda: store.running_threads(database, [owner]))
        await pause.switch(owner, True)
        await asyncio.wait_for(task, 10)
    finally:
        await pause.switch(owner, False)
    assert tab.session.transcript.status == "cancelled"


async def test_the_third_rejection_in_a_row_is_sent_and_its_run_stopped(chat, agent, database):
    """§6.4's denial limit; S15: the halted resume reached the agent, so its set is not offered again."""
    tab = await Tab(chat.state, agent[1]).load()
    for round_ in range(3):
        await tab.send("approval")
        [card] = (await tab.config()).cards
        await tab.resolve({"approved": False, "reason": f"no {round_}"}, card.id)
    assert [p[0]["reason"] for p in _resumes(tab)] == ["no 0", "no 1", "no 2"]  # the third is still sent
    assert tab.chat.denial_notice.startswith("Stopped: you rejected 3 requests in a row")
    assert tab.session.transcript.status == "cancelled"
    await tab.send("approval")  # a new message does not reset the count: the next "no" stops again
    [card] = (await tab.config()).cards
    assert tab.chat.denial_notice == "", (tab.chat.notice, tab.chat.status, tab.session.transcript.status)
    await tab.resolve({"approved": True}, card.id)  # an approval resets it
    assert tab.chat.denial_notice == ""
    assert store_audit.rejection_streak(database, tab.chat._owner_key, tab.chat.thread_id) == 0


async def test_an_answer_is_bound_to_the_call_the_person_saw(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    [card] = (await tab.config()).cards
    assert card.call_hash == shown_hash(tab.session.tracker.pending.interrupts[0], tab.session.transcript)
    config = await tab.config()
    await chat.state.default_config.resolve.fn(config, {"approved": True}, card.id, "0" * 32)  # another call
    assert tab.chat.notice == answers.CALL_CHANGED and _resumes(tab) == []
    await chat.state.default_config.resolve.fn(await tab.config(), {"approved": True}, card.id, card.call_hash)
    assert _resumes(tab) == [[{"approved": True}]]


async def test_the_rule_editor_makes_a_narrow_time_boxed_rule_and_approves_the_shown_call(chat, agent, database,
                                                                                             counting):
    tab = await Tab(chat.state, agent[1]).load()
    await _pay(tab, "pay invoice 500 to Acme", counting)
    [card] = (await tab.config()).cards
    form = {"__interrupt_id": card.id, "__thread_id": card.thread_id, "__run_id": card.run_id,
            "__call": card.call_hash, "duration": "8h",
            "arg-0": "invoice", "op-0": "any", "value-0": "INV-500",
            "arg-1": "payee", "op-1": "equals", "value-1": "Acme",
            "arg-2": "amount", "op-2": "at-most", "value-2": "1000",
            "arg-3": "currency", "op-3": "matches", "value-3": "EU*"}
    await chat.state.default_config.save_rule.fn(await tab.config(), form)
    assert _resumes(tab) == [[{"approved": True}]]
    [rule] = store.rules(database, tab.chat._owner_key)
    assert rule.conditions == {"payee": {"equals": "Acme"}, "amount": {"at-most": 1000}, "currency": {"matches": "EU*"}}
    assert rule.expires_at is not None
    assert timedelta(hours=7.9) < rule.expires_at - datetime.now(UTC) < timedelta(hours=8)
    await chat.state.load_policies.fn(tab.chat)
    [row] = [r for r in tab.chat.policies if r["source"] == "person"]
    assert row["expires"].endswith("Z") and row["revocable"] == "true" and '"at-most": 1000' in row["conditions"]
    await _pay(tab, "pay invoice 900 to Acme", counting)  # meets every condition: answered
    assert tab.ids() == [] and len(_resumes(tab)) == 2
    await _pay(tab, "pay invoice 1500 to Acme", counting)  # too much: the person decides
    assert len(tab.ids()) == 1
    entries = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    by_rule = [e for e in entries if e.by == "policy" and e.action == "resolved"]
    assert by_rule[-1].detail["matched"] == {"payee": "Acme", "amount": 900, "currency": "EUR"}


async def test_the_rule_editor_refuses_what_the_page_cannot_be_trusted_with(chat, agent, database, counting):
    tab = await Tab(chat.state, agent[1]).load()
    await _pay(tab, "pay invoice 500 to Acme", counting)
    [card] = (await tab.config()).cards
    base = {"__interrupt_id": card.id, "__run_id": card.run_id, "__call": card.call_hash, "duration": "1h"}
    for form, said in (({**base, "duration": "forever"}, "how long"),
                       ({**base, "arg-0": "amount", "op-0": "at-most", "value-0": "lots"}, "not a number"),
                       ({**base, "arg-0": "nope", "op-0": "equals", "value-0": "x"}, "no such argument"),
                       ({**base, "__call": "f" * 32}, "changed")):
        await chat.state.default_config.save_rule.fn(await tab.config(), form)
        [shown] = (await tab.config()).cards
        assert said in shown.error, (form, shown.error)
    assert store.rules(database, tab.chat._owner_key) == [] and _resumes(tab) == []
    assert isinstance(rule_editor.read_form({"arg-0": ["x"]}).rows, list)


async def test_a_rule_being_made_and_a_person_racing_resume_once(chat, agent, database):
    """One tab saves "Allow similar" (a rule, then its approval) while another tab approves the same card."""
    first = await Tab(chat.state, agent[1]).load()
    await first.send("approval")
    second = await Tab(chat.state, agent[1]).load()  # the same person's other tab shows the same card
    [card] = (await first.config()).cards
    assert second.ids() == [card.id]
    form = {"__interrupt_id": card.id, "__run_id": card.run_id, "__call": card.call_hash, "duration": "1h",
            "arg-0": "path", "op-0": "equals", "value-0": "/tmp/reports"}
    await asyncio.gather(chat.state.default_config.save_rule.fn(await first.config(), form),
                         chat.state.default_config.resolve.fn(await second.config(), {"approved": True}, card.id,
                                                              card.call_hash))
    await wait_for(lambda: not first.session.running and not second.session.running)
    assert _resumes(first) == [[{"approved": True}]]  # exactly one resume
    decided = [e for e in database.decisions(first.chat._owner_key, first.chat.thread_id) if e.action == "resolved"]
    assert len(decided) == 1


def test_a_malformed_policy_file_stops_the_declaration_with_its_line(tmp_path, monkeypatch):
    bad = tmp_path / "rules.yaml"
    bad.write_text("- tool: send_email\n  effect: allow\n- tool: pay_invoice\n  efect: deny\n")
    with pytest.raises(ic.PolicyFileError) as caught:
        ic.Chat("http://127.0.0.1:9/", name="rules-fit-bad", policy_file=bad)
    assert caught.value.line == 4 and "efect" in str(caught.value) and str(bad) in str(caught.value)
    monkeypatch.setenv("INTERRUPT_CHAT_POLICY_FILE", str(tmp_path / "missing.yaml"))
    with pytest.raises(ic.PolicyFileError):
        ic.Chat("http://127.0.0.1:9/", name="rules-fit-missing")


@pytest.mark.parametrize("flags", [["--backend-only"], []], ids=["backend-only", "whole-app"])
def test_the_demo_does_not_start_with_a_malformed_policy_file(tmp_path, flags):
    """``reflex run`` exits non-zero before serving anything, saying the file, the line and why."""
    import os
    import subprocess
    import sys

    bad = tmp_path / "rules.yaml"
    bad.write_text("- tool: pay_invoice\n  when: {amount: {atmost: 5}}\n  effect: deny\n")
    env = {**os.environ, "INTERRUPT_CHAT_POLICY_FILE": str(bad), "INTERRUPT_CHAT_DB_URL": "off"}
    done = subprocess.run([sys.executable, "-m", "reflex", "run", *flags, "--backend-port", "1"], env=env,
                          cwd=Path(__file__).parents[2], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert f"{bad}:2: rule 1: when.amount: unknown op 'atmost'" in done.stdout + done.stderr


async def test_the_inbox_saves_a_narrow_rule_and_answers_with_a_reason(chat, agent, database):
    from interrupt_chat.approvals import inbox

    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    await chat.state.new_thread.fn(tab.chat)
    await tab.send("approval")
    await inbox.load(tab.chat, chat.state)
    first, second = tab.chat.inbox
    form = {"__interrupt_id": first.id, "__thread_id": first.thread_id, "__run_id": first.run_id,
            "__call": first.call_hash, "duration": "7d", "arg-0": "path", "op-0": "matches", "value-0": "/tmp/*",
            "arg-1": "count", "op-1": "at-most", "value-1": "10"}
    await chat.state.inbox_save_rule.fn(tab.chat, form)
    [rule] = store.rules(database, tab.chat._owner_key)
    assert rule.conditions == {"path": {"matches": "/tmp/*"}, "count": {"at-most": 10}}
    await chat.state.inbox_resolve.fn(tab.chat, second.thread_id, {"approved": False, "reason": "Not now"},
                                      second.id, second.run_id, second.call_hash)
    await wait_for(lambda: all(agent[1].records(c.thread_id)[-1].get("resume") for c in (first, second)))
    assert [r["resume"][0]["payload"] for c in (first, second) for r in agent[1].records(c.thread_id)
            if r.get("resume")] == [{"approved": True}, {"approved": False, "reason": "Not now"}]


async def test_a_shadow_entry_leaves_the_decision_link_open_and_notifies_nothing(chat, agent, database, monkeypatch):
    """A shadow rule's verdict decides nothing: the link still answers, the request is still open for notifications."""
    import reflex as rx

    from interrupt_chat.approvals import decide, links, notifier
    from interrupt_chat.approvals.decide import DecideState

    told: list[list[dict[str, Any]]] = []

    async def emit(owner: str, items: list[dict[str, Any]]) -> None:
        told.append(items)

    monkeypatch.setattr(notifier, "emit", emit)
    monkeypatch.setattr(notifier, "wanted", lambda owner: True)
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")  # the file's shadow rule covers delete_files
    [interrupt_id] = tab.ids()
    assert [e.action for e in database.decisions(tab.chat._owner_key, tab.chat.thread_id)] == ["shadow"]
    assert not [n for batch in told for n in batch if n["event"] == "decided"]
    await links.ready()
    token = links.url_for(tab.chat._owner_key, tab.session, interrupt_id).rsplit("/", 1)[-1]
    page = rx.State().get_substate(DecideState.get_full_name().split("."))
    assert (await decide._find(page, token)).phase == "open"


async def test_while_paused_an_edit_or_a_regenerate_sends_nothing(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("hello")
    sent = len(tab.requests())
    [user] = [m for m in tab.session.transcript.messages if m.role == "user"]
    await pause.switch(tab.chat._owner_key, True)
    try:
        await chat.state.save_edit.fn(tab.chat, {"message_id": user.id, "text": "hello again"})
        assert tab.chat.notice.startswith("Your agents are paused") and len(tab.requests()) == sent
        await chat.state.regenerate.fn(tab.chat, user.id)
        assert len(tab.requests()) == sent
    finally:
        await pause.switch(tab.chat._owner_key, False)


async def test_a_file_deny_refuses_an_approval_whatever_path_shows_the_card(chat, agent, database, counting,
                                                                           monkeypatch):
    """A set left to the person (here: the person's rules could not be read): no Approve of a call the file denies."""
    from interrupt_chat.store.threads_db import ThreadDBError

    def unreadable(*_args: Any, **_kwargs: Any) -> Any:
        raise ThreadDBError("the database is away")

    monkeypatch.setattr(store, "rules", unreadable)
    tab = await Tab(chat.state, agent[1]).load()
    await _pay(tab, "pay invoice 20000 to Acme", counting)  # the file denies it, but nothing answered: a card
    [card] = (await tab.config()).cards
    await chat.state.default_config.resolve.fn(await tab.config(), {"approved": True}, card.id, card.call_hash)
    [shown] = (await tab.config()).cards
    assert shown.error == rule_answers.FILE_DENIES and _resumes(tab) == []
    await chat.state.default_config.resolve.fn(await tab.config(), {"approved": False}, card.id, card.call_hash)
    assert _resumes(tab) == [[{"approved": False}]]


async def test_the_limit_holds_when_the_rest_of_the_set_is_answered_after_the_third_no(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    for _ in range(2):
        await tab.send("approval")
        [card] = (await tab.config()).cards
        await tab.resolve({"approved": False}, card.id)
    await tab.send("multi")  # a tool approval, a choice and a confirmation
    tool, choice, confirmation = (await tab.config()).cards
    await tab.resolve({"approved": False}, tool.id)  # the third "no": the resume is not sent yet
    await tab.resolve({"color": "red"}, choice.id)
    await tab.resolve({"approved": True}, confirmation.id)  # not a tool approval: it neither counts nor resets
    assert len(_resumes(tab)) == 3 and tab.chat.denial_notice.startswith("Stopped: you rejected 3")
