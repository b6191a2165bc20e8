"""Fixtures shared by the multi-tab state tests (import them into a test module; they are autouse there).

``database``: a fresh SQLite thread database per test and a local-only run registry; ``page``: the
event context that receives a tab's streamed text (:mod:`tests.unit.page`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from interrupt_chat.store.threads_db import ThreadDB
from interrupt_chat.tab import persistence
from interrupt_chat.workers import runs
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
