"""The approvals' numbers for ``GET /metrics``, counted by the database (SQLite and PostgreSQL alike).

Every worker behind one port, and a worker after a restart, reads the same rows: the totals agree
whichever process answers a scrape, and nothing is lost when one restarts (no per-process counter to
merge). Each number is one grouped query; no row is loaded into Python. Nothing here names an owner,
an answer or an argument: only actions, deciders, counts and waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import case, func, select

from .audit import CHAIN_ONLY, DECISION_ACTIONS
from .schema import decisions_table, threads_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["BUCKETS", "DECISION_WORDS", "WAITED_ACTIONS", "Numbers", "read"]

DECISION_WORDS = tuple(a for a in DECISION_ACTIONS if a not in CHAIN_ONLY)  # what decisions_total counts
WAITED_ACTIONS = ("resolved", "rejected", "cancelled", "expired", "dismissed", "approved-partly")  # the waits
BUCKETS = (0.5, 1, 5, 15, 30, 60, 300, 900, 3600, 14400, 86400)  # seconds: a card's wait, up to a day


@dataclass(frozen=True)
class Numbers:
    """What one scrape reports.

    Attributes:
        pending: requests waiting now (the threads' pending counts).
        decisions: ``{(action, by): count}`` of the decisions recorded (``by``: person, bulk, policy, link, expiry).
        waited: ``(upper bound in seconds, decisions that waited at most that long)`` per bucket, cumulative.
        waited_count: decisions whose wait is known.
        waited_sum: their waits added up, in seconds.
        runs_active: threads with a run in flight.
    """

    pending: int
    decisions: dict[tuple[str, str], int]
    waited: list[tuple[float, int]]
    waited_count: int
    waited_sum: float
    runs_active: int


def read(db: ThreadDB, buckets: tuple[float, ...] = BUCKETS) -> Numbers:
    """The numbers, in one read transaction (four grouped queries).

    Raises:
        ThreadDBError: the database failed.
    """
    t, d = threads_table, decisions_table
    in_flight = t.c.meta["inFlight"].as_boolean()
    waited_ms = d.c.waited_ms
    per_bucket = [func.coalesce(func.sum(case((waited_ms <= int(b * 1000), 1), else_=0)), 0) for b in buckets]
    with db._transaction("read the metrics") as conn:
        pending = conn.execute(select(func.coalesce(func.sum(t.c.pending_count), 0))).scalar()
        running = conn.execute(select(func.count()).select_from(t).where(in_flight.is_(True))).scalar()
        decided = conn.execute(select(d.c.action, d.c.decided_by, func.count()).where(
            d.c.action.in_(DECISION_WORDS)).group_by(d.c.action, d.c.decided_by)).all()
        waits = conn.execute(select(func.count(waited_ms), func.coalesce(func.sum(waited_ms), 0), *per_bucket)
                             .where(d.c.action.in_(WAITED_ACTIONS) & waited_ms.is_not(None))).one()
    decisions: dict[tuple[str, str], int] = {}
    for action, by, count in decided:  # NULL decided_by (rows from before schema 2): a person
        decisions[(action, by or "person")] = decisions.get((action, by or "person"), 0) + int(count)
    return Numbers(int(pending or 0), decisions, [(b, int(n)) for b, n in zip(buckets, waits[2:], strict=True)],
                   int(waits[0]), int(waits[1]) / 1000, int(running or 0))
