"""Live sync (issue 23): a change made in one tab reaches the owner's other tabs, without a reload.

Tabs are ``rx.State`` trees against the demo agent on loopback and one SQLite database, as in
test_consistency.py; ``sync.modify`` reaches a tab's state by its client token (in the app:
``app.modify_state``). Notices travel in-process (no Redis): the scale tests cover Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState, InterruptState
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.workers import sync
from interrupt_chat.workers.proxy_reads import tab_token
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures
from tests.unit.test_consistency import Tab

pytestmark = pytest.mark.loopback


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, str, DemoStore]]:
    fast, slow = create_app(delay=0.0), create_app(delay=0.01)
    from starlette.applications import Starlette
    from starlette.routing import Mount

    with serve_in_thread(Starlette(routes=[Mount("/fast", app=fast), Mount("/slow", app=slow)])) as base:
        yield f"{base}/fast/", f"{base}/slow/", fast.state.store


@pytest.fixture(scope="module")
def chats(agent) -> dict[str, type[ChatState]]:
    return {"fast": new_chat_state("sync-fast", agent_url=agent[0], configs=[]),
            "slow": new_chat_state("sync-slow", agent_url=agent[1], configs=[])}




@pytest.fixture
def tabs(monkeypatch) -> dict[str, Tab]:
    """The open tabs by client token: what ``sync.modify`` reaches."""
    opened: dict[str, Tab] = {}

    @contextlib.asynccontextmanager
    async def modify(token: str, state_name: str):
        tab = opened.get(token)
        yield tab.chat if tab is not None and tab.cls.get_full_name() == state_name else None

    monkeypatch.setattr(sync, "modify", modify)
    return opened


async def _open(tabs: dict[str, Tab], chat_cls: type[ChatState], store: DemoStore) -> Tab:
    tab = await Tab(chat_cls, store).load()
    tabs[tab.token] = tab
    return tab


async def until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_an_answer_in_one_tab_clears_the_card_in_the_other(tabs, chats, agent, page):
    a = await _open(tabs, chats["fast"], agent[2])
    await a.send("approval")
    b = await _open(tabs, chats["fast"], agent[2])
    assert b.chat.thread_id == a.chat.thread_id and b.chat.status == "interrupted"
    [interrupt_id] = b.ids()
    config = await b.config()
    await a.resolve({"approved": True}, interrupt_id)
    # the status and the slot's cards are two states, refreshed one after the other, and the trail
    # follows the thread (decision 0029): wait for all three
    await until(lambda: b.chat.status == "idle" and not b.chat.locked and not config.cards
                and [d["action"] for d in b.chat.decisions] == ["resolved"])
    assert [m.content for m in page.history(b.chat) if m.role == "user"] == ["approval"]


async def test_a_running_turn_streams_into_the_other_tab(tabs, chats, agent):
    a = await _open(tabs, chats["slow"], agent[2])
    await a.send("hello")
    b = await _open(tabs, chats["slow"], agent[2])
    seen: list[str] = []
    run = asyncio.create_task(a.send("long"))
    try:
        await until(lambda: b.chat.status == "running")
        live = await b.chat.get_state(b.cls.live_state)
        await until(lambda: any(row.role == "assistant" and row.content for row in live.live))
        seen.append(next(row.content for row in live.live if row.role == "assistant"))
        await until(lambda: next(row.content for row in live.live if row.role == "assistant") != seen[0])
        assert a.chat.status == "running"  # b saw the answer grow while a's run streamed it
        assert b.chat.following and not a.chat.following  # b may leave for another thread; a drives the run
    finally:
        await a.cls.stop.fn(a.chat)
        await run
    await until(lambda: b.chat.status == "idle")
    assert not b.chat.following


async def test_a_rename_and_a_delete_reach_the_other_tabs_thread_list(tabs, chats, agent, page):
    a = await _open(tabs, chats["fast"], agent[2])
    await a.send("hello")
    thread_id = a.chat.thread_id
    b = await _open(tabs, chats["fast"], agent[2])
    await a.cls.rename_thread.fn(a.chat, {"thread_id": thread_id, "title": "Renamed elsewhere"})
    await until(lambda: [row["title"] for row in b.chat.threads if row["id"] == thread_id] == ["Renamed elsewhere"])
    await a.cls.delete_thread.fn(a.chat, thread_id)
    await until(lambda: all(row["id"] != thread_id for row in b.chat.threads) and b.chat.thread_id != thread_id)
    assert page.history(b.chat) == []


async def test_a_tab_of_another_owner_hears_nothing(tabs, chats, agent, page):
    a = await _open(tabs, chats["fast"], agent[2])
    stranger = await Tab(chats["fast"], agent[2], owner="someone-else").load()
    tabs[stranger.token] = stranger
    await a.send("approval")
    await asyncio.sleep(0.2)
    assert stranger.chat.status == "idle" and page.history(stranger.chat) == []
    assert all(row["id"] != a.chat.thread_id for row in stranger.chat.threads)


async def test_a_notice_that_names_the_new_revision_spares_the_follower_its_head_read(tabs, chats, agent, monkeypatch):
    """A change's notice carries the thread's revision after it: a tab behind it reads the thread at once."""
    from interrupt_chat.approvals.follow import follow
    from interrupt_chat.store.threads_db import ThreadDB

    a = await _open(tabs, chats["fast"], agent[2])
    await a.send("hello")
    behind = await Tab(chats["fast"], agent[2]).load()  # a tab the notices do not reach: it stays behind
    assert behind.chat.thread_id == a.chat.thread_id
    await a.send("again")
    heads: list[str] = []
    real_head = ThreadDB.head
    monkeypatch.setattr(ThreadDB, "head", lambda db, owner, thread_id: heads.append(thread_id)
                        or real_head(db, owner, thread_id))
    revision = a.session.revision
    assert behind.session.revision < revision
    await follow(behind.chat, sync.Notice(a.owner, a.chat.thread_id, a.token, revision=revision))
    assert heads == [] and behind.session.revision == revision
    assert [m.content for m in behind.session.transcript.messages if m.role == "user"] == ["hello", "again"]
    assert sync.Notice.loads(sync.Notice("o", "t", revision=7).dumps()).revision == 7
    assert sync.Notice.loads('{"owner": "o", "thread_id": "t", "revision": "7"}').revision == 0  # only a number


async def test_what_is_new_in_a_turn_reaches_the_other_tabs_at_once_and_its_growth_every_interval(monkeypatch):
    """The turn's first text is not held for the interval its RUN_STARTED's push (the user's row) began."""
    from ag_ui.core import TextMessageContentEvent, TextMessageStartEvent

    from interrupt_chat.agui import AgentSession

    sent: list[list[str]] = []

    async def send(notice: sync.Notice) -> None:
        sent.append([row["content"] for row in notice.rows or []])

    monkeypatch.setattr(sync, "_send", send)
    monkeypatch.setattr(sync, "_anyone_else", lambda owner, origin: True)
    session = AgentSession("http://127.0.0.1:9/", thread_id="live-rows")
    transcript = session.transcript
    transcript.mark_tail()
    transcript.add_user_message("u1", "hello")
    await sync.live("live-owner", session, "tab-a")  # RUN_STARTED's push: the user's row
    transcript.apply(TextMessageStartEvent(message_id="m1", role="assistant"))
    await sync.live("live-owner", session, "tab-a")  # the answer's message starts, empty: at once
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="Hi"))
    await sync.live("live-owner", session, "tab-a")  # its first text: at once
    transcript.apply(TextMessageContentEvent(message_id="m1", delta=" there"))
    await sync.live("live-owner", session, "tab-a")  # it grew: waits for the interval
    assert sent == [["hello"], ["hello", ""], ["hello", "Hi"]]
    monkeypatch.setattr(sync, "LIVE_INTERVAL", 0.0)
    await sync.live("live-owner", session, "tab-a")
    assert sent[-1] == ["hello", "Hi there"]


async def test_the_other_tabs_trail_is_read_before_its_lock_and_after_its_thread(tabs, chats, agent, monkeypatch):
    """An answer's notices (its claim, then its audit entry): the second tab draws the thread, then the rest.

    The rest (trail, ratings, list) is read by the follower before it takes the tab's lock, and the
    thread's refresh comes first: no read of the trail under that tab's lock.
    """
    import contextvars

    from interrupt_chat.approvals import follow as following
    from interrupt_chat.tab import trail

    a = await _open(tabs, chats["fast"], agent[2])
    await a.send("approval")
    b = await _open(tabs, chats["fast"], agent[2])
    [interrupt_id] = b.ids()
    locked: contextvars.ContextVar[bool] = contextvars.ContextVar("locked", default=False)
    following_b: contextvars.ContextVar[bool] = contextvars.ContextVar("following_b", default=False)
    steps: list[str] = []
    follower = sync._follower
    assert follower is not None

    async def follower_of_b(token: str, seen: sync.Watch, notice: sync.Notice) -> None:
        following_b.set(token == b.token)  # (the follower's task: its context is its own)
        await follower(token, seen, notice)

    modify, records_of, show_trail = sync.modify, trail.records_of, trail.show_trail

    @contextlib.asynccontextmanager
    async def tracked(token: str, state_name: str):
        async with modify(token, state_name) as chat:
            reset = locked.set(token == b.token)
            try:
                yield chat
            finally:
                locked.reset(reset)

    async def reading(owner: str, thread_id: str):
        if following_b.get():
            steps.append("trail in the lock" if locked.get() else "trail")
        return await records_of(owner, thread_id)

    async def shown(chat):
        steps.append("trail read in the lock")
        await show_trail(chat)

    monkeypatch.setattr(sync, "_follower", follower_of_b)
    monkeypatch.setattr(sync, "modify", tracked)
    monkeypatch.setattr(trail, "records_of", reading)
    monkeypatch.setattr(trail, "show_trail", shown)
    follow_thread = following.follow

    async def thread(chat, notice):
        if not notice.trail and notice.rows is None:
            steps.append("thread")
        return await follow_thread(chat, notice)

    monkeypatch.setattr(following, "follow", thread)
    await a.resolve({"approved": True}, interrupt_id)
    await until(lambda: b.chat.status == "idle" and [d["action"] for d in b.chat.decisions] == ["resolved"])
    await until(lambda: not sync._waiting)
    assert steps and steps[0] == "thread" and "trail" in steps, steps
    assert "trail in the lock" not in steps and "trail read in the lock" not in steps, steps


HELD: dict[str, Any] = {"token": "", "calls": [], "gate": None}


class Held(InterruptState):
    """S17: a configuration whose handler, in one chosen tab, waits until the test lets it go."""

    async def handler(self, props: dict[str, Any]) -> Any:
        token = tab_token(self)
        HELD["calls"].append(token)
        if token == HELD["token"]:
            await HELD["gate"].wait()
        return {"ids": [i["id"] for i in props["interrupts"]]}


async def test_s17_a_set_new_to_the_other_tab_owes_its_handler_once_and_holds_back_none_of_its_notices(tabs, agent):
    chat_cls = new_chat_state("sync-held", agent_url=agent[0], configs=[Held])
    a = await _open(tabs, chat_cls, agent[2])
    await a.send("hello")
    b = await _open(tabs, chat_cls, agent[2])  # shows the thread before its set surfaces
    HELD.update(token=b.token, calls=[], gate=asyncio.Event())
    try:
        await a.send("approval")
        held = await b.chat.get_state(Held)
        await until(lambda: b.token in HELD["calls"] and held.active)
        thread_id = a.chat.thread_id
        await a.cls.rename_thread.fn(a.chat, {"thread_id": thread_id, "title": "Renamed while held"})
        # b's handler still waits, and b follows the next change all the same
        await until(lambda: [r["title"] for r in b.chat.threads if r["id"] == thread_id] == ["Renamed while held"])
        assert held.result is None
    finally:
        HELD["gate"].set()
    await until(lambda: held.result == {"ids": b.ids()})
    assert HELD["calls"].count(b.token) == 1 and HELD["calls"].count(a.token) == 1
