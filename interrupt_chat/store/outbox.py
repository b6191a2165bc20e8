"""The notification outbox: each notification is a row, delivered at least once by whichever worker claims it.

A claim is a conditional update (due, still pending) that leases the row for :data:`LEASE_SECONDS`:
of two workers that see the same due row, one delivers it. A delivery that fails is tried again
later (the caller's backoff); one that keeps failing is marked ``failed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select

from .schema import outbox_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["LEASE_SECONDS", "OutboxItem", "claim_due", "enqueue", "finish", "retry_later"]

LEASE_SECONDS = 60.0  # a claimed row is retried after this if its worker dies mid-delivery
KEEP_DAYS = 7  # delivered and failed rows are kept this long (for a look), then dropped


@dataclass(frozen=True)
class OutboxItem:
    """A notification claimed for delivery."""

    id: str
    chat: str
    body: dict[str, Any]
    attempts: int  # including this one


def enqueue(db: ThreadDB, item_id: str, chat: str, body: dict[str, Any]) -> bool:
    """Add a notification; False when one with this id is there already (each is sent once per id)."""
    t = outbox_table
    now = datetime.now(UTC)
    with db._transaction("queue a notification", write=True) as conn:
        if conn.execute(select(t.c.id).where(t.c.id == item_id)).first() is not None:
            return False
        conn.execute(t.insert().values(id=item_id, chat=chat, body=body, attempts=0, next_at=now, state="pending",
                                       created_at=now))
    return True


def claim_due(db: ThreadDB, limit: int = 20) -> list[OutboxItem]:
    """Lease up to ``limit`` due notifications to this worker (each by a conditional update)."""
    t = outbox_table
    now = datetime.now(UTC)
    claimed: list[OutboxItem] = []
    with db._transaction("claim notifications", write=True) as conn:
        rows = conn.execute(select(t.c.id, t.c.chat, t.c.body, t.c.attempts)
                            .where((t.c.state == "pending") & (t.c.next_at <= now))
                            .order_by(t.c.next_at).limit(limit)).all()
        for row in rows:
            lease = now + timedelta(seconds=LEASE_SECONDS)
            won = conn.execute(t.update().where((t.c.id == row.id) & (t.c.state == "pending")
                                                & (t.c.attempts == row.attempts))  # nobody claimed it meanwhile
                               .values(next_at=lease, attempts=row.attempts + 1)).rowcount == 1
            if won:
                claimed.append(OutboxItem(row.id, row.chat, dict(row.body), row.attempts + 1))
        conn.execute(delete(t).where((t.c.state != "pending") & (t.c.created_at < now - timedelta(days=KEEP_DAYS))))
    return claimed


def finish(db: ThreadDB, item_id: str, *, delivered: bool) -> None:
    """Mark a claimed notification delivered, or failed for good."""
    t = outbox_table
    with db._transaction("mark a notification", write=True) as conn:
        conn.execute(t.update().where(t.c.id == item_id).values(state="delivered" if delivered else "failed"))


def retry_later(db: ThreadDB, item_id: str, delay: float) -> None:
    """Give a claimed notification back, due again in ``delay`` seconds."""
    t = outbox_table
    with db._transaction("reschedule a notification", write=True) as conn:
        conn.execute(t.update().where((t.c.id == item_id) & (t.c.state == "pending"))
                     .values(next_at=datetime.now(UTC) + timedelta(seconds=delay)))
