"""Issue 38 §4: ``ThreadDB.save`` is always conditional; the last writer wins only through ``overwrite``."""

from __future__ import annotations

import pytest

from interrupt_chat.agui import AgentSession
from interrupt_chat.store.threads_db import ThreadConflict, ThreadDB, ThreadDeleted


def _session(thread_id: str = "t1") -> AgentSession:
    return AgentSession("http://127.0.0.1:9/", thread_id=thread_id)


def test_save_needs_the_revision_its_copy_was_read_at(tmp_path):
    with ThreadDB(f"sqlite:///{tmp_path / 'threads.db'}") as db:
        assert db.save("alice", _session(), revision=0).revision == 1
        mine, theirs = db.load("alice", "t1"), db.load("alice", "t1")
        assert mine is not None and theirs is not None
        db.save("alice", mine, revision=mine.revision)
        for stale in ({"revision": None}, {}):  # None once meant "last writer wins"
            with pytest.raises(TypeError):
                db.save("alice", theirs, **stale)  # type: ignore[arg-type]
        with pytest.raises(ThreadConflict):
            db.save("alice", theirs, revision=theirs.revision)
        assert db.head("alice", "t1").revision == 2  # neither stale write landed


def test_overwrite_says_that_the_last_writer_wins_but_never_revives_a_deleted_thread(tmp_path):
    with ThreadDB(f"sqlite:///{tmp_path / 'threads.db'}") as db:
        db.save("alice", _session(), revision=0)
        stale = db.load("alice", "t1")
        assert stale is not None
        db.save("alice", _session(), revision=1)
        assert db.overwrite("alice", stale).revision == 3
        db.delete("alice", "t1")
        with pytest.raises(ThreadDeleted):
            db.overwrite("alice", stale)
