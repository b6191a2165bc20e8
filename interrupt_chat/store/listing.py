"""An owner's thread list (with search) and a thread's title: the reads and writes beside the threads' rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import exists, or_, select

from . import branches as store_branches
from .rows import TITLE_CHARS, _aware, _custom_title, _shorten
from .schema import messages_table, threads_table
from .sql import _LIST_THREADS
from .types import ThreadSummary

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["rename", "threads"]


def threads(db: ThreadDB, owner: str, search: str | None = None) -> list[ThreadSummary]:
    """``owner``'s threads, newest (last saved) first.

    Args:
        db: the thread database.
        owner: whose threads.
        search: keep the threads whose title or a user/assistant message contains this text,
            in any branch (case-insensitive; ``%`` and ``_`` are plain characters). None or blank: all.

    Raises:
        ThreadDBError: the database failed.
    """
    t, m = threads_table, messages_table
    query = _LIST_THREADS
    needle = (search or "").strip()
    if needle:
        in_messages = exists().where((m.c.owner == t.c.owner) & (m.c.thread_id == t.c.thread_id)
                                     & m.c.text.icontains(needle, autoescape=True))
        query = query.where(or_(t.c.title.icontains(needle, autoescape=True), in_messages,
                                store_branches.matches(t.c.owner, t.c.thread_id, needle)))
    with db._transaction("list the threads") as conn:
        rows = conn.execute(query, {"w_owner": owner}).all()
    return [ThreadSummary(r.thread_id, r.title, _aware(r.created_at), _aware(r.updated_at), r.pending_count > 0,
                          r.pending_count) for r in rows]


def rename(db: ThreadDB, owner: str, thread_id: str, title: str) -> bool:
    """Give ``owner``'s thread a title; a blank one brings back the default (the first user message).

    The revision does not move: a rename never makes another tab's action lose its claim.

    Returns:
        False when the owner has no such thread.

    Raises:
        ThreadDBError: the database failed.
    """
    t, m = threads_table, messages_table
    where = (t.c.owner == owner) & (t.c.thread_id == thread_id)
    with db._transaction("rename the thread", write=True) as conn:
        if title.strip():
            values = {"title": _custom_title(title), "title_custom": True}
        else:
            first = conn.execute(select(m.c.text).where((m.c.owner == owner) & (m.c.thread_id == thread_id)
                                                        & (m.c.role == "user")).order_by(m.c.seq).limit(1)).scalar()
            values = {"title": _shorten(first or "", TITLE_CHARS), "title_custom": False}
        return conn.execute(t.update().where(where).values(**values)).rowcount == 1
