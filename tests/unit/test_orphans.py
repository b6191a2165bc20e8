"""A chat that shows a run nobody drives any more (its worker died) ends it as failed (``interrupt_chat.tab.orphans``).

Without Redis the registry is local: a run this process does not hold is dead. The state is a copy
as another worker left it: a session pickled mid-run (no live run, no claim) and ``status == "running"``.
"""

from __future__ import annotations

import pickle

import pytest
import reflex as rx

from interrupt_chat.agui import AgentSession
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.store.threads_db import ThreadDB
from interrupt_chat.tab import orphans, persistence
from interrupt_chat.tab.live import live_of
from interrupt_chat.workers import runs

AGENT = "http://127.0.0.1:9/"  # never reached


@pytest.fixture(scope="module")
def chat_cls() -> type[ChatState]:
    return new_chat_state("unit-test-orphans", agent_url=AGENT, configs=[])


@pytest.fixture(autouse=True)
def _no_grace(monkeypatch):
    monkeypatch.setattr(orphans, "GRACE_SECONDS", 0.0)
    monkeypatch.setattr(runs, "_registry", runs.Registry(redis_url=""))


def left_running(chat_cls: type[ChatState]) -> ChatState:
    """A chat whose run another worker was driving: the shared state's copy of it."""
    chat: ChatState = rx.State().get_substate(chat_cls.get_full_name().split("."))
    session = chat._session()
    session.send("hello")  # claimed: about to run (a generator nobody iterates)
    chat._sessions = {session.thread_id: pickle.loads(pickle.dumps(session))}  # the copy drops the claim
    chat.status = "running"
    return chat


async def test_a_run_nobody_drives_ends_as_failed_and_keeps_the_thread(chat_cls):
    chat = left_running(chat_cls)
    await orphans.watch(chat, chat_cls)
    assert chat.status == "error" and chat.error == orphans.ORPHANED_MESSAGE
    assert chat.locked is False and not chat._session().running
    assert [row.role for row in live_of(chat).live] == ["user"] and live_of(chat).live[0].content == "hello"


async def test_a_run_this_process_drives_is_left_to_its_driver(chat_cls):
    chat = left_running(chat_cls)
    key = await orphans.key_of(chat, chat_cls)
    session = chat._session()
    await runs.add(key, session)
    try:
        await orphans.watch(chat, chat_cls)
    finally:
        await runs.remove(key, session)
    assert chat.status == "running" and chat.error == ""


async def test_a_run_that_ended_meanwhile_is_not_touched(chat_cls):
    chat = left_running(chat_cls)
    chat.status = "idle"
    await orphans.watch(chat, chat_cls)
    assert chat.status == "idle" and chat.error == ""


# -- with the thread database: one way to end a run nobody drives (persistence.end_orphaned) --------------------

@pytest.fixture
def database(monkeypatch, tmp_path):
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"sqlite:///{tmp_path / 'threads.db'}")
    monkeypatch.setattr(persistence, "CLAIM_GRACE_SECONDS", 0.0)  # the claim is old enough to be read as orphaned
    db = persistence.database()
    assert db is not None
    yield db
    db.close()


def claimed_in(db: ThreadDB, chat: ChatState) -> AgentSession:
    """The run's claim, as its worker wrote it before it died: the user's message, in flight."""
    chat._owner_key = f"owner-orphans|{chat.get_full_name()}"
    session = chat._session()
    db.save(chat._owner_key, session, revision=0, in_flight=True)
    chat._sessions[session.thread_id].revision = session.revision  # the shared state's copy, as the claim left it
    return session


async def test_the_watcher_writes_the_end_once_and_releases_the_claim(chat_cls, database):
    chat = left_running(chat_cls)
    session = claimed_in(database, chat)
    await orphans.watch(chat, chat_cls)
    assert chat.status == "error" and chat.error == orphans.ORPHANED_MESSAGE
    stored = database.read(chat._owner_key, session.thread_id)
    assert stored is not None and not stored.in_flight and stored.revision == 2
    assert stored.session.error == orphans.ORPHANED_MESSAGE
    assert [m.content for m in stored.session.transcript.messages] == ["hello"]


async def test_a_stored_run_nobody_drives_is_ended_by_the_next_read(chat_cls, database):
    chat = left_running(chat_cls)
    session = claimed_in(database, chat)
    fresh: ChatState = rx.State().get_substate(chat_cls.get_full_name().split("."))  # a restarted backend
    fresh._owner_key = chat._owner_key
    loaded = await persistence.load_thread(fresh, session.thread_id)
    assert loaded is not None and loaded.error == orphans.ORPHANED_MESSAGE and not loaded.running
    stored = database.read(chat._owner_key, session.thread_id)
    assert stored is not None and not stored.in_flight and stored.revision == 2


async def test_a_watcher_that_another_writer_beat_shows_what_it_wrote(chat_cls, database, monkeypatch):
    chat = left_running(chat_cls)
    session = claimed_in(database, chat)
    refresh, calls = persistence.refresh, []

    async def then_another_tab_ends_it(chat: ChatState, thread_id: str) -> persistence.Fresh:
        fresh = await refresh(chat, thread_id)
        calls.append(thread_id)
        if len(calls) == 1:  # between this tab's refresh and its write, another tab ended the run
            theirs = database.read(chat._owner_key, thread_id)
            assert theirs is not None
            theirs.session.abandon("ended in another tab")
            database.save(chat._owner_key, theirs.session, revision=theirs.revision)
        return fresh

    monkeypatch.setattr(persistence, "refresh", then_another_tab_ends_it)
    await orphans.watch(chat, chat_cls)
    assert len(calls) == 2 and chat.status == "error" and chat.error == "ended in another tab"
    stored = database.read(chat._owner_key, session.thread_id)
    assert stored is not None and stored.revision == 2 and stored.session.error == "ended in another tab"
