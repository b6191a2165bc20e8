"""A thread database that is down is logged once per outage, tried again after a growing pause, and
reported at start-up (issue 22: errors for people and for logs)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from interrupt_chat.store.outage import Outage
from interrupt_chat.store.threads_db import ThreadDBError
from interrupt_chat.tab import persistence
from tests.unit.agents import free_port


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_outage_is_logged_once_and_tried_again_after_a_growing_pause(caplog):
    clock = Clock()
    outage = Outage(first=2.0, longest=8.0, clock=clock)
    outage.check()  # up: nothing to skip
    with caplog.at_level(logging.DEBUG, logger="interrupt_chat.tab.persistence"):
        outage.failed(ThreadDBError("thread database: could not connect"))
        with pytest.raises(ThreadDBError, match="next try in 2 s"):
            outage.check()
        clock.now += 2.0
        outage.check()  # due: the next call may try
        outage.failed(ThreadDBError("thread database: could not connect"))
        with pytest.raises(ThreadDBError, match="next try in 4 s"):
            outage.check()
        for _ in range(5):
            clock.now += 60
            outage.failed(ThreadDBError("thread database: could not connect"))
        with pytest.raises(ThreadDBError, match="next try in 8 s"):  # the longest pause
            outage.check()
        clock.now += 8
        outage.recovered()
        outage.recovered()
        outage.check()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert warnings[0].startswith("thread database: could not connect; the chat keeps working in memory")
    assert warnings[1] == "thread database: available again after 310 s (7 failed tries)"
    assert not any("thread database: thread database" in r.getMessage() for r in caplog.records)


async def test_an_unreachable_database_is_tried_once_per_pause_and_logged_once(monkeypatch, caplog):
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"postgresql+psycopg://app@127.0.0.1:{free_port()}/nowhere")
    db = persistence.database()
    assert db is not None
    tries = 0
    real = db.threads

    def counted(*args, **kwargs):
        nonlocal tries
        tries += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(db, "threads", counted)
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.tab.persistence"):
        started = time.monotonic()
        for _ in range(20):
            with pytest.raises(ThreadDBError):
                await persistence.db_call(db.threads, "alice")
        elapsed = time.monotonic() - started
    assert tries == 1 and elapsed < 5  # skipped calls fail at once, without a connect timeout each
    lines = [r.getMessage() for r in caplog.records if "thread database" in r.getMessage()]
    assert len(lines) == 1 and "the next try is in 2 s" in lines[0]


def test_a_url_that_is_no_database_url_is_said_once_and_threads_stay_in_memory(monkeypatch, caplog):
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", "no-such-scheme://x")
    with caplog.at_level(logging.ERROR, logger="interrupt_chat.tab.persistence"):
        assert persistence.database() is None
        assert persistence.database() is None
    [line] = [r.getMessage() for r in caplog.records]
    assert "unusable URL" in line and "INTERRUPT_CHAT_DB_URL" in line


async def test_a_wrong_database_is_reported_at_start_up(monkeypatch, caplog):
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"postgresql+psycopg://app@127.0.0.1:{free_port()}/nowhere")
    monkeypatch.setattr(persistence, "_checked", False)
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.tab.persistence"):
        persistence.check_soon()
        persistence.check_soon()  # once per process
        for _ in range(200):
            if caplog.records:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "could not" in lines[0] and "127.0.0.1" in lines[0]
