"""Moving an owner's threads to a new owner key (a chat renamed by an upgrade: docs/decisions/0017)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select, union

from .schema import decisions_table, messages_table, threads_table, tombstones_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["move_owner"]


def move_owner(db: ThreadDB, old: str, new: str) -> int:
    """Give ``old``'s threads, messages, audit entries and tombstones to ``new``, in one transaction.

    A thread ``new`` already has (or deleted) stays with ``old``: nothing is overwritten.
    Idempotent: a second call finds nothing to move.

    Returns:
        How many threads moved.

    Raises:
        ThreadDBError: the database failed.
    """
    if old == new:
        return 0
    t, b = threads_table, tombstones_table
    with db._transaction("move the threads to the chat's new name", write=True) as conn:
        taken = {row[0] for row in conn.execute(union(select(t.c.thread_id).where(t.c.owner == new),
                                                       select(b.c.thread_id).where(b.c.owner == new)))}
        moving = [row[0] for row in conn.execute(select(t.c.thread_id).where(t.c.owner == old))
                  if row[0] not in taken]
        for table in (threads_table, messages_table, decisions_table, tombstones_table):
            keep = table.c.thread_id.not_in(taken) if taken else None
            where = table.c.owner == old if keep is None else (table.c.owner == old) & keep
            conn.execute(table.update().where(where).values(owner=new))
    with db._lock:
        for key in [k for k in db._known if k[0] == old]:
            db._known.pop(key)
    return len(moving)
