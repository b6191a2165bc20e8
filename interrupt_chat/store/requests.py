"""Who must decide each request of a chat with people, in the thread database (docs/decisions/0025).

A request's row holds its assignees, the approvals it needs and has, and when its reminder and
escalation are due. Every change is conditional on the row's ``revision`` (the database is the
arbiter: of two workers that change a request at once, one wins and the other reads again). The
answer itself is still claimed on the thread (its revision), as every answer is: this table never
resumes anything. ``interrupt_chat_request_assignees`` lists an open request under each of its
assignees, so "what is assigned to me" is one indexed query.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, delete, or_, select, tuple_, update

from . import chain
from .rows import _aware
from .schema import assignees_table, delegations_table, requests_table, threads_table
from .types import ThreadDBError

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from .threads_db import ThreadDB

__all__ = ["Delegation", "RequestRow", "add_approval", "asked", "clear_delegation", "close", "delegation_of",
           "delegators_of", "due", "escalate", "get", "mine", "of_thread", "open_requests", "reassign", "reminded",
           "set_delegation", "still_waiting"]

MAX_LISTED = 2000  # requests one listing reads at most


@dataclass
class RequestRow:
    """One request's routing as stored."""

    owner: str
    thread_id: str
    interrupt_id: str
    run_id: str
    chat: str
    asker: str
    assignees: list[str]
    need: int = 1
    approvals: list[dict[str, str]] = field(default_factory=list)
    tool: str = ""
    reason: str = ""
    surfaced_at: datetime | None = None
    expires_at: datetime | None = None
    remind_at: datetime | None = None
    escalate_at: datetime | None = None
    escalate_to: list[str] = field(default_factory=list)
    reminded: bool = False
    escalated: bool = False
    state: str = "open"
    revision: int = 1
    about: dict[str, Any] = field(default_factory=dict)  # {"message", "args", "masked", "title"} for mail and Slack

    @property
    def key(self) -> tuple[str, str, str]:
        """(owner, thread, interrupt): the row's primary key."""
        return self.owner, self.thread_id, self.interrupt_id

    @property
    def approvers(self) -> list[str]:
        """Who approved so far, in order."""
        return [a.get("actor", "") for a in self.approvals]


def _row(r: Any) -> RequestRow:
    return RequestRow(r.owner, r.thread_id, r.interrupt_id, r.run_id, r.chat, r.asker, list(r.assignees or []),
                      int(r.need), list(r.approvals or []), r.tool or "", r.reason or "", _aware(r.surfaced_at),
                      _aware(r.expires_at) if r.expires_at else None, _aware(r.remind_at) if r.remind_at else None,
                      _aware(r.escalate_at) if r.escalate_at else None, list(r.escalate_to or []), bool(r.reminded),
                      bool(r.escalated), r.state, int(r.revision), dict(r.about or {}))


def _where(key: tuple[str, str, str], revision: int | None = None) -> Any:
    t = requests_table
    clause = and_(t.c.owner == key[0], t.c.thread_id == key[1], t.c.interrupt_id == key[2])
    return clause if revision is None else and_(clause, t.c.revision == revision)


def _list_under(conn: Connection, row: RequestRow, assignees: Sequence[str]) -> None:
    a = assignees_table
    conn.execute(delete(a).where(and_(a.c.owner == row.owner, a.c.thread_id == row.thread_id,
                                      a.c.interrupt_id == row.interrupt_id)))
    if assignees and row.state == "open":
        conn.execute(a.insert(), [{"assignee": who, "owner": row.owner, "thread_id": row.thread_id,
                                   "interrupt_id": row.interrupt_id, "chat": row.chat} for who in assignees])


def open_requests(db: ThreadDB, rows: Sequence[RequestRow]) -> list[RequestRow]:
    """Store requests that surfaced; one stored before (another tab, a reload) is kept as it is.

    Returns the rows as stored now (the earlier ones where there were).
    """
    out = []
    for row in rows:
        values = {k: getattr(row, k) for k in ("owner", "thread_id", "interrupt_id", "run_id", "chat", "asker",
                                               "assignees", "need", "approvals", "tool", "reason", "surfaced_at",
                                               "expires_at", "remind_at", "escalate_at", "escalate_to", "reminded",
                                               "escalated", "state", "revision", "about")}
        try:
            with db._transaction("store a request's assignees", write=True) as conn:
                found = conn.execute(select(requests_table).where(_where(row.key))).first()
                if found is not None:
                    out.append(_row(found))
                    continue
                conn.execute(requests_table.insert().values(**values))
                _list_under(conn, row, row.assignees)
            out.append(row)
        except ThreadDBError:  # two workers stored it at once: theirs stands (else the failure is real)
            again = get(db, *row.key)
            if again is None:
                raise
            out.append(again)
    return out


def get(db: ThreadDB, owner: str, thread_id: str, interrupt_id: str) -> RequestRow | None:
    """One request's row, or None."""
    with db._transaction("read a request") as conn:
        found = conn.execute(select(requests_table).where(_where((owner, thread_id, interrupt_id)))).first()
    return _row(found) if found is not None else None


def of_thread(db: ThreadDB, owner: str, thread_id: str, run_id: str | None = None) -> dict[str, RequestRow]:
    """A thread's requests by interrupt id (of one run when given)."""
    t = requests_table
    query = select(t).where(and_(t.c.owner == owner, t.c.thread_id == thread_id))
    if run_id is not None:
        query = query.where(t.c.run_id == run_id)
    with db._transaction("read a thread's requests") as conn:
        return {r.interrupt_id: _row(r) for r in conn.execute(query).all()}


def _change(db: ThreadDB, row: RequestRow, what: str, listed: Sequence[str] | None = None,
            **values: Any) -> RequestRow | None:
    """Write ``values`` if the row is still at ``row.revision``; the row as written, else None (it moved on)."""
    with db._transaction(what, write=True) as conn:
        done = conn.execute(update(requests_table).where(_where(row.key, row.revision))
                            .values(revision=row.revision + 1, **values))
        if not done.rowcount:
            return None
        changed = RequestRow(**{**row.__dict__, **values, "revision": row.revision + 1})
        if listed is not None or values.get("state") == "closed":
            _list_under(conn, changed, list(listed) if listed is not None else [])
    return changed


def add_approval(db: ThreadDB, row: RequestRow, actor: str, on_behalf_of: str) -> RequestRow | None:
    """Count one more distinct approval (None: the row moved on; read it again)."""
    entry = {"actor": actor, "for": on_behalf_of, "at": datetime.now(UTC).isoformat()}
    return _change(db, row, "count an approval", approvals=[*row.approvals, entry])


def reassign(db: ThreadDB, row: RequestRow, assignees: Sequence[str]) -> RequestRow | None:
    """Replace the assignees (None: the row moved on)."""
    return _change(db, row, "reassign a request", list(assignees), assignees=list(assignees))


def escalate(db: ThreadDB, row: RequestRow, extra: Sequence[str]) -> RequestRow | None:
    """Add the escalation's assignees, once (None: the row moved on)."""
    assignees = [*row.assignees, *(who for who in extra if who not in row.assignees)]
    return _change(db, row, "escalate a request", assignees, assignees=assignees, escalated=True)


def reminded(db: ThreadDB, row: RequestRow) -> RequestRow | None:
    """Mark the reminder sent, once (None: another worker sent it, or the row moved on)."""
    return _change(db, row, "mark a reminder", reminded=True)


def close(db: ThreadDB, owner: str, thread_id: str, interrupt_ids: Sequence[str] | None = None) -> int:
    """Close a thread's open requests (decided, withdrawn, gone); returns how many."""
    t, a = requests_table, assignees_table
    where = and_(t.c.owner == owner, t.c.thread_id == thread_id, t.c.state == "open")
    gone = and_(a.c.owner == owner, a.c.thread_id == thread_id)
    if interrupt_ids is not None:
        where, gone = and_(where, t.c.interrupt_id.in_(list(interrupt_ids))), and_(gone, a.c.interrupt_id.in_(
            list(interrupt_ids)))
    with db._transaction("close requests", write=True) as conn:
        done = conn.execute(update(t).where(where).values(state="closed", revision=t.c.revision + 1))
        conn.execute(delete(a).where(gone))
    return int(done.rowcount or 0)


def mine(db: ThreadDB, chat: str, names: Sequence[str]) -> list[RequestRow]:
    """The open requests of ``chat`` assigned to any of ``names`` (a person's id, roles, delegators), oldest first."""
    if not names:
        return []
    t, a = requests_table, assignees_table
    keys = select(a.c.owner, a.c.thread_id, a.c.interrupt_id).where(
        and_(a.c.chat == chat, a.c.assignee.in_(list(names)))).distinct().limit(MAX_LISTED)
    with db._transaction("list the requests assigned to a person") as conn:
        found = [tuple(k) for k in conn.execute(keys).all()]
        if not found:
            return []
        rows = conn.execute(select(t).where(and_(tuple_(t.c.owner, t.c.thread_id, t.c.interrupt_id).in_(found),
                                                 t.c.state == "open"))).all()
    return sorted((_row(r) for r in rows), key=lambda r: r.surfaced_at or datetime.min.replace(tzinfo=UTC))


def asked(db: ThreadDB, owner: str) -> list[RequestRow]:
    """The open requests of ``owner``'s threads."""
    t = requests_table
    with db._transaction("list a person's requests") as conn:
        rows = conn.execute(select(t).where(and_(t.c.owner == owner, t.c.state == "open"))
                            .order_by(t.c.surfaced_at).limit(MAX_LISTED)).all()
    return [_row(r) for r in rows]


def due(db: ThreadDB, now: datetime, limit: int = 200) -> list[RequestRow]:
    """Open requests whose reminder or escalation is due."""
    t = requests_table
    when = or_(and_(t.c.reminded.is_(False), t.c.remind_at.is_not(None), t.c.remind_at <= now),
               and_(t.c.escalated.is_(False), t.c.escalate_at.is_not(None), t.c.escalate_at <= now))
    with db._transaction("list due reminders") as conn:
        rows = conn.execute(select(t).where(and_(t.c.state == "open", when)).limit(limit)).all()
    return [_row(r) for r in rows]


def still_waiting(db: ThreadDB, row: RequestRow) -> bool:
    """Whether the request's thread still waits for it (not deleted, not answered by a path that closed nothing)."""
    t = threads_table
    with db._transaction("check a request still waits") as conn:
        found = conn.execute(select(t.c.pending, t.c.pending_count).where(
            and_(t.c.owner == row.owner, t.c.thread_id == row.thread_id))).first()
    return found is not None and bool(found.pending_count) and row.interrupt_id in json.dumps(found.pending)


# -- delegation ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Delegation:
    """A person's delegate while away, until ``until``."""

    person: str
    delegate: str
    until: datetime


def set_delegation(db: ThreadDB, person: str, delegate: str, until: datetime) -> Delegation:
    """``person``'s assigned requests also reach ``delegate`` until ``until`` (replacing an earlier one)."""
    d = delegations_table
    with db._transaction("set a delegation", write=True) as conn:
        conn.execute(delete(d).where(d.c.person == person))
        conn.execute(d.insert().values(person=person, delegate=delegate, until=until, set_at=datetime.now(UTC)))
        chain.append_event(conn, db, person, person, "delegated",  # a person of the app's login: named by id
                           {"delegate": delegate, "until": until.isoformat()})
    return Delegation(person, delegate, until)


def clear_delegation(db: ThreadDB, person: str) -> bool:
    """End ``person``'s delegation; False when there was none."""
    d = delegations_table
    with db._transaction("clear a delegation", write=True) as conn:
        if not conn.execute(delete(d).where(d.c.person == person)).rowcount:
            return False
        chain.append_event(conn, db, person, person, "delegation-ended", {})
    return True


def delegation_of(db: ThreadDB, person: str, now: datetime) -> Delegation | None:
    """``person``'s delegation in force, or None."""
    d = delegations_table
    with db._transaction("read a delegation") as conn:
        r = conn.execute(select(d).where(and_(d.c.person == person, d.c.until > now))).first()
    return Delegation(r.person, r.delegate, _aware(r.until)) if r is not None else None


def delegators_of(db: ThreadDB, delegate: str, now: datetime) -> list[str]:
    """The people whose delegation to ``delegate`` is in force."""
    d = delegations_table
    with db._transaction("read delegations") as conn:
        return [r[0] for r in conn.execute(select(d.c.person).where(and_(d.c.delegate == delegate,
                                                                          d.c.until > now))).all()]
