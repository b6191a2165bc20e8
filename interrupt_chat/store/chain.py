"""The audit's hash chain in the database (issue 44; the hashing itself: :mod:`interrupt_chat.model.chain`).

One chain per database, in id order. An entry is appended inside its own write transaction, under the
chain's lock (PostgreSQL: an advisory transaction lock; SQLite: ``BEGIN IMMEDIATE`` serializes writers
already), so ids are allocated in chain order and two workers never fork it. What is hashed is the
entry as ``audit export`` writes it (:func:`line_of`): people by their public names (``owner=`` id or an
HMAC), so no export shows an identity key. Every column is covered but ``owner``, the lookup key, which an
upgrade's rename of a chat moves (docs/decisions/0027).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.engine import Connection

from ..model import chain
from .rows import _aware
from .schema import decisions_table

__all__ = ["CHAIN_LOCK_KEY", "append", "append_event", "line_of", "lines", "rechain", "verify"]

CHAIN_LOCK_KEY = 0x1C7DC  # pg_advisory_xact_lock key of the audit chain
_BATCH = 2000


def line_of(row: Any) -> dict[str, Any]:
    """A decision row as its chain entry (and its export line)."""
    at = _aware(row.at)
    return {"id": row.id, "at": at.astimezone(UTC).isoformat() if at else None, "owner": row.owner_public or "",
            "decider": row.decider or "", "thread_id": row.thread_id, "run_id": row.run_id,
            "interrupt_id": row.interrupt_id, "reason": row.reason, "action": row.action, "payload": row.payload,
            "by": row.decided_by or "person", "detail": row.detail, "tool": row.tool or "",
            "waited_ms": row.waited_ms, "prev_hash": row.prev_hash, "hash": row.hash}


def _lock(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CHAIN_LOCK_KEY})


def _head(conn: Connection, before: int | None = None) -> str:
    d = decisions_table
    query = select(d.c.hash).where(d.c.hash.is_not(None))
    if before is not None:
        query = query.where(d.c.id < before)
    found = conn.execute(query.order_by(d.c.id.desc()).limit(1)).scalar()
    return str(found) if found else chain.GENESIS


def append(conn: Connection, values: dict[str, Any]) -> int:
    """Inside a write transaction: insert a decision row as the chain's next entry; its id."""
    d = decisions_table
    _lock(conn)
    previous = _head(conn)
    key = conn.execute(d.insert().values(**values, prev_hash=previous)).inserted_primary_key
    row_id = int(key[0]) if key else 0
    row = conn.execute(select(d).where(d.c.id == row_id)).one()
    conn.execute(d.update().where(d.c.id == row_id).values(hash=chain.entry_hash(previous, line_of(row))))
    return row_id


def append_event(conn: Connection, db: Any, owner: str, action: str, detail: dict[str, Any], thread_id: str = "",
                 by: str = "person", public: str | None = None) -> int:
    """Inside a write transaction: chain an event that decides nothing (a rule made or revoked, a delegation).

    ``public``: how the owner is named (default: ``db.public_name`` of the owner key).
    """
    if public is None:
        public = db.public_name(owner) if db.public_name is not None and owner else ""
    return append(conn, {"owner": owner, "thread_id": thread_id, "run_id": None, "interrupt_id": "", "reason": None,
                         "action": action, "payload": None, "at": db._stamp(), "decided_by": by, "detail": detail,
                         "owner_public": public, "decider": public, "tool": str(detail.get("tool") or ""),
                         "waited_ms": None})


def lines(conn: Connection) -> Iterator[dict[str, Any]]:
    """Every chain entry, oldest first (read in batches)."""
    d, last = decisions_table, 0
    while True:
        rows = conn.execute(select(d).where(d.c.id > last).order_by(d.c.id).limit(_BATCH)).all()
        if not rows:
            return
        for row in rows:
            yield line_of(row)
        last = rows[-1].id


def rechain(conn: Connection) -> int:
    """Inside the schema's migration: chain every row not chained yet, in id order, once; how many."""
    d = decisions_table
    _lock(conn)
    count, previous = 0, chain.GENESIS
    for line in list(lines(conn)):
        if line["hash"] is None:
            line["prev_hash"] = previous
            digest = chain.entry_hash(previous, line)
            conn.execute(d.update().where(d.c.id == line["id"]).values(prev_hash=previous, hash=digest))
            previous, count = digest, count + 1
        else:
            previous = line["hash"]
    return count


def verify(db: Any) -> chain.Verified | chain.Broken:
    """The database's chain, walked whole (``audit verify``)."""
    with db._transaction("read the audit chain") as conn:
        return chain.verify(lines(conn))
