"""Approvals between people on the other paths (issue 41): bulk, decision links, notifications, anonymous
visitors, and the names that leave the server (§6.1: never an identity key)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from interrupt_chat.approvals import links
from interrupt_chat.approvals.decide import DecideState
from interrupt_chat.approvals.people import sweep
from interrupt_chat.model.people import ANONYMOUS
from interrupt_chat.store import requests as store
from interrupt_chat.store.schema import requests_table
from interrupt_chat.tab import server_secret
from tests.unit.people import (  # noqa: F401 - fixtures
    _PERSON,
    Tab,
    _actions,
    _ask,
    _decided,
    _settle,
    agent_fixture,
    chat_cls_fixture,
    one_approval_fixture,
)
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures

pytestmark = pytest.mark.loopback


async def _until(found, what: str) -> Any:
    for _ in range(300):
        value = found()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"waited in vain for {what}")


async def test_bulk_approves_another_persons_request_as_the_persons_own(chat_cls, agent, database):
    alice = await _ask(chat_cls)
    bob = await Tab(chat_cls, "bob").load()
    card = (await bob.inbox())[0]
    chat_cls.inbox_toggle.fn(bob.chat, card.key)
    chat_cls.inbox_bulk_ask.fn(bob.chat, "approve")
    await chat_cls.inbox_bulk_run.fn(bob.chat, "approve")
    assert bob.chat.inbox_bulk["done"] == 1
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    assert ("resolved", "bob", "") in await _decided(database, alice.chat._owner_key, alice.chat.thread_id)


async def test_the_askers_bulk_skips_what_waits_for_others(chat_cls, agent):
    alice = await _ask(chat_cls)
    asked = await alice.inbox("asked")
    assert asked and alice.chat.inbox_selectable == []  # read-only rows are not selectable
    chat_cls.inbox_toggle.fn(alice.chat, asked[0].key)
    assert alice.chat.inbox_selected == []
    await asyncio.sleep(0.1)
    assert [r for r in agent[1].records(alice.chat.thread_id) if r.get("resume")] == []


async def test_a_link_decides_only_as_an_assignee(chat_cls, agent, database, monkeypatch):
    alice = await _ask(chat_cls)
    session = alice.chat._sessions[alice.chat.thread_id]
    url = links.url_for(alice.chat._owner_key, session, alice.card().id)
    token = url.rsplit("/", 1)[-1]
    for person, phase in (("carol", "login"), ("alice", "open"), ("bob", "open")):
        page = Tab(chat_cls, person)
        decide = page.root.get_substate(DecideState.get_full_name().split("."))
        monkeypatch.setattr(DecideState, "_token", lambda self, t=token: t)
        await DecideState.load.fn(decide)
        assert decide.phase == phase, person
        if person == "alice":
            assert decide.card.assignee == "role:finance"
            await DecideState.approve.fn(decide)  # the asker holds the link: it decides nothing
            assert decide.error and not [r for r in agent[1].records(alice.chat.thread_id) if r.get("resume")]
        if person == "bob":
            await DecideState.approve.fn(decide)
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    assert ("resolved", "bob", "") in await _decided(database, alice.chat._owner_key, alice.chat.thread_id)


async def test_assigned_reminder_and_escalated_reach_the_app_without_a_key(chat_cls, agent, database, sweeps_by_hand,
                                                                           monkeypatch):
    heard: list[dict[str, Any]] = []
    monkeypatch.setattr(chat_cls, "notify_fn", heard.append)
    alice = await _ask(chat_cls)
    assigned = await _until(lambda: [n for n in heard if n["event"] == "assigned"], "assigned")
    assert assigned[0]["assignees"] == ["role:finance"] and assigned[0]["owner"] == "alice"
    past = datetime.now(UTC) - timedelta(seconds=1)
    t = requests_table
    with database._transaction("test", write=True) as conn:
        conn.execute(update(t).where(t.c.thread_id == alice.chat.thread_id).values(
            remind_at=past, escalate_at=past, escalate_to=["role:managers"]))
    await sweep.remind()
    await _until(lambda: {"reminder", "escalated"} <= {n["event"] for n in heard}, "reminder and escalated")
    escalated = next(n for n in heard if n["event"] == "escalated")
    assert escalated["assignees"] == ["role:finance", "role:managers"]
    text = json.dumps(heard)
    assert alice.browser not in text and alice.chat._owner_key not in text


async def test_an_anonymous_visitor_of_a_people_chat_decides_as_before(chat_cls, agent, database):
    anonymous = Tab(chat_cls, "")
    _PERSON.pop(anonymous.token, None)  # the login names nobody: the browser's identity (ic.ANONYMOUS)
    await anonymous.load()
    assert anonymous.chat._owner_key.startswith(anonymous.browser + "|")
    await chat_cls.send.fn(anonymous.chat, {"text": "approval"})
    card = anonymous.card()
    assert card.can_decide and card.assignee == "" and card.need == 0
    assert store.asked(database, anonymous.chat._owner_key) == []  # nothing stored: it stays with the asker
    await chat_cls.default_config.resolve.fn(anonymous.config(), {"approved": True}, card.id)  # type: ignore[union-attr]
    assert len(await _settle(agent[1], anonymous.chat.thread_id, 1)) == 1
    assert server_secret.public_person(anonymous.chat._owner_key, chat_cls).startswith("anon-")


def test_anonymous_is_the_empty_name_and_no_login():
    assert ANONYMOUS == "" and repr(ANONYMOUS) == "interrupt_chat.ANONYMOUS"
    assert server_secret.public_person("abcdefghijklmnopqrstuv|x").startswith("anon-")


async def test_hostile_arguments_to_the_people_handlers_change_nothing(chat_cls, agent, database):
    alice = await _ask(chat_cls)
    card = alice.card()
    bob = await Tab(chat_cls, "bob").load()
    await chat_cls.inbox_set_scope.fn(bob.chat, {"$ne": 1})
    assert bob.chat.inbox_scope == "mine"
    for to in ("role:nobody", "alice|x", "", "role:", {"id": "carol"}):
        await chat_cls.inbox_reassign.fn(bob.chat, alice.chat.thread_id, card.id, to)
    await chat_cls.inbox_reassign.fn(bob.chat, "no-such-thread", card.id, "carol")
    await chat_cls.delegate_save.fn(bob.chat, ["to", "carol"])
    await chat_cls.delegate_save.fn(bob.chat, {"to": "carol", "until": "9999-12-31"})  # beyond a year
    assert bob.chat.delegation == {} and bob.chat.people_error
    row = next(iter(store.of_thread(database, alice.chat._owner_key, alice.chat.thread_id).values()))
    assert row.assignees == ["role:finance"] and row.revision == 1
    assert store.delegation_of(database, "bob", datetime.now(UTC)) is None


async def test_a_person_chooses_where_requests_reach_them(chat_cls, database):
    bob = await Tab(chat_cls, "bob").load()
    await bob.inbox()
    assert bob.chat.channel_choice == "both"
    await chat_cls.channel_set.fn(bob.chat, "mail")
    await chat_cls.channel_set.fn(bob.chat, "carrier pigeon")
    assert bob.chat.channel_choice == "mail"
    again = await Tab(chat_cls, "bob").load()
    await again.inbox()
    assert again.chat.channel_choice == "mail"
