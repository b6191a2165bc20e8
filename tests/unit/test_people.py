"""Approvals between people (issue 41, §6.2): assignment, the two-person rule, reassignment, delegation,
reminders and escalation, and who may see or decide what, driven through the chat state's handlers.

Each person is a tab (a fresh ``rx.State()`` tree) of one chat declared with ``people=`` and an
``owner=`` function, against the demo agent on loopback, sharing one SQLite thread database. The
asker is alice (role staff); bob and dave hold role finance; carol holds role managers.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from interrupt_chat.approvals.people import sweep
from interrupt_chat.approvals.people.core import PEOPLE_NOTICE
from interrupt_chat.store import requests as store
from interrupt_chat.store.schema import requests_table
from interrupt_chat.workers import sync
from tests.unit.holds import holds, this_gate
from tests.unit.people import (  # noqa: F401 - fixtures
    NEED,
    Tab,
    _actions,
    _ask,
    _decided,
    _resumes,
    _settle,
    agent_fixture,
    chat_cls_fixture,
    one_approval_fixture,
)
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures

pytestmark = pytest.mark.loopback


async def test_a_request_for_finance_is_read_only_for_its_asker_and_in_finance_inboxes(chat_cls):
    alice = await _ask(chat_cls)
    card = alice.card()
    assert card.routed and not card.can_decide and card.assignee == "role:finance" and card.assignee_names == "finance"
    bob, carol = await Tab(chat_cls, "bob").load(), await Tab(chat_cls, "carol").load()
    listed = await bob.inbox()
    assert [(c.thread_id, c.id) for c in listed] == [(alice.chat.thread_id, card.id)]
    assert listed[0].can_decide and listed[0].asker == "Alice" and listed[0].reassignable
    assert await carol.inbox() == []
    assert await alice.inbox() == []  # mine: nothing assigned to alice
    asked = await alice.inbox("asked")
    assert [c.id for c in asked] == [card.id] and not asked[0].can_decide


async def test_an_assignees_open_inbox_is_told_once_the_request_can_be_listed(chat_cls, monkeypatch):
    """The ``#people`` notice that refills an assignee's open inbox comes after the thread is saved with the set."""
    listed: list[int] = []
    changed = sync.changed

    async def spy(owner: str, thread_id: str, origin: str = "", revision: int = 0, *, trail: bool = False) -> None:
        if thread_id == PEOPLE_NOTICE and owner.startswith("bob|"):
            listed.append(len(await (await Tab(chat_cls, "bob").load()).inbox()))  # what bob's inbox reads now
        await changed(owner, thread_id, origin, revision, trail=trail)

    monkeypatch.setattr(sync, "changed", spy)
    await _ask(chat_cls)
    assert listed and listed[-1] == 1, listed


async def test_the_asker_cannot_approve_but_may_withdraw(chat_cls, agent, database):
    alice = await _ask(chat_cls)
    card = alice.card()
    config_cls = chat_cls.default_config
    config = alice.config()
    await config_cls.resolve.fn(config, {"approved": True}, card.id)  # type: ignore[union-attr]
    assert _resumes(agent[1], alice.chat.thread_id) == []
    assert "waits for finance" in alice.card().error
    await config_cls.cancel.fn(config, card.id)  # type: ignore[union-attr]
    resumes = await _settle(agent[1], alice.chat.thread_id, 1)
    assert len(resumes) == 1
    assert ("cancelled", "alice", "") in _actions(database, alice.chat._owner_key, alice.chat.thread_id)


async def test_two_approvals_resume_once_and_the_same_person_twice_counts_once(chat_cls, agent, database):
    NEED["count"] = 2
    alice = await _ask(chat_cls)
    bob, dave = await Tab(chat_cls, "bob").load(), await Tab(chat_cls, "dave").load()
    card = (await bob.inbox())[0]
    await bob.approve(card)
    await bob.approve(card)  # a second click of the same person changes nothing
    assert _resumes(agent[1], alice.chat.thread_id) == []
    await alice.load()
    assert alice.card().have == 1 and alice.card().need == 2 and alice.card().approvers == "Bob"
    dave_card = (await dave.inbox())[0]
    assert dave_card.have == 1
    bob2 = await Tab(chat_cls, "bob").load()
    await asyncio.gather(dave.approve(dave_card), bob2.approve((await bob2.inbox())[0]))
    resumes = await _settle(agent[1], alice.chat.thread_id, 1)
    assert len(resumes) == 1
    actions = await _decided(database, alice.chat._owner_key, alice.chat.thread_id)
    assert actions[0] == ("approved-partly", "bob", "") and ("resolved", "dave", "") in actions
    assert [a for a in actions if a[0] == "approved-partly"] == [("approved-partly", "bob", "")]
    assert await bob.inbox() == [] and await dave.inbox() == []


async def test_an_assignees_click_holds_the_streams_until_the_agent_has_the_resume_and_proves_the_tab(
        chat_cls, agent, monkeypatch):
    """Issue 45 (decision 0037): the resume of another person's request runs in a context of the server's
    own, and still carries the assignee's hold, which ends when the agent has the resume, not before."""
    alice = await _ask(chat_cls)
    bob = await Tab(chat_cls, "bob").load()
    card = (await bob.inbox())[0]
    had = lambda: len(_resumes(agent[1], alice.chat.thread_id))  # noqa: E731
    events = holds(monkeypatch, had)
    await bob.approve(card)
    await _settle(agent[1], alice.chat.thread_id, 1)
    assert events == [("open", 0), ("close", 1)]  # closed once the agent had the resume
    gate = this_gate()
    assert gate.holds == 0 and not gate.stopped and bob.token in gate.proven


async def test_one_rejection_rejects(chat_cls, agent, database):
    NEED["count"] = 2
    alice = await _ask(chat_cls)
    bob = await Tab(chat_cls, "bob").load()
    await bob.reject((await bob.inbox())[0])
    resumes = await _settle(agent[1], alice.chat.thread_id, 1)
    assert len(resumes) == 1
    assert ("rejected", "bob", "") in await _decided(database, alice.chat._owner_key, alice.chat.thread_id)


async def test_another_persons_ids_decide_nothing(chat_cls, agent):
    alice = await _ask(chat_cls)
    card = alice.card()
    carol = await Tab(chat_cls, "carol").load()
    await carol.inbox()
    await chat_cls.inbox_resolve.fn(carol.chat, alice.chat.thread_id, {"approved": True}, card.id, card.run_id)
    await chat_cls.inbox_reassign.fn(carol.chat, alice.chat.thread_id, card.id, "carol")
    carol.chat._inbox_foreign = {alice.chat.thread_id: alice.chat._owner_key}  # even a forged map: checked again
    await chat_cls.inbox_resolve.fn(carol.chat, alice.chat.thread_id, {"approved": True}, card.id, card.run_id)
    await asyncio.sleep(0.2)
    assert _resumes(agent[1], alice.chat.thread_id) == []
    await alice.load()
    assert alice.card().assignee == "role:finance"


async def test_reassign_replaces_the_assignees_and_the_asker_follows(chat_cls, agent, database):
    alice = await _ask(chat_cls)
    bob, carol = await Tab(chat_cls, "bob").load(), await Tab(chat_cls, "carol").load()
    card = (await bob.inbox())[0]
    await chat_cls.inbox_reassign.fn(bob.chat, card.thread_id, card.id, "carol")
    assert await bob.inbox() == []
    moved = await carol.inbox()
    assert [c.id for c in moved] == [card.id] and moved[0].assignee == "carol"
    await alice.load()
    assert alice.card().assignee == "carol"
    await carol.approve(moved[0])
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    actions = await _decided(database, alice.chat._owner_key, alice.chat.thread_id)
    assert actions[:2] == [("reassigned", "bob", ""), ("resolved", "carol", "")]


async def test_a_delegate_decides_on_behalf_of_the_person_away(chat_cls, agent, database):
    alice = await _ask(chat_cls)
    bob = await Tab(chat_cls, "bob").load()
    card = (await bob.inbox())[0]
    await chat_cls.inbox_reassign.fn(bob.chat, card.thread_id, card.id, "bob")
    until = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%d")
    await chat_cls.delegate_save.fn(bob.chat, {"to": "carol", "until": until})
    assert bob.chat.delegation["to"] == "carol" and bob.chat.people_error == ""
    carol = await Tab(chat_cls, "carol").load()
    listed = await carol.inbox()
    assert [c.id for c in listed] == [card.id]
    await carol.approve(listed[0])
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    assert ("resolved", "carol", "bob") in await _decided(database, alice.chat._owner_key, alice.chat.thread_id)
    await chat_cls.delegate_save.fn(bob.chat, {"to": "bob", "until": until})
    assert bob.chat.people_error  # not to oneself
    await chat_cls.delegate_save.fn(bob.chat, {"to": "carol", "until": "1999-01-01"})
    assert bob.chat.people_error  # not in the past
    await chat_cls.delegate_clear.fn(bob.chat)
    assert bob.chat.delegation == {}


async def test_reminder_then_escalation_once_each(chat_cls, agent, database, sweeps_by_hand):
    alice = await _ask(chat_cls)
    owner, thread_id = alice.chat._owner_key, alice.chat.thread_id
    rows = store.of_thread(database, owner, thread_id)
    assert len(rows) == 1
    row = next(iter(rows.values()))
    past = datetime.now(UTC) - timedelta(seconds=1)
    t = requests_table
    with database._transaction("test", write=True) as conn:  # the request surfaced long ago
        conn.execute(update(t).where(t.c.thread_id == thread_id).values(
            remind_at=past, escalate_at=past, escalate_to=["role:managers"]))
    assert await sweep.remind() == 2
    assert await sweep.remind() == 0  # never twice
    again = store.get(database, *row.key)
    assert again is not None and again.reminded and again.escalated
    assert again.assignees == ["role:finance", "role:managers"]
    carol = await Tab(chat_cls, "carol").load()
    assert [c.id for c in await carol.inbox()] == [row.interrupt_id]
    assert ("escalated", "", "") in _actions(database, owner, thread_id)


async def test_a_request_that_stays_with_its_asker_works_as_before(chat_cls, agent):
    alice = await Tab(chat_cls, "alice").load()
    await chat_cls.send.fn(alice.chat, {"text": "choice"})
    card = alice.card()
    assert card.can_decide and card.assignee == "alice" and card.need == 0
    assert [c.id for c in await alice.inbox()] == [card.id]


async def test_a_cards_request_rows_are_read_ahead_of_other_chats_reads(chat_cls, monkeypatch):
    """Decision 0033: routing a card reads who it waits for as a person's wait (urgent: decision 0029)."""
    import types

    from interrupt_chat.approvals.people import views
    from interrupt_chat.store import pools

    urgent: list[bool] = []

    def of_thread(*args, **kwargs):  # on the reader thread, in the caller's context
        urgent.append(pools.URGENT.get())
        return store.of_thread(*args, **kwargs)

    monkeypatch.setattr(views, "store", types.SimpleNamespace(of_thread=of_thread))
    alice = await _ask(chat_cls)
    assert alice.card().routed  # the rows were read for this card
    assert urgent and all(urgent), urgent
    assert not pools.URGENT.get()  # the block reset it
