"""The inbox's reads: what waits for an owner across their threads.

``waiting`` lists every waiting interrupt from one query. The approvals inbox pages its rows
instead: ``waiting_heads`` (one small query: which threads wait, at which revision) on every
load, ``waiting_bodies`` only for the threads whose revision it has not built yet.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from .rows import _aware, _pending_items, _person_waits
from .schema import messages_table, threads_table
from .types import PendingItem, WaitingToolCall

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["WaitingBody", "WaitingHead", "waiting", "waiting_bodies", "waiting_heads"]

log = logging.getLogger(__name__)


def waiting(db: ThreadDB, owner: str) -> list[PendingItem | WaitingToolCall]:
    """What waits for ``owner`` across their threads, newest thread first, from one query.

    Each thread's pending interrupts (protocol order), then its frontend-tool calls waiting for the
    person (S27). A pending set that does not parse is skipped with a warning (it still raises
    ``ThreadDBError`` from ``ThreadDB.load``).

    Raises:
        ThreadDBError: the database failed.
    """
    t = threads_table
    query = (select(t.c.thread_id, t.c.title, t.c.pending, t.c.meta, t.c.pending_since)
             .where((t.c.owner == owner) & (t.c.pending_count > 0))
             .order_by(t.c.pending_since.desc(), t.c.thread_id))
    with db._transaction("list what waits for the person") as conn:
        rows = conn.execute(query).all()
    items: list[PendingItem | WaitingToolCall] = []
    for row in rows:
        since = _aware(row.pending_since)
        try:
            items += _pending_items(row.thread_id, row.title, row.pending, since)
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("thread database: skipping the unreadable pending set of thread %.80r (%s)",
                        row.thread_id, exc)
        items += [WaitingToolCall(row.thread_id, row.title, str(wait.get("toolCallId") or ""),
                                  str(wait.get("name") or ""), since) for wait in _person_waits(row.meta)]
    return items


@dataclass(frozen=True)
class WaitingHead:
    """One of an owner's waiting threads as the inbox pages them: which, since when, at which revision."""

    thread_id: str
    title: str
    revision: int
    raised_at: datetime | None


@dataclass(frozen=True)
class WaitingBody:
    """What a waiting thread owes, as stored, without the rest of its messages.

    The tracker's export, the waiting tool calls, and the awaited tool calls' names and arguments
    (from its assistant messages).
    """

    thread_id: str
    revision: int
    tracker: dict[str, Any]
    tool_waits: list[dict[str, Any]]
    calls: dict[str, tuple[str, str]]  # toolCallId -> (tool name, arguments as JSON text)


def waiting_heads(db: ThreadDB, owner: str) -> list[WaitingHead]:
    """``owner``'s threads that wait for the person, newest wait first: one small query (no JSON column).

    Raises:
        ThreadDBError: the database failed.
    """
    t = threads_table
    query = (select(t.c.thread_id, t.c.title, t.c.revision, t.c.pending_since)
             .where((t.c.owner == owner) & (t.c.pending_count > 0))
             .order_by(t.c.pending_since.desc(), t.c.thread_id))
    with db._transaction("list the threads that wait for the person") as conn:
        rows = conn.execute(query).all()
    return [WaitingHead(r.thread_id, r.title, r.revision, _aware(r.pending_since)) for r in rows]


def waiting_bodies(db: ThreadDB, owner: str, thread_ids: Sequence[str]) -> list[WaitingBody]:
    """What ``thread_ids`` (``owner``'s) owe: their pending sets and the tool calls those sets ask about.

    Only the assistant messages are read, and only the calls that a pending interrupt names are
    kept: no session is rebuilt, no message validated.

    Raises:
        ThreadDBError: the database failed.
    """
    t, m = threads_table, messages_table
    bodies: list[WaitingBody] = []
    for start in range(0, len(thread_ids), _CHUNK):
        chunk = list(thread_ids[start:start + _CHUNK])
        with db._transaction("read what the waiting threads owe") as conn:
            rows = conn.execute(select(t.c.thread_id, t.c.revision, t.c.pending, t.c.answers, t.c.meta)
                                .where((t.c.owner == owner) & t.c.thread_id.in_(chunk))).all()
            wanted = {r.thread_id: _awaited_calls(r.pending) for r in rows}
            messages = conn.execute(select(m.c.thread_id, m.c.body)
                                    .where((m.c.owner == owner) & m.c.thread_id.in_(
                                        [thread for thread, calls in wanted.items() if calls])
                                           & (m.c.role == "assistant"))).all() if any(wanted.values()) else []
        calls: dict[str, dict[str, tuple[str, str]]] = {}
        for message in messages:
            for call in _calls_of(message.body):
                if call[0] in wanted.get(message.thread_id, ()):
                    calls.setdefault(message.thread_id, {})[call[0]] = call[1:]
        for row in rows:
            meta = row.meta if isinstance(row.meta, dict) else {}
            tracker = {"pending": row.pending, "answers": row.answers, "sealed": bool(meta.get("sealed")),
                       "error": meta.get("trackerError")}
            bodies.append(WaitingBody(row.thread_id, row.revision, tracker, _person_waits(meta),
                                      calls.get(row.thread_id, {})))
    return bodies


_CHUNK = 200  # thread ids per query (an IN list every database takes)


def _awaited_calls(pending: Any) -> set[str]:
    interrupts = pending.get("interrupts") if isinstance(pending, dict) else None
    return {str(i["toolCallId"]) for i in interrupts or [] if isinstance(i, dict) and i.get("toolCallId")}


def _calls_of(body: Any) -> list[tuple[str, str, str]]:
    """An assistant message's tool calls as ``(id, name, arguments)`` (the AG-UI wire shape)."""
    found = []
    for call in (body.get("toolCalls") or []) if isinstance(body, dict) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and call.get("id"):
            found.append((str(call["id"]), str(function.get("name") or ""), str(function.get("arguments") or "")))
    return found
