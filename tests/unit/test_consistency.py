"""One thread, one truth across tabs, workers and restarts (docs/decisions/0016): one test per finding.

Several ``rx.State()`` trees act as tabs of one browser (one owner cookie) against the demo agent
on loopback, sharing one SQLite thread database; a fresh tree is what a restarted backend has.
The agent's store records every request it received: that is how "sent once" is checked.
``async with self`` is a no-op under pytest, so two tabs' handlers interleave at every await,
as two tabs (each with its own lock) do in a real worker.
"""

from __future__ import annotations

import asyncio
import pickle
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
import reflex as rx
from reflex.istate.data import SessionData
from starlette.applications import Starlette
from starlette.routing import Mount

from interrupt_chat.agui import AgentSession
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.store.threads_db import ThreadConflict, ThreadDB, ThreadDeleted
from interrupt_chat.tab import claims, identity, persistence, routing
from interrupt_chat.tab.sending import CLAIM_ATTEMPTS
from interrupt_chat.tab.tools import FrontendToolState, attach
from interrupt_chat.workers import runs
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures

pytestmark = pytest.mark.loopback

OWNER = "owner-consistency"
USER = {"name": "alice"}  # the logged-in user of the ``owned`` chat (finding 5)
HEADERS_FAIL = {"on": False}  # the ``headered`` chat's headers function raises while set (finding 8)


class Steps(FrontendToolState):
    tool_name: ClassVar[str] = "generate_task_steps"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"steps": {"type": "array"}}}


class Clock(FrontendToolState):
    tool_name: ClassVar[str] = "get_time"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"timezone": {"type": "string"}}}

    @staticmethod
    async def handle(args: Any) -> Any:
        return {"time": "12:00", "timezone": args["timezone"]}


def _headers(chat: ChatState) -> dict[str, str]:
    if HEADERS_FAIL["on"]:
        raise RuntimeError("token service down")
    return {"authorization": "Bearer t"}


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, str, DemoStore, DemoStore]]:
    fast, slow = create_app(delay=0.0), create_app(delay=0.004)
    router = Starlette(routes=[Mount("/fast", app=fast), Mount("/slow", app=slow)])
    with serve_in_thread(router) as base:
        yield f"{base}/fast/", f"{base}/slow/", fast.state.store, slow.state.store


@pytest.fixture(scope="module")
def chats(agent) -> dict[str, type[ChatState]]:
    fast, slow = agent[0], agent[1]
    return {
        "plain": new_chat_state("consistency-plain", agent_url=fast, configs=[]),
        "slow": new_chat_state("consistency-slow", agent_url=slow, configs=[]),
        "tools": new_chat_state("consistency-tools", agent_url=fast, configs=[], tools=[Steps, Clock]),
        "owned": new_chat_state("consistency-owned", agent_url=fast, configs=[], owner=lambda chat: USER["name"]),
        "headered": new_chat_state("consistency-headers", agent_url=fast, configs=[], headers=_headers),
    }


class Tab:
    """One browser tab: a fresh state tree (``restart`` makes a new one, as a restarted backend has)."""

    count = 0

    def __init__(self, chat_cls: type[ChatState], store: DemoStore, owner: str = OWNER) -> None:
        Tab.count += 1
        self.cls, self.store, self.owner = chat_cls, store, owner
        self.token = f"tab-{Tab.count}"
        self.restart()

    def restart(self) -> None:
        self.root = rx.State()
        self.root.rx_router_session = SessionData(client_token=self.token, client_ip="", session_id=self.token)
        self.chat: ChatState = self.root.get_substate(self.cls.get_full_name().split("."))
        identity.bind(self.token, self.owner)  # the tab's socket: its browser's identity

    async def load(self) -> Tab:
        await self.cls.on_load_chat.fn(self.chat)
        return self

    async def send(self, text: str) -> None:
        await self.cls.send.fn(self.chat, {"text": text})

    async def config(self):
        return await self.chat.get_state(self.cls.default_config)

    async def resolve(self, payload: Any, interrupt_id: str | None) -> None:
        await self.cls.default_config.resolve.fn(await self.config(), payload, interrupt_id)

    async def cancel(self, interrupt_id: str | None) -> None:
        await self.cls.default_config.cancel.fn(await self.config(), interrupt_id)

    async def tool(self, tool_cls: type[FrontendToolState]) -> Any:
        return await self.chat.get_state(tool_cls)

    @property
    def session(self) -> AgentSession:
        return self.chat._sessions[self.chat.thread_id]

    def ids(self) -> list[str]:
        pending = self.session.tracker.pending
        return pending.ids if pending else []

    def requests(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        return self.store.records(thread_id or self.chat.thread_id)


def resumes(records: list[dict[str, Any]], interrupt_id: str) -> list[dict[str, Any]]:
    return [r for r in records if any(e.get("interruptId") == interrupt_id for e in r.get("resume") or [])]


def stored_texts(db: ThreadDB, owner_key: str, thread_id: str) -> list[str]:
    session = db.load(owner_key, thread_id)
    assert session is not None
    return [m.content for m in session.transcript.messages if m.role == "user"]


async def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.01)


# -- 1. duplicate resume --------------------------------------------------------------------------------

async def test_finding01_s10_a_tab_answering_while_another_tabs_resume_runs_sends_nothing(chats, agent):
    a = await Tab(chats["slow"], agent[3]).load()
    await a.send("approval")
    b = await Tab(chats["slow"], agent[3]).load()
    [interrupt_id] = b.ids()
    first = asyncio.create_task(a.resolve({"approved": True}, interrupt_id))
    await wait_for(lambda: a.session.running)
    await asyncio.sleep(0.05)  # the resume is streaming
    await b.resolve({"approved": False}, interrupt_id)
    await first
    assert len(resumes(a.requests(), interrupt_id)) == 1
    assert resumes(a.requests(), interrupt_id)[0]["resume"][0]["payload"] == {"approved": True}
    assert b.chat.notice and "another window" in b.chat.notice


@pytest.mark.parametrize("round_", range(3))
async def test_finding01_s10_s25_two_tabs_after_a_restart_clicking_together_send_one_resume(chats, agent, round_):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("approval")
    [interrupt_id] = a.ids()
    a.restart()
    b = Tab(chats["plain"], agent[2])
    await asyncio.gather(a.load(), b.load())
    await asyncio.gather(a.resolve({"approved": True}, interrupt_id), b.resolve({"approved": True}, interrupt_id))
    assert len(resumes(a.requests(), interrupt_id)) == 1


async def test_finding01_s07_s14_partial_answers_and_dismissals_reach_the_database_and_other_tabs(chats, agent,
                                                                                            database):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("multi")
    ids = a.ids()
    await a.cancel(ids[2])
    b = await Tab(chats["plain"], agent[2]).load()
    assert [c.answered for c in (await b.config()).cards] == ["", "", "cancelled"]
    await b.resolve({"color": "red"}, ids[1])
    await a.resolve({"approved": True}, ids[0])  # a's copy is stale: refreshed, b's answer kept
    [resume] = resumes(a.requests(), ids[0])
    assert [e["status"] for e in resume["resume"]] == ["resolved", "resolved", "cancelled"]
    assert resume["resume"][1]["payload"] == {"color": "red"}

    await a.send("legacy")
    c = await Tab(chats["plain"], agent[2]).load()
    assert c.session.tracker.pending is not None and c.session.tracker.pending.kind == "legacy"
    await a.cancel(None)  # a legacy dismissal: nothing is sent, but every tab sees it
    await c.load()
    assert c.session.tracker.pending is None and c.chat.locked is False


# -- 2. last writer wins ---------------------------------------------------------------------------------

async def test_finding02_a_stale_tab_renaming_keeps_the_other_tabs_turn(chats, agent, database):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("first")
    b = await Tab(chats["plain"], agent[2]).load()
    await a.send("second")
    await b.cls.rename_thread.fn(b.chat, {"thread_id": a.chat.thread_id, "title": "Renamed"})
    assert stored_texts(database, a.chat._owner_key, a.chat.thread_id) == ["first", "second"]
    assert database.threads(a.chat._owner_key)[0].title == "Renamed"


async def test_finding02_a_stale_tab_sending_carries_the_other_tabs_turns(chats, agent, database):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("first")
    b = await Tab(chats["plain"], agent[2]).load()
    await a.send("second")
    await b.send("third")
    user_texts = [m["content"] for m in b.requests()[-1]["messages"] if m["role"] == "user"]
    assert user_texts == ["first", "second", "third"]
    assert stored_texts(database, a.chat._owner_key, a.chat.thread_id) == ["first", "second", "third"]


async def test_finding02_a_stale_rename_never_writes_an_answered_approval_back(chats, agent, database):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("approval")
    [interrupt_id] = a.ids()
    b = await Tab(chats["plain"], agent[2]).load()
    await a.resolve({"approved": True}, interrupt_id)
    await b.cls.rename_thread.fn(b.chat, {"thread_id": b.chat.thread_id, "title": "stale"})
    assert database.pending(a.chat._owner_key) == []
    c = await Tab(chats["plain"], agent[2]).load()
    await c.cls.load_inbox.fn(c.chat)
    assert c.chat.inbox == []
    await c.cls.inbox_resolve.fn(c.chat, a.chat.thread_id, {"approved": False}, interrupt_id)
    assert [r["resume"][0]["payload"] for r in resumes(a.requests(), interrupt_id)] == [{"approved": True}]


async def test_finding02_two_workers_databases_do_not_overwrite_each_other(chats, agent, database, tmp_path):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("first")
    owner, thread_id = a.chat._owner_key, a.chat.thread_id
    other = ThreadDB(f"sqlite:///{tmp_path / 'threads.db'}")  # a second worker's
    try:
        mine, theirs = database.load(owner, thread_id), other.load(owner, thread_id)
        assert mine is not None and theirs is not None and mine.revision == theirs.revision
        mine.transcript.add_user_message("m1", "mine")
        theirs.transcript.add_user_message("t1", "theirs")
        database.save(owner, mine, revision=mine.revision)
        with pytest.raises(ThreadConflict):
            other.save(owner, theirs, revision=theirs.revision)
        assert stored_texts(other, owner, thread_id) == ["first", "mine"]
    finally:
        other.close()


# -- 3. a tool call answered twice -------------------------------------------------------------------------

async def test_finding03_s28_a_tool_call_answered_from_two_tabs_sends_one_result(chats, agent):
    a = await Tab(chats["tools"], agent[2]).load()
    await a.send("steps")
    [row] = a.chat.tool_waits
    b = await Tab(chats["tools"], agent[2]).load()
    c = await Tab(chats["tools"], agent[2]).load()
    await asyncio.gather(Steps.respond.fn(await a.tool(Steps), row.id, {"steps": []}),
                         Steps.respond.fn(await b.tool(Steps), row.id, {"steps": [1]}))
    await Steps.respond.fn(await c.tool(Steps), row.id, {"steps": [2]})  # after the run ended and was saved
    results = [m for r in a.requests() for m in r["messages"] if m["role"] == "tool" and m["toolCallId"] == row.id]
    assert len(a.requests()) == 2 and len(results) == 1


# -- 4. a stale inbox card ---------------------------------------------------------------------------------

async def test_finding04_a_stale_inbox_card_answers_nothing_newer(chats, agent):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("legacy")
    inbox = await Tab(chats["plain"], agent[2]).load()
    await inbox.cls.load_inbox.fn(inbox.chat)
    [card] = inbox.chat.inbox
    await a.resolve({"answer": "first"}, None)  # answered in the chat
    await a.send("legacy")  # a newer legacy set, whose card id is "" too
    sent = len(a.requests())
    await inbox.cls.inbox_resolve.fn(inbox.chat, card.thread_id, {"answer": "stale"}, None, card.run_id)
    assert len(a.requests()) == sent and "another window" in inbox.chat.notice
    await inbox.cls.inbox_resolve.fn(inbox.chat, card.thread_id, {"answer": "stale"}, "", card.run_id)
    assert len(a.requests()) == sent


# -- 5. another user's threads ------------------------------------------------------------------------------

async def test_finding05_another_users_threads_do_not_leak(chats, agent, database):
    USER["name"] = "alice"
    tab = await Tab(chats["owned"], agent[2]).load()
    await tab.send("approval")
    alice_thread, alice_key = tab.chat.thread_id, tab.chat._owner_key
    USER["name"] = "bob"  # log out, log in as someone else, in the same tab
    try:
        await tab.cls.ensure_loaded.fn(tab.chat)
        assert tab.chat.thread_id != alice_thread and alice_thread not in tab.chat._sessions
        assert all(row["id"] != alice_thread for row in tab.chat.threads) and tab.chat.locked is False
        await tab.cls.load_inbox.fn(tab.chat)
        assert tab.chat.inbox == []
        await tab.cls.switch_thread.fn(tab.chat, alice_thread)  # an id from the page: not bob's
        assert tab.chat.thread_id != alice_thread
        await tab.cls.rename_thread.fn(tab.chat, {"thread_id": alice_thread, "title": "mine now"})
        await tab.cls.delete_thread.fn(tab.chat, alice_thread)
        await tab.send("hello")
        bob_key = tab.chat._owner_key
        assert bob_key != alice_key
        assert [s.thread_id for s in database.threads(bob_key)] == [tab.chat.thread_id]
        assert stored_texts(database, bob_key, tab.chat.thread_id) == ["hello"]
        assert [s.title for s in database.threads(alice_key)] == ["approval"]
    finally:
        USER["name"] = "alice"


# -- 6. a deleted thread comes back ---------------------------------------------------------------------------

async def test_finding06_a_thread_deleted_while_it_runs_stays_deleted(chats, agent, database):
    a = await Tab(chats["slow"], agent[3]).load()
    run = asyncio.create_task(a.send("long"))
    await wait_for(lambda: runs.local((a.chat._owner_key, a.chat.thread_id)) is not None)  # claimed and running
    thread_id, owner = a.chat.thread_id, a.chat._owner_key
    b = Tab(chats["slow"], agent[3])  # another worker's copy after a Redis round trip: not running
    b.chat._sessions = pickle.loads(pickle.dumps(a.chat._sessions))
    b.chat.thread_id, b.chat._owner_key, b.chat.loaded = thread_id, owner, True
    await b.cls.delete_thread.fn(b.chat, thread_id)
    await asyncio.wait_for(run, 10)  # the delete stopped it
    assert all(s.thread_id != thread_id for s in database.threads(owner))
    assert database.head(owner, thread_id).deleted
    with pytest.raises(ThreadDeleted):
        database.overwrite(owner, AgentSession("http://127.0.0.1:9/", thread_id=thread_id))


# -- 7. runs keyed per tab -----------------------------------------------------------------------------------

async def test_finding07_stop_and_liveness_belong_to_the_thread_not_the_tab(chats, agent):
    a = await Tab(chats["slow"], agent[3]).load()
    first = asyncio.create_task(a.send("long"))
    await wait_for(lambda: runs.local((a.chat._owner_key, a.chat.thread_id)) is not None)  # claimed and running
    b = await Tab(chats["slow"], agent[3]).load()
    await b.cls.new_thread.fn(b.chat)
    second = asyncio.create_task(b.send("long"))
    await wait_for(lambda: runs.local((b.chat._owner_key, b.chat.thread_id)) is not None)
    owner, thread_1, thread_2 = a.chat._owner_key, a.chat.thread_id, b.chat.thread_id
    assert thread_1 != thread_2 and await runs.alive((owner, thread_1)) and await runs.alive((owner, thread_2))
    await b.cls.stop.fn(b.chat)  # the shown thread's run only
    await asyncio.wait_for(second, 10)
    assert not first.done() and await runs.alive((owner, thread_1)) and not await runs.alive((owner, thread_2))
    await b.cls.switch_thread.fn(b.chat, thread_1)  # another tab's run of the same owner: its stop reaches it
    await b.cls.stop.fn(b.chat)
    await asyncio.wait_for(first, 10)
    assert a.chat.status != "running"


# -- 8. headers that raise -------------------------------------------------------------------------------------

async def test_finding08_s15_headers_that_raise_at_resume_time_do_not_wedge_the_thread(chats, agent):
    tab = await Tab(chats["headered"], agent[2]).load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    HEADERS_FAIL["on"] = True
    try:
        await tab.resolve({"approved": True}, interrupt_id)
        assert resumes(tab.requests(), interrupt_id) == [] and not tab.session.tracker.sealed
        assert "could not be sent" in tab.chat.notice
        await tab.send("hello")  # nor does a send
        assert len(tab.requests()) == 1
    finally:
        HEADERS_FAIL["on"] = False
    await tab.resolve({"approved": True}, interrupt_id)
    assert len(resumes(tab.requests(), interrupt_id)) == 1 and tab.chat.status == "idle"


# -- 9. answers right after a restart ---------------------------------------------------------------------------

async def test_finding09_s25_a_form_submitted_to_a_fresh_state_reaches_its_thread(chats, agent):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("choice")
    [interrupt_id] = a.ids()
    thread_id = a.chat.thread_id
    a.restart()  # no load: the first event of the fresh state is the submit
    await a.cls.default_config.submit_form.fn(await a.config(), {"__interrupt_id": interrupt_id, "color": "green"})
    assert a.chat.thread_id == thread_id
    [resume] = resumes(a.requests(thread_id), interrupt_id)
    assert resume["resume"][0]["payload"] == {"color": "green"}


async def test_finding09_s25_an_inbox_form_submitted_to_a_fresh_state_carries_its_payload(chats, agent):
    a = await Tab(chats["plain"], agent[2]).load()
    await a.send("choice")
    [interrupt_id] = a.ids()
    inbox = Tab(chats["plain"], agent[2])  # fresh: nothing loaded
    await inbox.cls.inbox_submit_form.fn(inbox.chat, {"__interrupt_id": interrupt_id, "__thread_id": a.chat.thread_id,
                                                      "__run_id": a.session.tracker.pending.run_id, "color": "blue"})
    [resume] = resumes(a.requests(), interrupt_id)
    assert resume["resume"][0]["payload"] == {"color": "blue"}


# -- 10. a server-side tool left waiting ------------------------------------------------------------------------

async def test_finding10_a_server_side_tool_left_waiting_by_a_restart_runs_on_the_next_load(chats, agent, database):
    chat_cls = chats["tools"]
    owner = f"{OWNER}|{chat_cls.get_full_name()}"
    session = attach(AgentSession(agent[0]), chat_cls)
    async for _ in session.send("clock"):
        pass
    assert session.needs_handlers
    database.save(owner, session, revision=0, in_flight=True)  # the run's end, saved; then the worker died
    tab = await Tab(chat_cls, agent[2]).load()
    assert tab.chat.thread_id == session.thread_id
    assert len(tab.requests()) == 2 and not tab.session.tool_waits and tab.chat.locked is False
    assert '"12:00"' in next(m for m in tab.requests()[-1]["messages"] if m["role"] == "tool")["content"]
    again = await Tab(chat_cls, agent[2]).load()  # and only once
    assert len(again.requests()) == 2


# -- 11. a blocked database ----------------------------------------------------------------------------------------

async def test_finding11_a_locked_database_does_not_stall_the_event_loop(chats, agent, tmp_path):
    tab = await Tab(chats["plain"], agent[2]).load()
    await tab.send("first")
    blocker = sqlite3.connect(tmp_path / "threads.db", check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    release = threading.Timer(1.0, blocker.rollback)
    release.start()
    counting = asyncio.create_task(ticker())
    try:
        started = time.monotonic()
        await tab.send("second")  # its claim waits for the lock, on a worker thread
        waited = time.monotonic() - started
    finally:
        counting.cancel()
        release.join()
        blocker.close()
    assert waited >= 0.9 and ticks >= 40  # the loop kept running while the write waited
    assert [m["content"] for m in tab.requests()[-1]["messages"] if m["role"] == "user"] == ["first", "second"]


# -- 12. bounds -------------------------------------------------------------------------------------------------

async def test_finding12_one_expiry_countdown_per_tab(chats, agent, monkeypatch):
    tab = await Tab(chats["plain"], agent[2]).load()
    # not awaited: a send's handler goes on counting the card down until it expires (30 s)
    sending = asyncio.create_task(tab.send("expiring"))
    for _ in range(500):
        if tab.chat._sessions and tab.ids():
            break
        await asyncio.sleep(0.01)
    assert tab.ids()  # the card is there, with its deadline ahead
    refreshes = 0
    original = routing._refresh_expiry

    async def counted(*args: Any) -> bool:
        nonlocal refreshes
        refreshes += 1
        return await original(*args)

    monkeypatch.setattr(routing, "_refresh_expiry", counted)
    loops = [asyncio.create_task(tab.cls.route_interrupts.fn(tab.chat)) for _ in range(10)]
    await asyncio.sleep(2.5)
    for loop in (*loops, sending):
        loop.cancel()
    await asyncio.gather(*loops, sending, return_exceptions=True)
    assert 1 <= refreshes <= 4  # one countdown: a refresh a second (not 10 of each, nor a first look each)


async def test_finding12_memory_holds_only_what_it_must(chats, agent):
    tab = await Tab(chats["plain"], agent[2]).load()
    for _ in range(20):
        await tab.cls.new_thread.fn(tab.chat)
    assert len(tab.chat._sessions) == 1
    for n in range(20):
        await tab.cls.rename_thread.fn(tab.chat, {"thread_id": f"made-up-{n}", "title": "x"})
    assert tab.chat._titles == {}
    visited = []
    for n in range(4):
        await tab.cls.new_thread.fn(tab.chat)
        await tab.send(f"thread {n}")
        visited.append(tab.chat.thread_id)
    for thread_id in visited:
        await tab.cls.switch_thread.fn(tab.chat, thread_id)
    assert set(tab.chat._sessions) == {visited[-1]}  # the others are in the database, read when shown
    await tab.cls.switch_thread.fn(tab.chat, visited[0])
    assert [m.content for m in tab.session.transcript.messages if m.role == "user"] == ["thread 0"]


async def test_finding12_a_tool_result_has_the_limits_of_an_answer(chats, agent):
    tab = await Tab(chats["tools"], agent[2]).load()
    await tab.send("steps")
    [row] = tab.chat.tool_waits
    deep: Any = []
    for _ in range(200):
        deep = [deep]
    await Steps.respond.fn(await tab.tool(Steps), row.id, deep)
    await Steps.respond.fn(await tab.tool(Steps), row.id, "x" * 2_000_000)
    assert len(tab.requests()) == 1 and tab.chat.tool_waits and "not sent" in tab.chat.notice


# -- 13. every claim lost ---------------------------------------------------------------------------------------

def lose_every_claim(monkeypatch) -> list[claims.Attempt[Any]]:
    """Every conditional write loses, as if another tab always wrote first; the attempts that tried to write."""
    tried: list[claims.Attempt[Any]] = []

    class Recorded(claims.Attempt[Any]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            tried.append(self)

    async def lost(chat: Any, session: AgentSession, **kwargs: Any) -> persistence.Commit:
        return persistence.Commit.LOST

    monkeypatch.setattr(persistence, "commit", lost)
    monkeypatch.setattr(claims, "Attempt", Recorded)
    return tried


def closed(events: Any) -> bool:
    return events is not None and events.ag_frame is None  # an async generator closed before it started


async def test_a_send_that_loses_every_claim_sends_nothing_and_says_so(chats, agent, monkeypatch):
    tab = await Tab(chats["plain"], agent[2]).load()
    tried = lose_every_claim(monkeypatch)
    await tab.send("hello")
    assert len(tried) == CLAIM_ATTEMPTS == 3 and all(closed(a.value) for a in tried) and tab.requests() == []
    assert tab.chat.notice == persistence.CONFLICT_NOTICE and tab.chat.status != "running"


async def test_an_answer_that_loses_every_claim_resumes_nothing_and_says_so(chats, agent, monkeypatch):
    tab = await Tab(chats["plain"], agent[2]).load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    tried = lose_every_claim(monkeypatch)
    await tab.resolve({"approved": True}, interrupt_id)
    assert len(tried) == 3 and all(closed(a.value.events) and a.value.audits == [] for a in tried)
    assert resumes(tab.requests(), interrupt_id) == [] and tab.chat.notice == persistence.CONFLICT_NOTICE


async def test_a_tool_result_that_loses_every_claim_is_not_sent_and_says_so(chats, agent, monkeypatch):
    tab = await Tab(chats["tools"], agent[2]).load()
    await tab.send("steps")
    [row] = tab.chat.tool_waits
    tried = lose_every_claim(monkeypatch)
    await Steps.respond.fn(await tab.tool(Steps), row.id, {"steps": []})
    assert len(tried) == 3 and all(closed(a.value) for a in tried) and len(tab.requests()) == 1
    assert tab.chat.notice == persistence.CONFLICT_NOTICE and tab.chat.tool_waits


async def test_an_edit_that_loses_every_claim_runs_nothing_and_says_so(chats, agent, monkeypatch):
    tab = await Tab(chats["plain"], agent[2]).load()
    await tab.send("hello")
    sent = len(tab.requests())
    [user] = [m.id for m in tab.session.transcript.messages if m.role == "user"]
    tried = lose_every_claim(monkeypatch)
    await tab.cls.save_edit.fn(tab.chat, {"message_id": user, "text": "hello again"})
    assert len(tried) == 3 and all(closed(a.value) and a.branches is not None for a in tried)
    assert len(tab.requests()) == sent and tab.chat.notice == persistence.CONFLICT_NOTICE
