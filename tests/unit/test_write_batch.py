"""Thread saves waiting side by side share one SQLite transaction (issue 45, docs/decisions/0030).

Every outcome is the one each save would have had alone: a save that fails in a batch rolls the
batch back, what the saves left in memory is forgotten, and each runs again on its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event, select

from interrupt_chat.agui.session import AgentSession
from interrupt_chat.store import pools
from interrupt_chat.store.pools import _Lane
from interrupt_chat.store.threads_db import ThreadConflict, ThreadDB, threads_table
from tests.unit.test_threads_db import answer_run, new_session, run


@pytest.fixture
def sqlite_db(tmp_path) -> Iterator[ThreadDB]:
    database = ThreadDB(f"sqlite:///{tmp_path / 'threads.db'}")
    database.ensure_schema()
    yield database
    database.close()


class Commits:
    """The write transactions the database begins (BEGIN IMMEDIATE) and commits."""

    def __init__(self, database: ThreadDB) -> None:
        self.begun = self.committed = 0
        event.listen(database.engine, "begin", self._begin)
        event.listen(database.engine, "commit", self._commit)

    def _begin(self, conn) -> None:
        self.begun += bool(conn.get_execution_options().get("ic_write"))

    def _commit(self, conn) -> None:
        self.committed += bool(conn.get_execution_options().get("ic_write"))


def one_turn(thread_id: str) -> AgentSession:
    session = new_session(thread_id)
    run(session, "hello", answer_run(1, thread_id))
    return session


def revisions(database: ThreadDB) -> dict[str, int]:
    with database.engine.connect() as conn:
        return dict(conn.execute(select(threads_table.c.thread_id, threads_table.c.revision)).all())


def blocked_lane() -> tuple[_Lane, threading.Event]:
    """A writer lane busy with a call that waits for the event: what is submitted meanwhile queues."""
    lane, gate, started = _Lane(1, "test-writer"), threading.Event(), threading.Event()
    lane.submit(lambda: (started.set(), gate.wait(5)), urgent=False)
    assert started.wait(5)
    return lane, gate


def save_call(database: ThreadDB, session: AgentSession, revision: int) -> Callable[[], Any]:
    return lambda: database.save("alice", session, revision=revision)


def test_saves_waiting_side_by_side_commit_once_and_are_answered_after_it(sqlite_db):
    commits, (lane, gate) = Commits(sqlite_db), blocked_lane()
    sessions = [one_turn(f"t{n}") for n in range(5)]
    futures = [lane.submit(save_call(sqlite_db, s, 0), urgent=False, group=sqlite_db.batch) for s in sessions]
    gate.set()
    results = [f.result(5) for f in futures]
    assert commits.begun == commits.committed == 1  # five saves, one transaction
    assert [r.revision for r in results] == [1] * 5 and all(s.revision == 1 for s in sessions)
    assert revisions(sqlite_db) == {f"t{n}": 1 for n in range(5)}
    lane.stop(5)


def test_a_conflict_in_a_batch_reaches_its_own_caller_and_the_others_are_saved_once(sqlite_db):
    stale, fresh = one_turn("shared"), one_turn("other")
    sqlite_db.save("alice", stale, revision=0)  # revision 1; the stale copy below still says 0
    stale_copy = one_turn("shared")
    lane, gate = blocked_lane()
    before = one_turn("before")
    futures = [lane.submit(save_call(sqlite_db, s, 0), urgent=False, group=sqlite_db.batch)
               for s in (before, stale_copy, fresh)]
    commits = Commits(sqlite_db)
    gate.set()
    assert futures[0].result(5).revision == 1 and futures[2].result(5).revision == 1
    with pytest.raises(ThreadConflict):
        futures[1].result(5)
    assert stale_copy.revision == 0  # as if it had failed alone
    assert before.revision == fresh.revision == 1  # saved once: the batch's copy was rolled back
    assert revisions(sqlite_db) == {"shared": 1, "before": 1, "other": 1}
    assert commits.committed == 2 and commits.begun == 4  # the batch (rolled back), then each alone
    sqlite_db.save("alice", before, revision=before.revision)  # what the ThreadDB remembers follows the database
    assert revisions(sqlite_db)["before"] == 2
    lane.stop(5)


def test_a_call_that_raises_in_a_batch_leaves_nothing_of_the_batch_behind(sqlite_db):
    session = one_turn("t1")
    sqlite_db.save("alice", session, revision=0)
    run(session, "again", answer_run(2, "t1"))
    lane, gate = blocked_lane()
    saved = lane.submit(save_call(sqlite_db, session, 1), urgent=False, group=sqlite_db.batch)
    broken = lane.submit(lambda: 1 / 0, urgent=False, group=sqlite_db.batch)
    gate.set()
    assert saved.result(5).revision == 2 and session.revision == 2  # once, not twice
    with pytest.raises(ZeroDivisionError):
        broken.result(5)
    assert revisions(sqlite_db) == {"t1": 2}
    restored = sqlite_db.load("alice", "t1")
    assert restored is not None and len(restored.transcript.messages) == len(session.transcript.messages)
    lane.stop(5)


def test_a_batch_takes_one_level_and_one_group_and_at_most_batch_calls(sqlite_db, monkeypatch):
    monkeypatch.setattr(pools, "BATCH", 3)
    lane, gate = blocked_lane()
    order: list[str] = []

    def call(name: str) -> Callable[[], str]:
        return lambda: order.append(name) or name

    other = ThreadDB(sqlite_db.url.replace("threads.db", "other.db"))
    futures = [lane.submit(call("a1"), urgent=False, group=sqlite_db.batch),
               lane.submit(call("a2"), urgent=False, group=sqlite_db.batch),
               lane.submit(call("b1"), urgent=False, group=other.batch),
               lane.submit(call("u1"), urgent=True, group=sqlite_db.batch),
               lane.submit(call("a3"), urgent=False, group=sqlite_db.batch),
               lane.submit(call("a4"), urgent=False, group=sqlite_db.batch),
               lane.submit(call("a5"), urgent=False, group=sqlite_db.batch)]
    commits = Commits(sqlite_db)
    gate.set()
    assert [f.result(5) for f in futures] == ["a1", "a2", "b1", "u1", "a3", "a4", "a5"]
    # the urgent call first, alone; then a1 a2 (b1 is another database's); b1; then a3 a4 a5 (three at most)
    assert order == ["u1", "a1", "a2", "b1", "a3", "a4", "a5"]
    assert commits.committed == 2  # u1 alone is run without a batch: a1+a2, a3+a4+a5
    lane.stop(5)
    other.close()


def test_an_urgent_call_queued_while_a_batch_runs_ends_the_batch(sqlite_db):
    lane, gate = blocked_lane()
    order: list[str] = []
    inside, go_on = threading.Event(), threading.Event()

    def first() -> str:
        inside.set()
        go_on.wait(5)
        order.append("a1")
        return "a1"

    def call(name: str) -> Callable[[], str]:
        return lambda: order.append(name) or name

    futures = [lane.submit(first, urgent=False, group=sqlite_db.batch),
               *[lane.submit(call(f"a{n}"), urgent=False, group=sqlite_db.batch) for n in range(2, 6)]]
    commits = Commits(sqlite_db)
    gate.set()
    assert inside.wait(5)  # the batch runs its first call (the second is taken with it)
    urgent = lane.submit(call("u1"), urgent=True, group=sqlite_db.batch)
    go_on.set()
    assert urgent.result(5) == "u1" and [f.result(5) for f in futures] == ["a1", "a2", "a3", "a4", "a5"]
    assert order == ["a1", "a2", "u1", "a3", "a4", "a5"]  # the person's call waits for two calls, not five
    assert commits.committed == 2  # a1+a2; u1 alone (no batch); a3+a4+a5
    lane.stop(5)


async def test_claims_made_together_through_the_pools_share_a_transaction(sqlite_db):
    sessions = [one_turn(f"c{n}") for n in range(4)]
    gate = threading.Event()
    blocker = asyncio.ensure_future(pools.run(gate.wait, 5, write=True))
    await asyncio.sleep(0.05)
    commits = Commits(sqlite_db)
    with pools.together(sqlite_db.batch):
        saves = [asyncio.ensure_future(pools.run(sqlite_db.save, "alice", s, revision=0, write=True))
                 for s in sessions]
        await asyncio.sleep(0.05)
    gate.set()
    await blocker
    assert [r.revision for r in await asyncio.gather(*saves)] == [1, 1, 1, 1]
    assert commits.committed == 1
