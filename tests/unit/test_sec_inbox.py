"""The approvals inbox under hostile events (issue 38 §4, §5, §6): paged rows built from the database's
summaries, a selection of listed rows only and capped, an answer that names no run taken as one to
the set the page showed (never a newer one), and "nothing waits" / "no rules" only after a load answered.

Tabs are ``rx.State()`` trees of one owner against the demo agent on loopback, sharing one SQLite
thread database (as in ``test_consistency.py``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import reflex as rx
from reflex.istate.data import SessionData

from interrupt_chat.approvals import inbox as inbox_module
from interrupt_chat.approvals.bulk import item_key
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.demo.agent import DemoStore
from interrupt_chat.store.threads_db import ThreadDB
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures

pytestmark = pytest.mark.loopback

OWNER = "owner-sec-inbox"


@pytest.fixture(scope="module")
def chat_cls(agent) -> type[ChatState]:
    return new_chat_state("sec-inbox", agent_url=agent[0], configs=[])


class Tab:
    """One browser tab of ``OWNER`` (a fresh state tree)."""

    count = 0

    def __init__(self, cls: type[ChatState]) -> None:
        Tab.count += 1
        self.cls, self.token = cls, f"sec-inbox-tab-{Tab.count}-{time.monotonic_ns()}"
        self.root = rx.State()
        self.root.rx_router_session = SessionData(client_token=self.token, client_ip="", session_id=self.token)
        self.chat: ChatState = self.root.get_substate(cls.get_full_name().split("."))
        _own(self.token, self.chat)

    async def load(self) -> Tab:
        await self.cls.on_load_chat.fn(self.chat)
        return self

    async def send(self, text: str) -> None:
        await self.cls.send.fn(self.chat, {"text": text})

    async def new_thread(self) -> None:
        await self.cls.new_thread.fn(self.chat)

    async def inbox(self) -> None:
        await self.cls.load_inbox.fn(self.chat)

    def pending_ids(self) -> list[str]:
        pending = self.chat._sessions[self.chat.thread_id].tracker.pending
        return pending.ids if pending else []


def _own(token: str, chat: ChatState) -> None:
    """The tab's person, the way the harnesses of this version give it."""
    try:
        from interrupt_chat.tab import identity
    except ImportError:  # before the socket-bound identity: the owner cookie
        chat.owner_cookie = OWNER  # type: ignore[attr-defined]
    else:
        identity.bind(token, OWNER)


async def _waiting_threads(cls: type[ChatState], count: int) -> Tab:
    tab = await Tab(cls).load()
    for _ in range(count):
        await tab.new_thread()
        await tab.send("approval")
        assert tab.pending_ids()
    return tab


def _resumes(store: DemoStore, thread_id: str) -> list[dict[str, Any]]:
    return [r for r in store.records(thread_id) if r.get("resume")]


# -- §5: the inbox is paged, and built from the database's rows ------------------------------------------------

async def test_the_inbox_shows_one_page_and_loads_no_thread_whole(chat_cls, database: ThreadDB, monkeypatch):
    monkeypatch.setattr(inbox_module, "PAGE_SIZE", 3, raising=False)
    await _waiting_threads(chat_cls, 7)
    reads: list[str] = []
    whole = ThreadDB.read
    monkeypatch.setattr(ThreadDB, "read", lambda db, owner, thread_id, *a, **k: (
        reads.append(thread_id), whole(db, owner, thread_id, *a, **k))[1])
    tab = Tab(chat_cls)  # another tab, fresh: nothing in memory
    await tab.inbox()
    assert len(tab.chat.inbox) == 3 and tab.chat.inbox_total == 7  # before: all 7 cards in the tab's state
    # before: each waiting thread read whole into the tab (here, only the chat's own shown thread is restored)
    assert len(reads) <= 1 and len(tab.chat._sessions) <= 1
    reads.clear()
    assert len(tab.chat._inbox_listed) == 3
    seen = [c.thread_id for c in tab.chat.inbox]
    await chat_cls.inbox_page_next.fn(tab.chat)
    await chat_cls.inbox_page_next.fn(tab.chat)
    assert tab.chat.inbox_page == 2 and len(tab.chat.inbox) == 1
    await chat_cls.inbox_page_next.fn(tab.chat)  # past the last page: stays on it
    assert tab.chat.inbox_page == 2
    seen += [c.thread_id for c in tab.chat.inbox]
    await chat_cls.inbox_page_prev.fn(tab.chat)
    seen += [c.thread_id for c in tab.chat.inbox]
    assert len(set(seen)) == 7  # every waiting thread is on a page, once
    card = tab.chat.inbox[0]
    assert card.tool_name == "delete_files" and card.plain and card.run_id  # the row is a whole card
    assert reads == []


async def test_a_load_reads_only_threads_that_changed(chat_cls, database: ThreadDB, monkeypatch):
    await _waiting_threads(chat_cls, 3)
    tab = Tab(chat_cls)
    await tab.inbox()
    bodies: list[list[str]] = []
    read_bodies = inbox_module.store_inbox.waiting_bodies
    monkeypatch.setattr(inbox_module.store_inbox, "waiting_bodies",
                        lambda db, owner, ids: (bodies.append(list(ids)), read_bodies(db, owner, ids))[1])
    await tab.inbox()
    assert bodies == []  # nothing changed: one small query, no thread read
    other = await Tab(chat_cls).load()
    await other.new_thread()
    await other.send("approval")  # a new waiting thread
    await tab.inbox()
    assert tab.chat.inbox_total == 4, (bodies, list(tab.chat._sessions))
    assert bodies == [[other.chat.thread_id]]


# -- §5: the selection -------------------------------------------------------------------------------------

async def test_the_selection_takes_only_listed_rows_and_is_capped(chat_cls, monkeypatch):
    await _waiting_threads(chat_cls, 3)
    tab = Tab(chat_cls)
    await tab.inbox()
    junk = "x" * 100_000
    for n in range(200):  # 200 events of 100 kB: before, 20 MB in one var
        chat_cls.inbox_toggle.fn(tab.chat, f"{junk}{n}")
    chat_cls.inbox_toggle.fn(tab.chat, item_key("another-owners-thread", "int-1"))
    chat_cls.inbox_toggle.fn(tab.chat, {"not": "a key"})
    assert tab.chat.inbox_selected == []
    keys = [c.key for c in tab.chat.inbox]
    monkeypatch.setattr(inbox_module, "MAX_SELECTED", 2, raising=False)
    for key in keys:
        chat_cls.inbox_toggle.fn(tab.chat, key)
    assert tab.chat.inbox_selected == keys[:2]  # capped
    chat_cls.inbox_toggle.fn(tab.chat, keys[0])  # unselecting always works
    assert tab.chat.inbox_selected == keys[1:2]
    chat_cls.inbox_select_all.fn(tab.chat, True)
    assert tab.chat.inbox_selected == keys[:2]


# -- §4: an answer that names no run -----------------------------------------------------------------------

async def test_an_answer_without_run_id_never_lands_on_a_newer_request(chat_cls, agent):
    store = agent[1]
    chat_tab = await Tab(chat_cls).load()
    await chat_tab.send("approval")
    thread = chat_tab.chat.thread_id
    inbox = Tab(chat_cls)
    await inbox.inbox()
    [shown] = inbox.chat.inbox
    # the chat answers the shown request, and the agent asks again in the same thread
    await chat_cls.default_config.resolve.fn(await chat_tab.chat.get_state(chat_cls.default_config),
                                             {"approved": False}, shown.id)
    await chat_tab.send("approval")
    [newer] = chat_tab.pending_ids()
    assert newer != shown.id
    sent = len(_resumes(store, thread))
    # a hand-made event: the newer request's id, no run: before, it took the thread's newest set
    await chat_cls.inbox_resolve.fn(inbox.chat, thread, {"approved": True}, newer, "")
    assert len(_resumes(store, thread)) == sent
    # a tab that showed nothing of the thread answers nothing without a run
    fresh = Tab(chat_cls)
    await chat_cls.inbox_resolve.fn(fresh.chat, thread, {"approved": True}, newer)
    assert len(_resumes(store, thread)) == sent
    # the page's own path names the run it showed: that answer goes through, once
    await inbox.inbox()
    [card] = inbox.chat.inbox
    assert card.id == newer
    await chat_cls.inbox_resolve.fn(inbox.chat, thread, {"approved": True}, card.id, card.run_id)
    resumes = _resumes(store, thread)
    assert len(resumes) == sent + 1 and resumes[-1]["resume"][0]["payload"] == {"approved": True}


async def test_an_answer_without_run_id_answers_the_set_the_page_showed(chat_cls, agent):
    store = agent[1]
    chat_tab = await Tab(chat_cls).load()
    await chat_tab.send("approval")
    thread = chat_tab.chat.thread_id
    inbox = Tab(chat_cls)
    await inbox.inbox()
    [card] = inbox.chat.inbox
    await chat_cls.inbox_resolve.fn(inbox.chat, thread, {"approved": True}, card.id)  # the set shown: its run
    assert len(_resumes(store, thread)) == 1


# -- §6: "nothing waits" and "no rules" only once a load answered --------------------------------------------

async def test_the_inbox_and_the_rules_say_they_load_until_a_load_answers(chat_cls):
    tab = Tab(chat_cls)
    assert tab.chat.inbox_loaded is False and tab.chat.policies_loaded is False
    await tab.inbox()
    assert tab.chat.inbox_loaded is True and tab.chat.inbox_total == 0
    await chat_cls.load_policies.fn(tab.chat)
    assert tab.chat.policies_loaded is True and tab.chat.policies == []
