"""What ``/insights`` shows, computed in the database (grouped, on indexed columns), never row by row in Python.

Everything is read from the audit (``interrupt_chat_decisions``: ``at``, ``action``, ``decided_by``,
``tool``, ``waited_ms``) and the threads' waiting counts (``pending_count``, ``pending_since``).

Words. *Outcomes* are the final answers: resolved (shown as approved), rejected, cancelled, dismissed,
expired. ``count`` counts them in the period; ``expired_rate`` is expired / count. *Time to decide* is
``waited_ms`` (from the request surfacing to its answer) of the outcomes that someone or something gave:
expiry is left out (its wait is the request's life, not a decision). Percentiles are nearest-rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.engine import Connection

from .schema import decisions_table, threads_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["AGES", "OUTCOMES", "PERIODS", "Insights", "Scope", "insights"]

PERIODS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
OUTCOMES = ("resolved", "rejected", "cancelled", "dismissed", "expired")
DECIDED = ("resolved", "rejected", "cancelled", "dismissed")  # what time to decide measures
AGES = (("< 1 min", 60), ("1–10 min", 600), ("10–60 min", 3600), ("1–24 h", 86400), ("> 1 day", None))
_TOOLS = 10  # the by-tool chart's bars (the busiest tools)
_WIDEST = 8  # the widest bin of waits: 10^8 ms (waits past 10^10 ms, 115 days, keep 3 digits or fewer)


@dataclass(frozen=True)
class Scope:
    """Whose rows: everyone's (``admin``), else the owner keys a person asks from and their public name."""

    admin: bool = False
    owners: Sequence[str] = ()
    public: str = ""


@dataclass
class Insights:
    """The figures of one period (see the module's words)."""

    count: int = 0
    p50_ms: int | None = None
    p95_ms: int | None = None
    expired_rate: float = 0.0
    time_to_decide: list[dict[str, Any]] = field(default_factory=list)  # {bucket, p50, p95, n} seconds
    waiting: list[dict[str, Any]] = field(default_factory=list)  # {age, requests}
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # {outcome, person, rule, other}
    by_tool: list[dict[str, Any]] = field(default_factory=list)  # {tool, approved, rejected, other}


def _mine(scope: Scope) -> Any:
    d = decisions_table
    if scope.admin:
        return None
    said: list[Any] = [d.c.owner.in_(list(scope.owners))] if scope.owners else []
    if scope.public:
        said.append(d.c.decider == scope.public)
    return or_(*said) if said else d.c.id < 0


def _where(scope: Scope, since: datetime, actions: Sequence[str]) -> Any:
    d = decisions_table
    mine = _mine(scope)
    base = and_(d.c.at >= since, d.c.action.in_(list(actions)))
    return base if mine is None else and_(base, mine)


def _bucket(conn: Connection, hourly: bool) -> Any:
    """The time bucket of a decision's ``at`` (UTC), as text: an hour for 24 h, else a day."""
    at = decisions_table.c.at
    if conn.dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", at), 'YYYY-MM-DD HH24' if hourly else "YYYY-MM-DD")
    return func.substr(at, 1, 13 if hourly else 10)  # SQLite keeps UTC stamps as "YYYY-MM-DD HH:MM:SS.ffffff"


def _histogram(conn: Connection, scope: Scope, since: datetime, hourly: bool) -> dict[str, dict[int, int]]:
    """Per time bucket, how many waits fell in each bin of two significant digits (one grouped scan)."""
    d = decisions_table
    w = d.c.waited_ms
    # the bin's lower bound, in integers (both databases): 11172 ms is in [11000, 12000)
    low = case((w < 100, w), *[(w < 10 ** (k + 2), (w // 10 ** k) * 10 ** k) for k in range(1, _WIDEST)],
               else_=(w // 10 ** _WIDEST) * 10 ** _WIDEST).label("low")  # (literals stay 32-bit integers)
    bucket = _bucket(conn, hourly).label("bucket")
    rows = conn.execute(select(bucket, low, func.count())
                        .where(and_(_where(scope, since, DECIDED), w.is_not(None))).group_by(bucket, low)).all()
    found: dict[str, dict[int, int]] = {}
    for day, start, n in rows:
        found.setdefault(str(day), {})[int(start)] = int(n)
    return found


def _upper(low: int) -> int:
    """The end of the bin that starts at ``low`` (two significant digits)."""
    return low + 10 ** min(_WIDEST, max(0, len(str(low)) - 2))


def _ranked(bins: dict[int, int], share: int) -> tuple[int, int] | None:
    """The bin holding the nearest-rank ``share``-th percentile, and the rank inside it (from 1)."""
    total = sum(bins.values())
    if not total:
        return None
    rank, seen = max(1, (total * share + 99) // 100), 0
    for low in sorted(bins):
        if seen + bins[low] >= rank:
            return low, rank - seen
        seen += bins[low]
    return None


def _exact(conn: Connection, scope: Scope, since: datetime, bins: dict[int, int], share: int) -> int | None:
    """The exact percentile: found in its bin, then read there (a narrow range of the waits index)."""
    d = decisions_table
    found = _ranked(bins, share)
    if found is None:
        return None
    low, rank = found
    where = and_(_where(scope, since, DECIDED), d.c.waited_ms >= low, d.c.waited_ms < _upper(low))
    value = conn.execute(select(d.c.waited_ms).where(where).order_by(d.c.waited_ms).offset(rank - 1).limit(1)).scalar()
    return int(value) if value is not None else low


def _time_to_decide(histogram: dict[str, dict[int, int]]) -> list[dict[str, Any]]:
    """p50 and p95 per time bucket, to the bin (two significant digits: a chart's precision), in seconds."""
    out = []
    for day in sorted(histogram):
        bins = histogram[day]
        p50, p95 = _ranked(bins, 50), _ranked(bins, 95)
        out.append({"bucket": day, "n": sum(bins.values()), "p50": round((p50[0] if p50 else 0) / 1000, 1),
                    "p95": round((p95[0] if p95 else 0) / 1000, 1)})
    return out


def _grouped(conn: Connection, scope: Scope, since: datetime) -> list[tuple[str, str, str, int]]:
    """The period's outcomes counted by tool, action and decider.

    Grouped by the raw columns, in the order of the tools index: a scan without a sort (a NULL
    decider is a person's answer from before schema 2).
    """
    d = decisions_table
    rows = conn.execute(select(d.c.tool, d.c.action, d.c.decided_by, func.count()).where(
        _where(scope, since, OUTCOMES)).group_by(d.c.tool, d.c.action, d.c.decided_by)).all()
    return [(str(r[1]), str(r[2] or "person"), str(r[0] or ""), int(r[3])) for r in rows]


def _outcomes(grouped: list[tuple[str, str, str, int]]) -> list[dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {outcome: {"outcome": "approved" if outcome == "resolved" else outcome,
                                                  "person": 0, "rule": 0, "other": 0} for outcome in OUTCOMES}
    for action, decider, _tool, n in grouped:
        column = "person" if decider in ("person", "link") else "rule" if decider == "policy" else "other"
        table[action][column] += n
    return list(table.values())


def _by_tool(grouped: list[tuple[str, str, str, int]]) -> list[dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for action, _decider, tool, n in grouped:
        row = tools.setdefault(tool or "(none)", {"tool": tool or "(none)", "approved": 0, "rejected": 0, "other": 0})
        row["approved" if action == "resolved" else "rejected" if action == "rejected" else "other"] += n
    busiest = sorted(tools.values(), key=lambda r: (-(r["approved"] + r["rejected"] + r["other"]), r["tool"]))
    return busiest[:_TOOLS]


def _waiting(conn: Connection, scope: Scope, now: datetime) -> list[dict[str, Any]]:
    t = threads_table
    cuts = [(label, now - timedelta(seconds=seconds)) for label, seconds in AGES if seconds is not None]
    age = case(*[(t.c.pending_since > cut, label) for label, cut in cuts], else_=AGES[-1][0]).label("age")
    where = t.c.pending_count > 0
    if not scope.admin:
        where = and_(where, t.c.owner.in_(list(scope.owners)))
    rows = {str(r[0]): r[1] for r in conn.execute(select(age, func.sum(t.c.pending_count)).where(where)
                                                   .group_by(age)).all()}
    return [{"age": label, "requests": int(rows.get(label) or 0)} for label, _seconds in AGES]


def insights(db: ThreadDB, scope: Scope, period: str, now: datetime) -> Insights:
    """The figures of ``period`` (``24h``, ``7d`` or ``30d``) up to ``now``, for ``scope``.

    Raises:
        ValueError: an unknown period.
        ThreadDBError: the database failed.
    """
    if period not in PERIODS:
        raise ValueError(f"unknown period {period!r} (expected one of {', '.join(PERIODS)})")
    since = now - PERIODS[period]
    with db._transaction("read the insights") as conn:
        grouped, histogram = _grouped(conn, scope, since), _histogram(conn, scope, since, period == "24h")
        merged: dict[int, int] = {}
        for bins in histogram.values():
            for low, n in bins.items():
                merged[low] = merged.get(low, 0) + n
        count = sum(n for *_rest, n in grouped)
        expired = sum(n for action, _by, _tool, n in grouped if action == "expired")
        return Insights(count=count, p50_ms=_exact(conn, scope, since, merged, 50),
                        p95_ms=_exact(conn, scope, since, merged, 95),
                        expired_rate=round(expired / count, 4) if count else 0.0,
                        time_to_decide=_time_to_decide(histogram), waiting=_waiting(conn, scope, now),
                        outcomes=_outcomes(grouped), by_tool=_by_tool(grouped))
