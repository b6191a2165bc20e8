"""Feedback on assistant messages: a thumbs up or down and an optional comment, per message and owner."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select

from .schema import feedback_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["MAX_COMMENT_CHARS", "RATINGS", "Feedback", "clear", "give", "of_owner", "of_thread"]

RATINGS = ("up", "down")
MAX_COMMENT_CHARS = 2_000


@dataclass(frozen=True)
class Feedback:
    """One person's rating of one assistant message.

    Attributes:
        thread_id: the thread.
        message_id: the assistant message rated.
        rating: ``up`` or ``down``.
        comment: what the person added ("" when nothing).
        at: when it was given (aware, UTC).
    """

    thread_id: str
    message_id: str
    rating: str
    comment: str
    at: datetime

    def to_json(self) -> dict[str, Any]:
        """As a line of the audit export (``kind: "feedback"``)."""
        return {"kind": "feedback", "threadId": self.thread_id, "messageId": self.message_id, "rating": self.rating,
                "comment": self.comment, "at": self.at.isoformat()}


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def give(db: ThreadDB, owner: str, thread_id: str, message_id: str, rating: str, comment: str = "") -> Feedback:
    """Record ``owner``'s rating of a message (replacing their earlier one).

    Raises:
        ValueError: a rating other than ``up`` / ``down``, or no message id.
    """
    if rating not in RATINGS or not message_id:
        raise ValueError(f"not a rating: {rating!r} for message {message_id!r}")
    comment = comment.replace("\x00", "")[:MAX_COMMENT_CHARS]
    t, now = feedback_table, datetime.now(UTC)
    with db._transaction("record feedback", write=True) as conn:
        conn.execute(delete(t).where((t.c.owner == owner) & (t.c.message_id == message_id)))
        conn.execute(t.insert().values(owner=owner, thread_id=thread_id, message_id=message_id, rating=rating,
                                       comment=comment, at=now))
    return Feedback(thread_id, message_id, rating, comment, now)


def clear(db: ThreadDB, owner: str, message_id: str) -> bool:
    """Take ``owner``'s rating of a message back (a toggle pressed again); False when there was none."""
    t = feedback_table
    with db._transaction("clear feedback", write=True) as conn:
        done = conn.execute(delete(t).where((t.c.owner == owner) & (t.c.message_id == message_id)))
    return bool(done.rowcount)


def _rows(db: ThreadDB, owner: str, thread_id: str | None) -> list[Feedback]:
    t = feedback_table
    query = select(t).where(t.c.owner == owner)
    if thread_id is not None:
        query = query.where(t.c.thread_id == thread_id)
    with db._transaction("read feedback") as conn:
        rows = conn.execute(query.order_by(t.c.at)).all()
    return [Feedback(r.thread_id, r.message_id, r.rating, r.comment, _aware(r.at)) for r in rows]


def of_owner(db: ThreadDB, owner: str) -> list[Feedback]:
    """All of ``owner``'s feedback, oldest first."""
    return _rows(db, owner, None)


def of_thread(db: ThreadDB, owner: str, thread_id: str) -> list[Feedback]:
    """``owner``'s feedback in one thread, oldest first."""
    return _rows(db, owner, thread_id)
