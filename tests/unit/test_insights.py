"""/insights' figures (contracts §6.5), computed in the database: SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from interrupt_chat.store.insights import Scope, insights
from interrupt_chat.store.schema import decisions_table, threads_table
from interrupt_chat.store.threads_db import ThreadDB

NOW = datetime.now(UTC)


@pytest.fixture
def db(db_url):
    database = ThreadDB(db_url)
    yield database
    database.close()


def _decided(db: ThreadDB, owner: str, action: str, waited_ms: int | None, *, by: str = "person", tool: str = "pay",
             ago: timedelta = timedelta(hours=1), decider: str = "") -> int:
    """One audit entry, then its time and wait set as the scenario needs (the chain is not what is read)."""
    entry = db.record_decision(owner, "t1", "r1", f"i{action}{waited_ms}", "tool_call", action, by=by, tool=tool,
                               decider=decider)
    with db._transaction("set the scenario", write=True) as conn:
        conn.execute(update(decisions_table).where(decisions_table.c.id == entry.id)
                     .values(at=NOW - ago, waited_ms=waited_ms))
    return entry.id


def test_the_summary_counts_the_outcomes_and_reads_exact_percentiles(db):
    for n in range(1, 101):  # waits of 1 s … 100 s: the nearest-rank median is 50 s, the 95th 95 s
        _decided(db, "alice|chat", "resolved" if n % 4 else "rejected", n * 1000 + 7)
    for _ in range(25):
        _decided(db, "alice|chat", "expired", 3_600_000, by="expiry")
    found = insights(db, Scope(admin=True), "7d", NOW)
    assert found.count == 125 and found.expired_rate == 0.2
    assert (found.p50_ms, found.p95_ms) == (50_007, 95_007)  # exact (not the bin's bound), expiry left out
    outcomes = {row["outcome"]: row for row in found.outcomes}
    assert outcomes["approved"]["person"] == 75 and outcomes["rejected"]["person"] == 25
    assert outcomes["expired"]["other"] == 25 and outcomes["cancelled"]["person"] == 0
    assert sum(row["n"] for row in found.time_to_decide) == 100
    hour = found.time_to_decide[0]
    assert hour["p50"] == 50.0 and hour["p95"] == 95.0  # to two significant digits (the chart's bins)


def test_rules_people_and_tools_are_told_apart(db):
    _decided(db, "alice|chat", "resolved", 0, by="policy", tool="search")
    _decided(db, "alice|chat", "resolved", 2000, tool="pay")
    _decided(db, "alice|chat", "rejected", 3000, by="link", tool="pay")
    _decided(db, "alice|chat", "cancelled", 4000, by="bulk", tool="")
    db.record_decision("alice|chat", "", None, "", None, "paused")  # not an outcome
    found = insights(db, Scope(admin=True), "24h", NOW)
    assert found.count == 4
    outcomes = {row["outcome"]: row for row in found.outcomes}
    assert outcomes["approved"] == {"outcome": "approved", "person": 1, "rule": 1, "other": 0}
    assert outcomes["rejected"]["person"] == 1 and outcomes["cancelled"]["other"] == 1
    tools = {row["tool"]: row for row in found.by_tool}
    assert tools["pay"] == {"tool": "pay", "approved": 1, "rejected": 1, "other": 0}
    assert tools["search"]["approved"] == 1 and tools["(none)"]["other"] == 1


def test_the_period_bounds_what_is_counted(db):
    _decided(db, "alice|chat", "resolved", 1000, ago=timedelta(hours=2))
    _decided(db, "alice|chat", "resolved", 1000, ago=timedelta(days=3))
    _decided(db, "alice|chat", "resolved", 1000, ago=timedelta(days=20))
    _decided(db, "alice|chat", "resolved", 1000, ago=timedelta(days=40))
    assert [insights(db, Scope(admin=True), period, NOW).count for period in ("24h", "7d", "30d")] == [1, 2, 3]
    days = insights(db, Scope(admin=True), "30d", NOW).time_to_decide
    assert len(days) == 3 and all(len(row["bucket"]) == 10 for row in days)  # one point a day (YYYY-MM-DD)
    with pytest.raises(ValueError, match="unknown period"):
        insights(db, Scope(admin=True), "1y", NOW)


def test_a_person_sees_what_they_asked_or_decided_and_an_admin_everything(db):
    _decided(db, "alice|chat", "resolved", 1000)  # alice asked
    _decided(db, "alice|other-chat", "rejected", 1000)  # alice asked, in another chat of hers
    _decided(db, "bob|chat", "resolved", 1000, decider="alice")  # bob asked, alice decided (an assignee)
    _decided(db, "bob|chat", "rejected", 1000)  # bob's own
    _decided(db, "carol|chat", "resolved", 1000)
    alice = Scope(owners=["alice|chat", "alice|other-chat"], public="alice")
    assert insights(db, alice, "7d", NOW).count == 3
    assert insights(db, Scope(owners=["bob|chat"], public="bob"), "7d", NOW).count == 2
    assert insights(db, Scope(), "7d", NOW).count == 0  # nobody: nothing
    assert insights(db, Scope(admin=True), "7d", NOW).count == 5


def test_waiting_requests_are_counted_by_age(db):
    with db._transaction("threads that wait", write=True) as conn:
        for n, (owner, minutes, count) in enumerate([("alice|chat", 0.5, 2), ("alice|chat", 30, 1),
                                                     ("alice|chat", 60 * 30, 1), ("bob|chat", 5, 3)]):
            conn.execute(threads_table.insert().values(
                owner=owner, thread_id=f"w{n}", title="t", title_custom=False, created_at=NOW, updated_at=NOW,
                version=1, revision=1, pending_count=count, pending_since=NOW - timedelta(minutes=minutes)))
    everyone = {row["age"]: row["requests"] for row in insights(db, Scope(admin=True), "7d", NOW).waiting}
    assert everyone == {"< 1 min": 2, "1–10 min": 3, "10–60 min": 1, "1–24 h": 0, "> 1 day": 1}
    alice = {row["age"]: row["requests"] for row in insights(db, Scope(owners=["alice|chat"]), "7d", NOW).waiting}
    assert alice["1–10 min"] == 0 and sum(alice.values()) == 4


def test_the_wait_is_measured_from_the_thread_waiting_to_the_decision(db):
    with db._transaction("a thread that waits", write=True) as conn:
        conn.execute(threads_table.insert().values(
            owner="alice|chat", thread_id="t1", title="t", title_custom=False, created_at=NOW, updated_at=NOW,
            version=1, revision=1, pending_count=1, pending_since=datetime.now(UTC) - timedelta(seconds=5)))
    entry = db.record_decision("alice|chat", "t1", "r1", "i1", "tool_call", "resolved", tool="pay")
    ruled = db.record_decision("alice|chat", "t9", "r1", "i2", "tool_call", "resolved", by="policy")
    with db._transaction("read") as conn:
        waits = dict(conn.execute(decisions_table.select().with_only_columns(
            decisions_table.c.id, decisions_table.c.waited_ms)).all())
    assert 5000 <= waits[entry.id] < 60_000  # from pending_since to the decision's stamp
    assert waits[ruled.id] == 0  # a rule answered before the card surfaced
