"""The thread store (S25: threads survive a backend restart; S23: no masked answer is written)."""

from __future__ import annotations

import sqlite3

import pytest

from interrupt_chat.agui import AgentSession
from interrupt_chat.thread_store import THREAD_STORE_ENV, ThreadStore, thread_store

SECRET = "sk-thread-store-SECRET-91"


def interrupted_session() -> AgentSession:
    session = AgentSession("http://127.0.0.1:9/", thread_id="t1")
    session.transcript.add_user_message("u1", "hello")
    tracker = session.tracker
    tracker.observe({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"})
    tracker.observe({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "outcome": {
        "type": "interrupt", "interrupts": [
        {"id": "key", "reason": "input_required",
         "responseSchema": {"type": "object", "properties": {"api_key": {"type": "string", "format": "password"}}}},
        {"id": "ok", "reason": "confirmation"}]}})
    tracker.finalize()
    return session


def test_s25_threads_round_trip(tmp_path):
    store = ThreadStore(tmp_path / "threads.db")
    session = interrupted_session()
    store.save("tab|chat", {"t1": session}, "t1")
    sessions, current = ThreadStore(tmp_path / "threads.db").load("tab|chat")  # another process, same file
    assert current == "t1" and sessions["t1"].tracker.pending.ids == ["key", "ok"]
    assert [m.content for m in sessions["t1"].transcript.messages] == ["hello"]
    assert store.load("someone-else") is None


def test_s23_a_masked_answer_never_reaches_the_file(tmp_path):
    path = tmp_path / "threads.db"
    store = ThreadStore(path)
    session = interrupted_session()
    assert session.tracker.resolve({"api_key": SECRET}, "key").kind == "waiting"
    store.save("tab|chat", {"t1": session}, "t1")
    store.close()
    for file in tmp_path.iterdir():
        assert SECRET.encode() not in file.read_bytes(), file.name
    restored, _ = ThreadStore(path).load("tab|chat")
    assert restored["t1"].tracker.answers == {}  # asked again after a restart


def test_unreadable_rows_are_dropped_not_raised(tmp_path):
    path = tmp_path / "threads.db"
    store = ThreadStore(path)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO threads VALUES ('tab|chat', 't1', x'00ff', 0)")
    assert store.load("tab|chat") is None


def test_old_rows_are_purged(tmp_path):
    path = tmp_path / "threads.db"
    ThreadStore(path).save("tab|chat", {"t1": interrupted_session()}, "t1")
    assert ThreadStore(path, keep_seconds=-1).load("tab|chat") is None


@pytest.mark.parametrize("setting", ["off", "OFF", ""])
def test_store_can_be_disabled(monkeypatch, setting):
    monkeypatch.setenv(THREAD_STORE_ENV, setting)
    assert thread_store() is None


def test_store_follows_the_setting(monkeypatch, tmp_path):
    monkeypatch.setenv(THREAD_STORE_ENV, str(tmp_path / "a.db"))
    assert thread_store().path == tmp_path / "a.db"
    monkeypatch.setenv(THREAD_STORE_ENV, str(tmp_path / "b.db"))
    assert thread_store().path == tmp_path / "b.db"
