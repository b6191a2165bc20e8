"""The inbox's read: what waits for an owner across their threads, from one query."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sqlalchemy import select

from .rows import _aware, _pending_items, _person_waits
from .schema import threads_table
from .types import PendingItem, WaitingToolCall

if TYPE_CHECKING:
    from ..threads_db import ThreadDB

__all__ = ["waiting"]

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
            log.warning("thread database: skipping the unreadable pending set of thread %.80s (%s)",
                        row.thread_id, exc)
        items += [WaitingToolCall(row.thread_id, row.title, str(wait.get("toolCallId") or ""),
                                  str(wait.get("name") or ""), since) for wait in _person_waits(row.meta)]
    return items
