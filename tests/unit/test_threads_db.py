"""The thread database (interrupt_chat/store/threads_db.py), on SQLite and on a real PostgreSQL server.

S25: threads and their pending interrupts survive a restart; S23: no masked answer is written.
Every test that takes ``db`` / ``db_url`` runs on both backends (a fresh SQLite file; a fresh
database on the session's PostgreSQL server, see ``postgres_url`` in conftest.py).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import event, select, text

from interrupt_chat.agui import AgentSession, parse_event
from interrupt_chat.store.schema import decisions_table
from interrupt_chat.store.threads_db import (
    DB_URL_ENV,
    MASKED,
    SCHEMA_VERSION,
    ThreadDB,
    ThreadDBError,
    default_db_url,
    messages_table,
    schema_version_table,
    threads_table,
)
from tests.unit.agents import free_port

SECRET = "sk-threads-db-SECRET-77"
CREDENTIAL_SCHEMA = {"type": "object", "required": ["api_key"],
                     "properties": {"api_key": {"type": "string", "format": "password"}, "note": {"type": "string"}}}


# -- backends --------------------------------------------------------------------------------------


@pytest.fixture
def db(db_url):
    database = ThreadDB(db_url)
    yield database
    database.close()


class Writes:
    """Message rows written (inserted + updated + deleted) and threads rows written, per statement."""

    def __init__(self, database: ThreadDB) -> None:
        self.rows: Counter[str] = Counter()
        event.listen(database.engine, "after_execute", self._after)

    def _after(self, conn, clause, multiparams, params, options, result) -> None:
        table = getattr(clause, "table", None)
        kind = type(clause).__name__.lower()
        if table is None or kind not in ("insert", "update", "delete"):
            return
        count = result.rowcount if kind == "delete" else max(1, len(multiparams))
        self.rows[f"{table.name}.{kind}"] += count

    def take(self) -> Counter[str]:
        rows, self.rows = self.rows, Counter()
        return rows

    def messages(self, rows: Counter[str]) -> int:
        return sum(n for key, n in rows.items() if key.startswith("interrupt_chat_messages."))


# -- sessions without a network --------------------------------------------------------------------


def new_session(thread_id: str = "t1") -> AgentSession:
    return AgentSession("http://127.0.0.1:9/", thread_id=thread_id)


def run(session: AgentSession, user_text: str | None, events: list[dict[str, Any]], *, user_id: str = "") -> None:
    """What ``AgentSession.send`` + ``stream`` do to transcript and tracker, from wire events."""
    if user_text is not None:
        session.transcript.mark_tail()
        session.transcript.add_user_message(user_id or f"u-{len(session.transcript.messages)}", user_text)
    for wire in events:
        parsed = parse_event(wire)
        session.transcript.apply(parsed)
        session.tracker.observe(parsed)
    session.tracker.finalize()
    session.last_run_id = events[0]["runId"]
    pending = session.tracker.pending
    session.transcript.set_awaiting({i.tool_call_id for i in pending.interrupts if i.tool_call_id} if pending else ())


def answer_run(i: int, thread_id: str = "t1", *, words: str = "the answer") -> list[dict[str, Any]]:
    """One run: an assistant answer with a tool call on it, and that call's result (2 messages)."""
    run_id, answer, call = f"run-{i}", f"a-{i}", f"call-{i}"
    return [{"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
            {"type": "TEXT_MESSAGE_START", "messageId": answer, "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": answer, "delta": f"{words} {i}"},
            {"type": "TEXT_MESSAGE_END", "messageId": answer},
            {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": "lookup", "parentMessageId": answer},
            {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": json.dumps({"n": i})},
            {"type": "TOOL_CALL_END", "toolCallId": call},
            {"type": "TOOL_CALL_RESULT", "messageId": f"res-{i}", "toolCallId": call, "content": f"result {i}"},
            {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}]


def interrupt_run(run_id: str, interrupts: list[dict[str, Any]], thread_id: str = "t1",
                  state: Any = None) -> list[dict[str, Any]]:
    message, call = f"{run_id}-m", f"{run_id}-call"
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
                                    {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
                                    {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": "I need you."},
                                    {"type": "TEXT_MESSAGE_END", "messageId": message},
                                    {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": "delete_files",
                                     "parentMessageId": message},
                                    {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": "{}"},
                                    {"type": "TOOL_CALL_END", "toolCallId": call}]
    if state is not None:
        events.append({"type": "STATE_SNAPSHOT", "snapshot": state})
    events.append({"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id,
                   "outcome": {"type": "interrupt", "interrupts": interrupts}})
    return events


def legacy_run(run_id: str, thread_id: str) -> list[dict[str, Any]]:
    value = json.dumps({"question": "Ship it?", "reason": "confirmation"})
    return [{"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
            {"type": "CUSTOM", "name": "on_interrupt", "value": value},
            {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}]


def interrupted(thread_id: str = "t1", text_: str = "please delete my old files") -> AgentSession:
    session = new_session(thread_id)
    run(session, text_, interrupt_run(f"{thread_id}-r1", [
        {"id": "approve", "reason": "tool_call", "toolCallId": f"{thread_id}-r1-call", "message": "Delete them?"},
        {"id": "key", "reason": "input_required", "message": "API key?", "responseSchema": CREDENTIAL_SCHEMA,
         "expiresAt": "2999-01-01T00:00:00Z"},
        {"id": "ok", "reason": "confirmation"}], thread_id, state={"files": ["a", "b"], "n": 2}))
    return session


def long_thread(messages: int, thread_id: str = "t1") -> AgentSession:
    session = new_session(thread_id)
    for i in range(messages // 3):
        run(session, f"question {i}", answer_run(i, thread_id), user_id=f"u-{i}")
    return session


def wire(session: AgentSession) -> dict[str, Any]:
    return session.build_input().model_dump(mode="json", by_alias=True, exclude={"run_id"})


def assert_same(restored: AgentSession | None, original: AgentSession) -> None:
    assert restored is not None
    assert wire(restored) == wire(original)
    assert restored.tracker.pending == original.tracker.pending
    assert restored.tracker.sealed == original.tracker.sealed
    assert (restored.last_run_id, restored.error) == (original.last_run_id, original.error)
    assert call_marks(restored) == call_marks(original)


def call_marks(session: AgentSession) -> dict[str, tuple]:
    """The tool calls on the transcript's messages: status and flags."""
    calls = session.transcript.tool_calls
    return {i: (calls[i].status, calls[i].rejected) for m in session.transcript.messages for i in m.tool_call_ids}


def dump_all(database: ThreadDB) -> str:
    """Every row of every table, as text (to look for a secret)."""
    with database.engine.connect() as conn:
        rows = [list(r) for table in (threads_table, messages_table, decisions_table)
                for r in conn.execute(select(table))]
    return json.dumps(rows, default=str)


# -- saving and loading ----------------------------------------------------------------------------


def test_s25_round_trip_with_pending_answers_and_state(db):
    session = interrupted()
    session.tracker.resolve({"approved": True}, "approve")
    db.overwrite("alice", session)
    restored = ThreadDB(db.url if "sqlite" in db.url else str(db.engine.url)).load("alice", "t1")  # a new process
    assert_same(restored, session)
    assert restored.tracker.answers == session.tracker.answers
    assert restored.transcript.tool_calls["t1-r1-call"].status == "awaiting_approval"
    assert restored.transcript.state == {"files": ["a", "b"], "n": 2}


def test_s23_a_masked_answer_never_reaches_the_database(db):
    session = interrupted()
    session.tracker.resolve({"approved": True}, "approve")
    assert session.tracker.resolve({"api_key": SECRET, "note": "x"}, "key").kind == "waiting"
    db.overwrite("alice", session)
    db.record_decision("alice", "t1", "t1-r1", "key", "input_required", "resolved",
                       {"api_key": SECRET, "note": "x"}, CREDENTIAL_SCHEMA)
    assert SECRET not in dump_all(db)
    restored = db.load("alice", "t1")
    assert set(restored.tracker.answers) == {"approve"}  # the masked one is asked again


def test_owners_are_isolated(db):
    mine, theirs = interrupted("t1", "mine"), long_thread(6, "t1")
    db.overwrite("alice", mine)
    db.overwrite("bob", theirs)
    assert_same(db.load("alice", "t1"), mine)
    assert_same(db.load("bob", "t1"), theirs)
    db.overwrite("alice", interrupted("t2", "second"))
    assert db.load("bob", "t2") is None
    assert [t.thread_id for t in db.threads("bob")] == ["t1"]
    assert [t.thread_id for t in db.threads("alice")] == ["t2", "t1"]
    assert not db.rename("bob", "t2", "hijacked") and not db.delete("bob", "t2")
    assert [p.thread_id for p in db.pending("bob")] == []
    assert db.delete("bob", "t1")
    assert_same(db.load("alice", "t1"), mine)  # same thread id, other owner: untouched
    assert db.load("bob", "t1") is None


def test_save_is_incremental_on_a_600_message_thread(db):
    writes = Writes(db)
    session = long_thread(600)
    assert len(session.transcript.messages) == 600
    first = db.overwrite("alice", session)
    assert first.inserted == 600 and writes.messages(writes.take()) == 600

    session.transcript.add_user_message("u-new", "one more question")  # one new message
    result = db.overwrite("alice", session)
    rows = writes.take()
    assert (result.inserted, result.updated, result.deleted) == (1, 0, 0)
    assert writes.messages(rows) == 1 and rows["interrupt_chat_threads.update"] == 1

    run(session, None, answer_run(999))  # a run: its answer and its tool result
    result = db.overwrite("alice", session)
    assert writes.messages(writes.take()) == 2 and result.inserted == 2

    assert db.overwrite("alice", session).written == 0  # nothing changed: no message row
    assert writes.messages(writes.take()) == 0
    assert_same(db.load("alice", "t1"), session)


def test_incremental_saves_stay_correct_across_two_writers(db_url):
    first, second = ThreadDB(db_url), ThreadDB(db_url)
    session = long_thread(30)
    first.overwrite("alice", session)
    session.transcript.add_user_message("u-a", "from the second process")
    assert second.overwrite("alice", session).written == 1  # it reads the digests back from the hash column
    session.transcript.add_user_message("u-b", "and the first again")
    assert first.overwrite("alice", session).written == 1  # its memory is stale (revision moved): re-read
    assert_same(first.load("alice", "t1"), session)
    assert_same(second.load("alice", "t1"), session)
    first.close()
    second.close()


def test_changed_and_removed_messages_are_rewritten(db):
    session = long_thread(9)
    db.overwrite("alice", session)
    session.transcript.tool_calls["call-0"].rejected = True  # a flag: the thread row only
    session.transcript.set_tool_call_args("call-2", {"n": 42})  # an edited call: its assistant message
    result = db.overwrite("alice", session)
    assert (result.inserted, result.updated, result.deleted) == (0, 1, 0)
    snapshot = [m.model_dump(by_alias=True, exclude_none=True) for m in session.transcript.to_messages()[:4]]
    run(session, None, [{"type": "RUN_STARTED", "threadId": "t1", "runId": "r-snap"},
                        {"type": "MESSAGES_SNAPSHOT", "messages": snapshot},
                        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r-snap"}])
    assert len(session.transcript.messages) == 4
    assert db.overwrite("alice", session).deleted == 5
    restored = db.load("alice", "t1")
    assert_same(restored, session)
    assert restored.transcript.tool_calls["call-0"].rejected


def test_a_resumed_tool_result_lands_after_its_call(db):
    session = interrupted()
    db.overwrite("alice", session)
    session.tracker.resolve({"approved": True}, "approve")
    session.tracker.cancel("key")
    session.tracker.resolve({"approved": True}, "ok")
    run(session, None, [{"type": "RUN_STARTED", "threadId": "t1", "runId": "t1-r2"},
                        {"type": "TOOL_CALL_RESULT", "messageId": "res", "toolCallId": "t1-r1-call", "content": "gone"},
                        {"type": "TEXT_MESSAGE_START", "messageId": "done", "role": "assistant"},
                        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "done", "delta": "Done."},
                        {"type": "TEXT_MESSAGE_END", "messageId": "done"},
                        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "t1-r2"}])
    result = db.overwrite("alice", session)
    assert (result.inserted, result.updated) == (2, 0)
    restored = db.load("alice", "t1")
    assert_same(restored, session)
    assert restored.tracker.pending is None and db.pending("alice") == []
    assert not db.threads("alice")[0].pending


# -- listing, renaming, searching, deleting --------------------------------------------------------


def test_titles_rename_and_delete(db):
    long_text = "Please find every invoice from last year and total them by customer, then email me"
    db.overwrite("alice", interrupted("t1", long_text))
    (summary,) = db.threads("alice")
    assert summary.title == long_text[:59].rstrip() + "…" and len(summary.title) <= 60
    assert summary.pending and summary.pending_count == 3 and summary.created_at.tzinfo is not None
    assert db.rename("alice", "t1", "Invoices")
    db.overwrite("alice", interrupted("t1", long_text))  # a later save keeps the person's title
    assert db.threads("alice")[0].title == "Invoices"
    db.overwrite("alice", new_session("t1"), title="Renamed on save")
    assert db.threads("alice")[0].title == "Renamed on save"
    assert db.rename("alice", "t1", "  ")  # blank: back to the first user message
    assert db.threads("alice")[0].title == ""  # (that last save emptied the thread)
    assert db.delete("alice", "t1") and db.threads("alice") == [] and db.load("alice", "t1") is None
    assert not db.delete("alice", "t1")


def test_newest_first(db):
    for thread_id in ("a", "b", "c"):
        db.overwrite("alice", long_thread(3, thread_id))
    db.overwrite("alice", db.load("alice", "a"))
    summaries = db.threads("alice")
    assert [t.thread_id for t in summaries] == ["a", "c", "b"]
    assert summaries[0].updated_at > summaries[1].updated_at


def test_search_is_case_insensitive_and_like_escaped(db):
    texts = {"pct": "I am 100% sure", "digits": "I am 1000 sure", "under": "call snake_case here",
             "plain": "call snakeXcase here", "caps": "HELLO World"}
    for thread_id, words in texts.items():
        session = new_session(thread_id)
        run(session, "hi", answer_run(1, thread_id, words=words))
        db.overwrite("alice", session)
    db.overwrite("alice", new_session("titled"), title="Quarterly 50% report")

    def found(query: str) -> set[str]:
        return {t.thread_id for t in db.threads("alice", search=query)}

    assert found("0%") == {"pct", "titled"}
    assert found("e_c") == {"under"}
    assert found("hello world") == {"caps"}
    assert found("QUARTERLY") == {"titled"}
    assert found("nothing like this") == set()
    assert len(db.threads("alice", search="  ")) == 6
    assert db.threads("bob", search="0%") == []


# -- pending interrupts across threads -------------------------------------------------------------


def test_pending_across_threads(db):
    db.overwrite("alice", interrupted("t1"))
    legacy = new_session("t2")
    run(legacy, "ship?", legacy_run("t2-r1", "t2"))
    db.overwrite("alice", legacy)
    db.overwrite("alice", long_thread(3, "t3"))  # nothing pending
    db.overwrite("bob", interrupted("t9"))
    items = db.pending("alice")
    assert [(p.thread_id, p.interrupt_id) for p in items] == [("t2", ""), ("t1", "approve"), ("t1", "key"),
                                                              ("t1", "ok")]
    legacy_item, approve, key, _ = items
    assert legacy_item.message == "Ship it?" and legacy_item.reason == "confirmation"
    assert approve.message == "Delete them?" and approve.reason == "tool_call" and approve.expires_at is None
    assert key.expires_at is not None and key.expires_at.year == 2999
    raised = approve.raised_at
    assert raised is not None and raised.tzinfo is not None

    session = db.load("alice", "t1")
    session.tracker.resolve({"approved": True}, "approve")
    db.overwrite("alice", session)  # the same set, one answer more: still raised when it was
    assert next(p for p in db.pending("alice") if p.interrupt_id == "approve").raised_at == raised


# -- the audit trail -------------------------------------------------------------------------------


def test_audit_trail_is_append_only_masked_and_exported(db):
    schema = {"type": "object", "properties": {
        "api_key": {"type": "string", "writeOnly": True},
        "nested": {"type": "object", "properties": {"pin": {"type": "string", "format": "password"}}},
        "tags": {"type": "array", "items": {"type": "object", "properties": {
            "token": {"type": "string", "format": "password"}}}}}}
    payload = {"api_key": SECRET, "nested": {"pin": SECRET, "ok": 1}, "tags": [{"token": SECRET, "name": "a"}],
               "visible": True}
    first = db.record_decision("alice", "t1", "r1", "key", "input_required", "resolved", payload, schema)
    assert first.payload == {"api_key": MASKED, "nested": {"pin": MASKED, "ok": 1},
                             "tags": [{"token": MASKED, "name": "a"}], "visible": True}
    db.record_decision("alice", "t1", "r1", "key", "input_required", "cancelled")
    db.record_decision("alice", "t2", "r7", None, None, "dismissed", {"approved": True})
    db.record_decision("bob", "t1", "r1", "x", "tool_call", "rejected", {"approved": False})
    with pytest.raises(ValueError, match="unknown decision action"):
        db.record_decision("alice", "t1", "r1", "key", None, "approved", None)

    trail = db.decisions("alice")
    assert [(d.thread_id, d.interrupt_id, d.action) for d in trail] == [
        ("t1", "key", "resolved"), ("t1", "key", "cancelled"), ("t2", "", "dismissed")]  # both answers kept
    assert trail[0].id < trail[1].id < trail[2].id and trail[0].at <= trail[1].at
    assert [d.action for d in db.decisions("alice", "t2")] == ["dismissed"]
    db.overwrite("alice", interrupted("t1"))
    db.delete("alice", "t1")
    assert len(db.decisions("alice")) == 3  # deleting a thread keeps its audit trail

    lines = db.export_jsonl("alice").splitlines()
    assert len(lines) == 3
    exported = [json.loads(line) for line in lines]
    assert exported[0]["payload"]["api_key"] == MASKED and exported[0]["threadId"] == "t1"
    assert exported[2]["interruptId"] == "" and exported[2]["runId"] == "r7"
    assert SECRET not in "\n".join(lines) and SECRET not in dump_all(db)
    assert db.export_jsonl("nobody") == ""


# -- schema, versions, damage, failures ------------------------------------------------------------


def test_schema_creation_is_idempotent(db_url):
    first = ThreadDB(db_url)
    first.overwrite("alice", interrupted())
    second = ThreadDB(db_url)
    second.ensure_schema()
    second.ensure_schema()
    with second.engine.connect() as conn:
        assert conn.execute(select(schema_version_table)).all() == [(1, SCHEMA_VERSION)]
    assert_same(second.load("alice", "t1"), interrupted())
    first.close()
    second.close()


def test_a_schema_1_database_gains_who_decided_and_keeps_its_audit_trail(db_url):
    old = ThreadDB(db_url)
    old.record_decision("alice", "t1", "r1", "i1", "tool_call", "resolved", {"approved": True})
    with old.engine.begin() as conn:  # what 0.1.0 created: no decided_by (nor the index of schema 6 on it), version 1
        conn.execute(text("DROP INDEX interrupt_chat_decisions_tools"))
        conn.execute(text("ALTER TABLE interrupt_chat_decisions DROP COLUMN decided_by"))
        conn.execute(schema_version_table.update().values(version=1))
    old.close()
    upgraded = ThreadDB(db_url)
    [before] = upgraded.decisions("alice")
    assert (before.action, before.by) == ("resolved", "person")  # decided before anyone else could
    upgraded.record_decision("alice", "t1", "r2", "i2", "tool_call", "rejected", {"approved": False}, by="link")
    assert [d.by for d in upgraded.decisions("alice")] == ["person", "link"]
    with upgraded.engine.connect() as conn:
        assert conn.execute(select(schema_version_table)).all() == [(1, SCHEMA_VERSION)]
    with pytest.raises(ValueError, match="decider"):
        upgraded.record_decision("alice", "t1", "r3", "i3", None, "resolved", by="robot")
    upgraded.close()


def test_a_newer_schema_is_refused(db_url):
    ThreadDB(db_url).ensure_schema()
    with ThreadDB(db_url).engine.begin() as conn:
        conn.execute(schema_version_table.update().values(version=SCHEMA_VERSION + 1))
    with pytest.raises(ThreadDBError, match="newer"):
        ThreadDB(db_url).threads("alice")


def test_an_older_version_row_is_migrated(db):
    session = interrupted()
    session.tracker.cancel("ok")
    db.overwrite("alice", session)
    # what the pre-versioned draft wrote: snake_case pending keys, answers by interrupt id
    with db.engine.begin() as conn:
        conn.execute(threads_table.update().values(
            version=0, answers={"ok": {"status": "cancelled"}},
            pending={"kind": "standard", "run_id": "t1-r1", "interrupts": session.tracker.export()["pending"]
                     ["interrupts"]}))
    restored = db.load("alice", "t1")
    assert_same(restored, session)
    assert restored.tracker.answers == session.tracker.answers
    db.overwrite("alice", restored)
    with db.engine.connect() as conn:
        row = conn.execute(select(threads_table.c.version, threads_table.c.answers)).one()
    assert row.version == 1 and row.answers == [{"interruptId": "ok", "status": "cancelled"}]


def test_a_corrupt_row_raises_and_other_threads_still_load(db, caplog):
    good, bad = interrupted("good"), interrupted("bad")
    db.overwrite("alice", good)
    db.overwrite("alice", bad)
    with db.engine.begin() as conn:
        conn.execute(messages_table.update().where((messages_table.c.thread_id == "bad") & (messages_table.c.seq == 0))
                     .values(body={"id": 7, "role": "alien"}))
        conn.execute(threads_table.update().where(threads_table.c.thread_id == "bad")
                     .values(pending={"kind": "standard", "interrupts": "not a list"}))
    with pytest.raises(ThreadDBError, match="bad") as caught:
        db.load("alice", "bad")
    assert caught.value.__cause__ is not None
    assert_same(db.load("alice", "good"), good)
    assert {t.thread_id for t in db.threads("alice")} == {"good", "bad"}
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.store.threads_db"):
        assert {p.thread_id for p in db.pending("alice")} == {"good"}  # the unreadable set is skipped, loudly
    assert "bad" in caplog.text
    assert db.overwrite("alice", bad).inserted == 2  # saving the live session rewrites the damaged thread whole
    assert_same(db.load("alice", "bad"), bad)
    assert db.overwrite("alice", bad).written == 0


def test_a_row_that_is_not_json_raises(tmp_path):
    path = tmp_path / "threads.db"
    database = ThreadDB(f"sqlite:///{path}")
    database.overwrite("alice", interrupted("bad"))
    database.overwrite("alice", interrupted("good"))
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE interrupt_chat_threads SET state = '{not json' WHERE thread_id = 'bad'")
    with pytest.raises(ThreadDBError, match="does not parse"):
        database.load("alice", "bad")
    assert database.load("alice", "good") is not None


def test_a_locked_sqlite_file_raises_and_recovers(tmp_path):
    path = tmp_path / "threads.db"
    database = ThreadDB(f"sqlite:///{path}", busy_timeout=0.2)
    database.overwrite("alice", interrupted())
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(ThreadDBError, match="locked"):
            database.overwrite("alice", long_thread(6))
        assert time.monotonic() - started < 3
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    database.overwrite("alice", long_thread(6))  # the lock is gone: it works again
    assert len(database.load("alice", "t1").transcript.messages) == 6


def test_an_unreachable_postgres_raises_quickly():
    database = ThreadDB(f"postgresql://app@127.0.0.1:{free_port()}/nothing", connect_timeout=2)
    started = time.monotonic()
    for call in (database.ensure_schema, lambda: database.threads("alice"),
                 lambda: database.overwrite("a", new_session())):
        with pytest.raises(ThreadDBError) as caught:
            call()
        assert caught.value.__cause__ is not None
    assert time.monotonic() - started < 5


def test_an_unusable_url_raises():
    with pytest.raises(ThreadDBError):
        ThreadDB("no-such-scheme://x")


def test_default_url(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    url = default_db_url()
    assert url == f"sqlite:///{tmp_path / '.interrupt_chat' / 'threads.db'}"
    assert default_db_url("postgresql://app@db/chat") == "postgresql://app@db/chat"
    monkeypatch.setenv(DB_URL_ENV, "sqlite:////srv/x.db")
    assert default_db_url("postgresql://app@db/chat") == "sqlite:////srv/x.db"
    database = ThreadDB(url)  # the folder is created on demand
    database.overwrite("alice", interrupted())
    assert (tmp_path / ".interrupt_chat" / "threads.db").exists()
    database.close()


def test_the_default_database_is_outside_reflexs_dev_reloader(monkeypatch, tmp_path):
    """Reflex's own reload-path rule (the one ``reflex run`` uses in dev) never watches the default
    folder, so a thread write (its ``-wal`` / ``-shm`` files) does not restart the dev backend."""
    import reflex as rx
    from reflex.utils import exec as reflex_exec

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    monkeypatch.setattr(reflex_exec, "get_config", lambda: rx.Config(app_name="app"))  # an app in tmp_path
    (tmp_path / "rxconfig.py").write_text("import reflex as rx\nconfig = rx.Config(app_name='app')\n")
    (tmp_path / "app").mkdir()
    database = ThreadDB(default_db_url())
    database.overwrite("alice", interrupted())
    database.close()
    watched = {path.name for path in reflex_exec.get_reload_paths()}
    assert "app" in watched and ".interrupt_chat" not in watched


def test_a_database_in_the_older_default_folder_is_still_used(monkeypatch, tmp_path, caplog):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    legacy = tmp_path / "interrupt_chat_data" / "threads.db"
    ThreadDB(f"sqlite:///{legacy}").overwrite("alice", interrupted())
    assert default_db_url() == f"sqlite:///{legacy}"
    assert "move it to .interrupt_chat/" in caplog.text


def test_in_memory_sqlite_works():
    database = ThreadDB("sqlite://")
    database.overwrite("alice", interrupted())
    assert_same(database.load("alice", "t1"), interrupted())


def test_concurrent_saves_from_threads(db):
    sessions = [long_thread(9, f"t{i}") for i in range(6)]
    errors: list[BaseException] = []

    def save(session: AgentSession) -> None:
        try:
            for k in range(3):
                session.transcript.add_user_message(f"{session.thread_id}-extra-{k}", f"extra {k}")
                db.overwrite("alice", session)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=save, args=(s,)) for s in sessions]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert errors == []
    for session in sessions:
        assert_same(db.load("alice", session.thread_id), session)


def test_nul_characters_and_odd_text_are_stored(db):
    session = new_session()
    run(session, "nul \x00 here and é ✓", answer_run(1, words="tab\tand \x00 nul"))
    db.overwrite("alice", session)
    assert_same(db.load("alice", "t1"), session)
    assert [t.thread_id for t in db.threads("alice", search="here and é")] == ["t1"]


def test_sql_text_stays_data(db):
    session = new_session("t1'; DROP TABLE interrupt_chat_threads; --")
    run(session, "x'); DELETE FROM interrupt_chat_messages; --", answer_run(1, session.thread_id))
    db.overwrite("o'wner", session)
    assert_same(db.load("o'wner", session.thread_id), session)
    with db.engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM interrupt_chat_messages")).scalar() == 3


def test_a_rename_elsewhere_survives_the_next_save_here(db_url):
    here, there = ThreadDB(db_url), ThreadDB(db_url)
    session = interrupted()
    here.overwrite("alice", session)
    assert there.rename("alice", "t1", "Named elsewhere")
    session.transcript.add_user_message("u-more", "more")
    assert here.overwrite("alice", session).written == 1
    assert here.threads("alice")[0].title == "Named elsewhere"
    here.close()
    there.close()


def test_an_apps_own_tables_live_beside_ours_and_a_foreign_table_of_our_name_is_refused(db_url):
    with ThreadDB(db_url).engine.begin() as conn:  # a shared Reflex database: the app's own tables
        conn.execute(text("CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT)"))
        conn.execute(text("CREATE TABLE threads (id INTEGER PRIMARY KEY)"))
    ThreadDB(db_url).ensure_schema()  # our tables are prefixed: no clash
    with ThreadDB(db_url).engine.begin() as conn:
        conn.execute(text("DROP TABLE interrupt_chat_messages"))
        conn.execute(text("CREATE TABLE interrupt_chat_messages (id INTEGER PRIMARY KEY, body TEXT)"))
    with pytest.raises(ThreadDBError, match="not interrupt_chat's"):
        ThreadDB(db_url).ensure_schema()


def test_the_thread_database_does_not_import_reflex():
    import subprocess
    import sys

    code = ("import sys, interrupt_chat.store.threads_db, interrupt_chat.agui.records; "
            "assert 'reflex' not in sys.modules, 'reflex was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
