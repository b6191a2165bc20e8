"""Decision links (issue 23): signed tokens, the ``/decide`` page's logic, and exactly one resume on every path.

Tabs are ``rx.State`` trees against the demo agent on loopback; a link is answered the way the page
answers it (:mod:`interrupt_chat.approvals.headless`), with no tab involved.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import reflex as rx
from reflex.istate.data import SessionData

import interrupt_chat as ic
from interrupt_chat.approvals import decide, headless, links, notifier
from interrupt_chat.approvals.decide import DecideState
from interrupt_chat.demo.agent import DemoStore
from tests.unit.holds import holds, this_gate
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab, resumes, wait_for

pytestmark = pytest.mark.loopback




@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="links")


async def _link(tab: Tab) -> tuple[str, str]:
    [interrupt_id] = tab.ids()
    await links.ready()
    url = links.url_for(tab.chat._owner_key, tab.session, interrupt_id)
    return url.rsplit("/", 1)[-1], interrupt_id


def _page() -> DecideState:
    return rx.State().get_substate(DecideState.get_full_name().split("."))  # type: ignore[return-value]


async def _settled(store: DemoStore, thread_id: str, interrupt_id: str) -> int:
    await asyncio.sleep(0.3)  # a second resume, if any, would have reached the agent by now
    return len(resumes(store.records(thread_id), interrupt_id))


def test_a_token_holds_only_while_untouched_and_unexpired(monkeypatch):
    monkeypatch.setenv(links.SECRET_ENV, "one secret")
    token = links.make("user-1|chat", "thread-1", "int-1", "run-1", time.time() + 60)
    link = links.parse(token)
    assert link is not None and (link.thread_id, link.interrupt_id, link.run_id) == ("thread-1", "int-1", "run-1")
    assert "user-1" not in token and not link.expired  # the owner is only hashed
    body, signature = token.split(".")
    assert links.parse(f"{body}x.{signature}") is None and links.parse(f"{body}.{signature[:-2]}") is None
    assert links.parse("") is None and links.parse("a.b.c") is None and links.parse("x" * 5000) is None
    monkeypatch.setenv(links.SECRET_ENV, "another secret")
    assert links.parse(token) is None  # signed with a secret this server does not hold
    monkeypatch.setenv(links.SECRET_ENV, "one secret")
    assert links.parse(links.make("o", "t", "i", "r", time.time() - 1)).expired  # type: ignore[union-attr]


async def test_s23_no_link_for_an_interrupt_that_asks_for_a_secret(chat, agent):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("credential")
    [interrupt_id] = tab.ids()
    assert links.url_for(tab.chat._owner_key, tab.session, interrupt_id) == ""


async def test_a_link_answers_once_with_no_tab_and_the_tab_follows(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    token, interrupt_id = await _link(tab)
    found = await decide._find(_page(), token)
    assert found.phase == "open" and found.card is not None and found.card.tool_name == "delete_files"
    assert '"count": 3' in found.card.edit_args
    first, second = await asyncio.gather(
        headless.answer(chat.state, tab.chat._owner_key, tab.chat.thread_id, "resolve", {"approved": True},
                        interrupt_id, found.link.run_id, "link"),  # type: ignore[union-attr]
        headless.answer(chat.state, tab.chat._owner_key, tab.chat.thread_id, "resolve", {"approved": True},
                        interrupt_id, found.link.run_id, "link"))  # type: ignore[union-attr]
    assert sorted([first.recorded, second.recorded]) == [False, True]
    assert await _settled(agent[1], tab.chat.thread_id, interrupt_id) == 1
    await wait_for(lambda: database.decisions(tab.chat._owner_key, tab.chat.thread_id))  # after the resume leaves
    [entry] = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    assert (entry.action, entry.by) == ("resolved", "link")
    assert (await decide._find(_page(), token)).phase == "done"


async def test_the_pages_approve_holds_the_streams_until_the_agent_has_the_resume(chat, agent, database, monkeypatch):
    """Issue 45 (decision 0037): a person waits on the page, as after a click in the app."""
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    token, interrupt_id = await _link(tab)
    root = rx.State()
    root.rx_router_session = SessionData(client_token="decide-page-tab", client_ip="", session_id="decide-page-tab")
    page = root.get_substate(DecideState.get_full_name().split("."))
    monkeypatch.setattr(DecideState, "_token", lambda self: token)
    await DecideState.load.fn(page)
    assert page.phase == "open"
    had = lambda: len(resumes(agent[1].records(tab.chat.thread_id), interrupt_id))  # noqa: E731
    events = holds(monkeypatch, had, key="decide-page-tab")  # (the tab's follower of the answer holds on its own)
    await DecideState.approve.fn(page)
    assert await _settled(agent[1], tab.chat.thread_id, interrupt_id) == 1
    assert events == [("open", 0), ("close", 1)]  # from the click until the agent had the resume
    gate = this_gate()
    assert gate.holds == 0 and "decide-page-tab" in gate.proven
    assert page.phase == "done" and page.action == "resolved"


async def test_a_link_racing_a_tab_sends_one_resume(chat, agent):
    for _ in range(3):
        tab = await Tab(chat.state, agent[1]).load()
        await tab.cls.new_thread.fn(tab.chat)
        await tab.send("approval")
        token, interrupt_id = await _link(tab)
        link = links.parse(token)
        assert link is not None
        await asyncio.gather(tab.resolve({"approved": False}, interrupt_id),
                             headless.answer(chat.state, tab.chat._owner_key, tab.chat.thread_id, "resolve",
                                             {"approved": True}, interrupt_id, link.run_id, "link"))
        assert await _settled(agent[1], tab.chat.thread_id, interrupt_id) == 1


async def test_a_tampered_or_foreign_link_is_invalid_and_an_expired_one_done(chat, agent, monkeypatch):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    token, interrupt_id = await _link(tab)
    body, signature = token.split(".")
    assert (await decide._find(_page(), f"{body[:-1]}A.{signature}")).phase == "invalid"
    foreign = links.make("someone-else|" + chat.state.get_full_name(), tab.chat.thread_id, interrupt_id, "",
                         time.time() + 60)
    assert (await decide._find(_page(), foreign)).phase == "invalid"  # not this thread's owner
    monkeypatch.setenv(links.LINK_HOURS_ENV, "0.0000001")  # a link that expires at once
    await links.ready()
    short = links.url_for(tab.chat._owner_key, tab.session, interrupt_id).rsplit("/", 1)[-1]
    await asyncio.sleep(0.01)
    found = await decide._find(_page(), short)
    assert (found.phase, found.action) == ("done", "expired")
    assert notifier.notification("pending", "o|c", "t")["decide_url"] == ""


WHO = {"user": "alice"}  # the app's logged-in user, for a chat whose links need the owner's own login


async def test_a_chat_that_requires_the_owner_shows_its_links_only_to_them(agent):
    chat = ic.Chat(agent[0], owner=lambda chat: WHO["user"], decide_requires_owner=True, name="links-login")
    WHO["user"] = "alice"
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    token, _ = await _link(tab)
    try:
        WHO["user"] = "mallory"  # the link forwarded to someone else, logged in as themselves
        assert (await decide._find(_page(), token)).phase == "login"
        WHO["user"] = "alice"
        assert (await decide._find(_page(), token)).phase == "open"
    finally:
        WHO["user"] = "alice"


def test_a_server_side_state_is_made_outside_pytest_too(chat, monkeypatch):
    """``reflex run`` is no test environment: a plain ``rx.State()`` raises there (links and expiry would fail)."""
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    detached = headless.detached(chat.state, "link")
    assert isinstance(detached, chat.state) and detached.router.session.client_token.startswith("link-")
