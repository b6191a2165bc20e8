"""Expiry that fails closed (issue 23): ``Chat(on_expiry="cancel")`` sends a set once its last open interrupt
expired, with no tab involved; without the option S11 is unchanged. Tabs are ``rx.State`` trees against the
demo agent (its ``expiring`` scenario expires in 1.5 s here)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

import interrupt_chat as ic
from interrupt_chat.approvals import expiry
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.tab.answers import EXPIRED_MESSAGE
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures
from tests.unit.test_consistency import Tab, resumes, wait_for

pytestmark = pytest.mark.loopback

EXPIRES_IN = 1.5


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, DemoStore]]:
    app = create_app(delay=0.0, expires_in=EXPIRES_IN)
    with serve_in_thread(app) as base:
        yield f"{base}/", app.state.store


@pytest.fixture(autouse=True)
def by_hand(request) -> None:
    """Sweeps are made by the tests themselves (one test lets the chat start the sweeper on its own)."""
    if "automatic" not in request.node.name:
        request.getfixturevalue("sweeps_by_hand")



async def _settle(store: DemoStore, thread_id: str) -> list[dict]:
    for _ in range(100):
        done = [r for r in store.records(thread_id) if r.get("resume")]
        if done:
            await asyncio.sleep(0.2)  # a second one would be here by now
            return [r for r in store.records(thread_id) if r.get("resume")]
        await asyncio.sleep(0.02)
    return []


async def test_s11_a_set_whose_last_interrupt_expired_is_sent_as_cancelled_with_no_tab(agent, database):
    url, store = agent
    chat = ic.Chat(url, on_expiry="cancel", name="expiry-cancel")
    tab = await Tab(chat.state, store).load()
    await tab.send("expiring")
    [interrupt_id] = tab.ids()
    thread_id, owner = tab.chat.thread_id, tab.chat._owner_key  # (the tab's countdown ran until it expired)
    await asyncio.sleep(0.1)
    assert await expiry.sweep() == 1
    [resume] = await _settle(store, thread_id)
    assert resume["resume"] == [{"interruptId": interrupt_id, "status": "cancelled"}]
    await wait_for(lambda: database.decisions(owner, thread_id))  # the audit entry follows the POST (decision 0028)
    [entry] = database.decisions(owner, thread_id)
    assert (entry.action, entry.by) == ("expired", "expiry")
    assert await expiry.sweep() == 0  # sent once


async def test_without_the_option_an_expired_set_waits_for_the_person(agent):
    url, store = agent
    chat = ic.Chat(url, name="expiry-unchanged")
    tab = await Tab(chat.state, store).load()
    await tab.send("expiring")
    await expiry.sweep()
    await asyncio.sleep(0.2)
    assert [r for r in store.records(tab.chat.thread_id) if r.get("resume")] == []
    assert tab.chat.status == "interrupted"


async def test_the_sweeper_and_a_person_answering_at_once_send_one_resume(agent):
    url, store = agent
    chat = ic.Chat(url, on_expiry="cancel", name="expiry-race")
    for _ in range(3):
        tab = await Tab(chat.state, store).load()
        await tab.cls.new_thread.fn(tab.chat)
        await tab.send("expiring")
        [interrupt_id] = tab.ids()
        await asyncio.gather(expiry.sweep(), tab.cancel(interrupt_id))
        assert len(resumes(await _settle(store, tab.chat.thread_id), interrupt_id)) == 1


async def test_the_sweeper_starts_with_the_chat_and_sends_on_its_own_automatic(agent, database):
    url, store = agent
    chat = ic.Chat(url, on_expiry="cancel", name="expiry-automatic")
    tab = await Tab(chat.state, store).load()  # the chat's first event starts this worker's sweeper
    await tab.send("expiring")
    [interrupt_id] = tab.ids()
    [resume] = await _settle(store, tab.chat.thread_id)  # nobody answers
    assert resume["resume"] == [{"interruptId": interrupt_id, "status": "cancelled"}]


async def test_s11_a_request_in_a_hidden_version_is_not_swept_and_fails_closed_when_shown(agent, database):
    """Decision 0021: a request left open in a version the person switched away from waits there; expiry does
    not sweep it. Shown again after its ``expiresAt``, it can only be cancelled (S11), and then the sweeper
    sends it as cancelled once."""
    url, store = agent
    chat = ic.Chat(url, on_expiry="cancel", name="expiry-hidden")
    tab = await Tab(chat.state, store).load()
    await tab.send("history first")
    first = next(m.id for m in tab.session.transcript.messages if m.role == "user")
    await chat.state.save_edit.fn(tab.chat, {"message_id": first, "text": "history changed"})
    await tab.send("expiring")
    [interrupt_id] = tab.ids()
    changed = next(m.id for m in tab.session.transcript.messages if m.content == "history changed")
    await chat.state.previous_branch.fn(tab.chat, changed)  # the request's version is hidden now
    assert tab.ids() == [] and tab.chat.status == "idle"
    await asyncio.sleep(EXPIRES_IN + 0.2)
    assert await expiry.sweep() == 0
    assert [r for r in store.records(tab.chat.thread_id) if r.get("resume")] == []
    await chat.state.next_branch.fn(tab.chat, first)
    assert tab.ids() == [interrupt_id]
    await tab.resolve({"approved": True}, interrupt_id)
    [card] = (await tab.config()).cards
    assert card.error == EXPIRED_MESSAGE and tab.ids() == [interrupt_id]
    assert [r for r in store.records(tab.chat.thread_id) if r.get("resume")] == []
    assert await expiry.sweep() == 1
    [resume] = await _settle(store, tab.chat.thread_id)
    assert resume["resume"] == [{"interruptId": interrupt_id, "status": "cancelled"}]
