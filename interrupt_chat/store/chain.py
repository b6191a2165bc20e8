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
from .schema import audit_head_table, decisions_table

__all__ = ["CHAIN_LOCK_KEY", "append", "append_event", "line_of", "lines", "public_of", "rechain", "verify"]

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


def _head(conn: Connection) -> tuple[int, str]:
    """The recorded head (entries, hash); a chain without one (nothing appended yet) is at its start."""
    found = conn.execute(select(audit_head_table.c.entries, audit_head_table.c.hash)
                         .where(audit_head_table.c.id == 1)).first()
    return (int(found.entries), str(found.hash)) if found else (0, chain.GENESIS)


def _set_head(conn: Connection, entries: int, last_id: int, digest: str) -> None:
    h = audit_head_table
    if not conn.execute(h.update().where(h.c.id == 1).values(entries=entries, last_id=last_id, hash=digest)).rowcount:
        conn.execute(h.insert().values(id=1, entries=entries, last_id=last_id, hash=digest))


def append(conn: Connection, values: dict[str, Any]) -> int:
    """Inside a write transaction: insert a decision row as the chain's next entry; its id.

    The previous hash is the recorded head's, not the last row's: an entry appended after rows were
    deleted from the end names the hash of what was deleted, so the deletion shows.
    """
    d = decisions_table
    _lock(conn)
    entries, previous = _head(conn)
    key = conn.execute(d.insert().values(**values, prev_hash=previous)).inserted_primary_key
    row_id = int(key[0]) if key else 0
    row = conn.execute(select(d).where(d.c.id == row_id)).one()
    digest = chain.entry_hash(previous, line_of(row))
    conn.execute(d.update().where(d.c.id == row_id).values(hash=digest))
    _set_head(conn, entries + 1, row_id, digest)
    return row_id


def public_of(db: Any, owner: str) -> str:
    """How the audit names ``owner`` (``db.public_name``, set by the app; "" without it).

    Called before the write transaction opens: naming may read the server secret from the database.
    """
    return db.public_name(owner) if db.public_name is not None and owner else ""


def append_event(conn: Connection, db: Any, owner: str, public: str, action: str, detail: dict[str, Any],
                 thread_id: str = "", by: str = "person") -> int:
    """Inside a write transaction: chain an event that decides nothing (a rule made or revoked, a delegation).

    ``public``: how the owner is named (:func:`public_of`, read before the transaction).
    """
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
    count, entries, last, previous = 0, 0, 0, chain.GENESIS
    for line in list(lines(conn)):
        if line["hash"] is None:
            line["prev_hash"] = previous
            digest = chain.entry_hash(previous, line)
            conn.execute(d.update().where(d.c.id == line["id"]).values(prev_hash=previous, hash=digest))
            previous, count = digest, count + 1
        else:
            previous = line["hash"]
        entries, last = entries + 1, line["id"]
    if entries:
        _set_head(conn, entries, last, previous)
    return count


def verify(db: Any) -> chain.Verified | chain.Broken:
    """The database's chain, walked whole (``audit verify``), then held against its recorded head.

    A walk alone cannot see entries deleted from the end (what is left is a valid chain); the head,
    written with every entry, can: the first missing entry is named.
    """
    walked: list[int] = []

    def tracked(conn: Connection) -> Iterator[dict[str, Any]]:
        for line in lines(conn):
            walked[:] = [line["id"]]
            yield line

    with db._transaction("read the audit chain") as conn:
        found = chain.verify(tracked(conn))
        head = conn.execute(select(audit_head_table).where(audit_head_table.c.id == 1)).first()
    if isinstance(found, chain.Broken):
        return found
    if head is None:
        if not found.count:
            return found
        return chain.Broken(walked[0], found.count - 1, "the chain's recorded head is missing")
    if (found.count, found.head) == (int(head.entries), str(head.hash)):
        return found
    if found.count < int(head.entries):
        gone = int(head.last_id) if int(head.entries) - found.count == 1 else (walked[0] + 1 if walked else 1)
        return chain.Broken(gone, found.count, f"the chain ends before its recorded head (entry {head.last_id}, "
                                               f"{head.entries} entries): entries were removed from its end")
    return chain.Broken(walked[0] if walked else head.last_id, found.count - 1,
                        "the chain does not end at its recorded head: the head or the last entries were changed")
