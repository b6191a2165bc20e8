"""The hidden versions of a thread's forks (edited messages, regenerated answers): one row per tail.

The shown path lives in the thread and message rows; every version not shown is a row here,
written in the same transaction as the thread save that hid it (:meth:`ThreadDB.save`'s
``branches``), so a switch is all or nothing. Search reads their text too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, exists, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from ..agui.branches import Tail
from .schema import branches_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["BranchWrite", "drop_thread", "load", "matches", "write"]


@dataclass
class BranchWrite:
    """What a save does to the hidden versions: tails to keep (insert or replace), ids to drop."""

    put: list[Tail] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)


def _clean(value: str) -> str:
    return value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def write(conn: Connection, owner: str, thread_id: str, change: BranchWrite, now: datetime) -> None:
    """Inside a save's transaction: store and drop tails."""
    b = branches_table
    ids = [tail.branch_id for tail in change.put] + list(change.drop)
    if ids:
        conn.execute(delete(b).where((b.c.owner == owner) & (b.c.thread_id == thread_id) & b.c.branch_id.in_(ids)))
    if change.put:
        conn.execute(b.insert(), [{"owner": owner, "thread_id": thread_id, "branch_id": tail.branch_id,
                                   "parent_id": tail.parent_id, "record": tail.record, "text": _clean(tail.text),
                                   "hidden_at": now} for tail in change.put])


def load(db: ThreadDB, owner: str, thread_id: str, branch_id: str) -> dict[str, Any] | None:
    """A hidden tail's record, or None."""
    b = branches_table
    with db._transaction("read a branch") as conn:
        return conn.execute(select(b.c.record).where((b.c.owner == owner) & (b.c.thread_id == thread_id)
                                                    & (b.c.branch_id == branch_id))).scalar()


def drop_thread(conn: Connection, owner: str, thread_id: str) -> None:
    """Inside a delete's transaction: the thread's hidden versions go with it."""
    b = branches_table
    conn.execute(delete(b).where((b.c.owner == owner) & (b.c.thread_id == thread_id)))


def matches(owner: Any, thread_id: Any, needle: str) -> ColumnElement[bool]:
    """A search clause: a hidden version of the thread holds ``needle`` (case-insensitive)."""
    b = branches_table
    return exists().where((b.c.owner == owner) & (b.c.thread_id == thread_id)
                          & b.c.text.icontains(needle, autoescape=True))
