"""/insights on a big audit: the grouped SQL queries vs loading the rows into Python (issue 44).

Builds a SQLite thread database of 100,000 audit entries over 30 days (30 tools, 200 owners, the
actions and deciders in realistic shares, waits from seconds to hours) and 2,000 waiting threads,
then times ``store.insights.insights`` for each period, as an admin (everyone's rows: the largest
read) and as one person, against a baseline that reads the period's rows and computes the same
figures in Python. Prints the medians of 5 runs and the ratios; the goal is under 300 ms for 100,000
decisions on SQLite. Run: ``.venv/bin/python -m benchmarks.insights`` (~1 min, a temporary file).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from interrupt_chat.store.insights import OUTCOMES, Scope, insights
from interrupt_chat.store.schema import decisions_table, threads_table
from interrupt_chat.store.threads_db import ThreadDB

ROWS, OWNERS, TOOLS, WAITING, RUNS = 100_000, 200, 30, 2_000, 5
ACTIONS = [("resolved", 55), ("rejected", 20), ("cancelled", 8), ("expired", 7), ("dismissed", 2),
           ("reassigned", 3), ("approved-partly", 3), ("shadow", 2)]
BY = [("person", 60), ("policy", 25), ("link", 8), ("bulk", 5), ("expiry", 2)]


def _pick(rng: random.Random, table: list[tuple[str, int]]) -> str:
    return rng.choices([name for name, _ in table], weights=[weight for _, weight in table])[0]


def build(path: Path, now: datetime) -> ThreadDB:
    """The database: rows written in bulk (the chain's hashes are not what this measures)."""
    db = ThreadDB(f"sqlite:///{path}")
    db.ensure_schema()
    rng = random.Random(44)
    rows = []
    for n in range(ROWS):
        action = _pick(rng, ACTIONS)
        by = "expiry" if action == "expired" else _pick(rng, BY)
        rows.append({"owner": f"owner{n % OWNERS}|chat", "thread_id": f"t{n % 5000}", "run_id": f"r{n}",
                     "interrupt_id": f"i{n}", "reason": "tool_call", "action": action, "payload": None,
                     "at": now - timedelta(seconds=rng.uniform(0, 30 * 86400)), "decided_by": by, "detail": None,
                     "owner_public": f"person{n % OWNERS}", "decider": f"person{n % OWNERS}",
                     "tool": f"tool_{int(rng.paretovariate(1.2)) % TOOLS}",
                     "waited_ms": 0 if by == "policy" else int(rng.lognormvariate(10, 1.6))})
    threads = [{"owner": f"owner{n % OWNERS}|chat", "thread_id": f"w{n}", "title": "t", "title_custom": False,
                "created_at": now, "updated_at": now, "version": 1, "revision": 1, "pending_count": 1 + n % 3,
                "pending_since": now - timedelta(seconds=rng.uniform(0, 3 * 86400))} for n in range(WAITING)]
    with db._transaction("fill", write=True) as conn:
        for start in range(0, ROWS, 5000):
            conn.execute(decisions_table.insert(), rows[start:start + 5000])
        conn.execute(threads_table.insert(), threads)
    return db


def baseline(db: ThreadDB, period: str, now: datetime) -> int:
    """The same figures from the rows loaded into Python (what the page must not do)."""
    d = decisions_table
    since = now - {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}[period]
    with db._transaction("read") as conn:
        rows = conn.execute(select(d.c.action, d.c.decided_by, d.c.tool, d.c.waited_ms, d.c.at)
                            .where((d.c.at >= since) & d.c.action.in_(OUTCOMES))).all()
    waits = sorted(r.waited_ms for r in rows if r.action != "expired" and r.waited_ms is not None)
    days: dict[str, list[int]] = {}
    for r in rows:
        if r.action != "expired" and r.waited_ms is not None:
            days.setdefault(str(r.at)[:10], []).append(r.waited_ms)
    for values in days.values():
        values.sort()
    tools: dict[str, int] = {}
    for r in rows:
        tools[r.tool] = tools.get(r.tool, 0) + 1
    return len(rows) + len(waits) + len(tools)


def _median_ms(fn, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    """Build the database, time each period as an admin and as a person, print the ratios."""
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        db = build(Path(folder) / "insights.db", now)
        print(f"built {ROWS:,} audit entries and {WAITING:,} waiting threads in {time.perf_counter() - start:.1f} s")
        person = Scope(owners=["owner7|chat"], public="person7")
        print(f"{'period':<8}{'who':<8}{'insights (ms)':>15}{'baseline (ms)':>16}{'ratio':>8}")
        for period in ("24h", "7d", "30d"):
            for who, scope in (("admin", Scope(admin=True)), ("person", person)):
                ours = _median_ms(lambda scope=scope, period=period: insights(db, scope, period, now))
                theirs = _median_ms(lambda period=period: baseline(db, period, now))
                print(f"{period:<8}{who:<8}{ours:>15.1f}{theirs:>16.1f}{theirs / ours:>7.1f}x")
        found = insights(db, Scope(admin=True), "30d", now)
        print(f"30d admin: count {found.count:,}, p50 {found.p50_ms} ms, p95 {found.p95_ms} ms, "
              f"expired rate {found.expired_rate}")
        db.close()


if __name__ == "__main__":
    main()
