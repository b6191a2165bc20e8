"""Fixtures shared by the multi-tab state tests (import them into a test module; they are autouse there).

``database``: a fresh SQLite thread database per test and a local-only run registry; ``page``: the
event context that receives a tab's streamed text (:mod:`tests.unit.page`); ``agent``: the demo agent
without delays, served on loopback for the module (its URL and its store); ``heads``: the threads
whose head was read. :func:`other_worker` is another worker's view of the same database.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.store.threads_db import ThreadDB
from interrupt_chat.tab import persistence
from interrupt_chat.workers import runs
from tests.unit.agents import serve_in_thread
from tests.unit.page import Page


@pytest.fixture(autouse=True, name="database")
def database_fixture(monkeypatch, tmp_path) -> Iterator[ThreadDB]:
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"sqlite:///{tmp_path / 'threads.db'}")
    monkeypatch.setattr(runs, "_registry", runs.Registry(redis_url=""))
    db = persistence.database()
    assert db is not None
    yield db
    db.close()


@pytest.fixture(autouse=True, name="page")
def page_fixture() -> Iterator[Page]:
    tab = Page()
    with tab.attached():
        yield tab


@pytest.fixture(scope="module", name="agent")
def demo_agent_fixture() -> Iterator[tuple[str, DemoStore]]:
    app = create_app(delay=0.0)
    with serve_in_thread(app) as base:
        yield f"{base}/", app.state.store


@pytest.fixture(name="heads")
def heads_fixture(monkeypatch) -> list[str]:
    """The threads whose head was read (``ThreadDB.head``: the check a trusted copy skips)."""
    seen: list[str] = []
    real = ThreadDB.head
    monkeypatch.setattr(ThreadDB, "head", lambda db, owner, thread_id: seen.append(thread_id)
                        or real(db, owner, thread_id))
    return seen


@contextlib.contextmanager
def other_worker(database: ThreadDB) -> Iterator[ThreadDB]:
    """Another worker's view of the same database: a ThreadDB of its own, that remembers nothing of this one's."""
    other = ThreadDB(database.url)
    try:
        yield other
    finally:
        other.close()
