"""The thread database's statements and what a ThreadDB remembers between them (digests, revisions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, case, inspect, select, text
from sqlalchemy.engine import Connection

from ..agui.records import MessageDigests
from . import chain
from .rows import _aware, _pending_identity
from .schema import decisions_table, messages_table, schema_version_table, threads_table, tombstones_table
from .schema import metadata as _metadata
from .types import ThreadDBError

DB_URL_ENV = "INTERRUPT_CHAT_DB_URL"


_TIMESTAMP = ("DATETIME", "TIMESTAMP WITH TIME ZONE")  # SQLite's, PostgreSQL's


_PG_LOCK_KEY = 0x1C7DB  # pg_advisory_xact_lock key: one process creates or migrates the schema at a time


def _prepare_schema(conn: Connection, version: int) -> None:
    """Create the tables if missing, migrate them up to ``version``, check them (in ``conn``'s transaction)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
    _metadata.create_all(conn)
    found = conn.execute(select(schema_version_table.c.version).where(schema_version_table.c.id == 1)).scalar()
    if found is not None and found > version:
        raise ThreadDBError(f"thread database: its schema version {found} is newer than this code's "
                            f"({version}); upgrade interrupt_chat")
    if found is not None and found < version:
        _migrate(conn, found)
        conn.execute(schema_version_table.update().where(schema_version_table.c.id == 1).values(version=version))
    _check_tables(conn)
    if found is None:
        conn.execute(schema_version_table.insert().values(id=1, version=version))


def _migrate(conn: Connection, found: int) -> None:
    """Bring a schema of version ``found`` to this code's (one step per version, inside the creating transaction)."""
    columns = {c["name"] for c in inspect(conn).get_columns("interrupt_chat_decisions")}
    if found < 2 and "decided_by" not in columns:
        conn.execute(text("ALTER TABLE interrupt_chat_decisions ADD COLUMN decided_by VARCHAR(16)"))
    if found < 3 and "detail" not in columns:
        conn.execute(text("ALTER TABLE interrupt_chat_decisions ADD COLUMN detail JSON"))
    rules = {c["name"] for c in inspect(conn).get_columns("interrupt_chat_policies")}
    for name, kind in (("conditions", "JSON"), ("expires_at", _TIMESTAMP[conn.dialect.name == "postgresql"]),
                       ("schema_hash", "VARCHAR(64)")):
        if found < 5 and name not in rules:  # schema 5: narrow and time-boxed rules (§6.4)
            conn.execute(text(f"ALTER TABLE interrupt_chat_policies ADD COLUMN {name} {kind}"))
    decided = {c["name"] for c in inspect(conn).get_columns("interrupt_chat_decisions")}
    for name, kind in (("owner_public", "TEXT"), ("decider", "TEXT"), ("tool", "TEXT"), ("waited_ms", "INTEGER"),
                       ("prev_hash", "VARCHAR(64)"), ("hash", "VARCHAR(64)")):
        if found < 6 and name not in decided:  # schema 6: the audit's hash chain, what /insights reads (issue 44)
            conn.execute(text(f"ALTER TABLE interrupt_chat_decisions ADD COLUMN {name} {kind}"))
    if found < 6:
        for index in decisions_table.indexes:
            index.create(conn, checkfirst=True)
        chain.rechain(conn)  # the rows before the chain are chained once, in id order


def _check_tables(conn: Connection) -> None:
    """Tables of these names that another application created (a shared Reflex database) are refused."""
    inspector = inspect(conn)
    for table in _metadata.sorted_tables:
        missing = {c.name for c in table.columns} - {c["name"] for c in inspector.get_columns(table.name)}
        if missing:
            raise ThreadDBError(f"thread database: the table {table.name!r} exists without the column(s) "
                                f"{', '.join(sorted(missing))}: it is not interrupt_chat's; give the threads a "
                                f"database of their own ({DB_URL_ENV})")


class _Conflict(Exception):
    """Another writer changed the thread between our read and our write: save again (or refuse)."""

    def __init__(self, *, deleted: bool = False) -> None:
        super().__init__("conflict")
        self.deleted = deleted


def _stored_row(conn: Connection, where: dict[str, Any], known: _Known, damaged: bool,
                expected: int | None) -> tuple[_Stored | None, list[str]]:
    """The row a save replaces and its messages' digests: remembered, else read (checked against ``expected``)."""
    cached = known.stored is not None and (expected is None or known.stored.revision == expected)
    if cached and known.stored is not None and known.digests is not None and not damaged:
        return known.stored, known.digests  # what our last save or load left: no read needed
    row = conn.execute(_SELECT_THREAD, where).first()
    stored = _stored_of(row) if row else None
    if expected is not None and (stored.revision if stored else 0) != expected:
        raise _Conflict(deleted=_tombstoned(conn, where))
    return stored, [] if stored is None or damaged else list(conn.execute(_SELECT_HASHES, where).scalars())


def _tombstoned(conn: Connection, where: dict[str, Any]) -> bool:
    return conn.execute(_SELECT_TOMBSTONE, where).first() is not None


@dataclass(frozen=True)
class _Stored:
    """What a save needs to know of the thread row it replaces, and its head (``ThreadDB.known_head``)."""

    revision: int
    pending: tuple[Any, frozenset[str]]  # _pending_identity of the stored row
    in_flight: bool = False  # a run's claim holds the row at this revision
    since: datetime | None = None  # its pending_since (aware, UTC)


def _stored_of(row: Any) -> _Stored:
    """A thread row (revision, pending, meta, pending_since) as :class:`_Stored`."""
    meta = row.meta if isinstance(row.meta, dict) else {}
    return _Stored(row.revision, _pending_identity(row.pending, row.meta), bool(meta.get("inFlight")),
                   _aware(row.pending_since))


@dataclass
class _Known:
    """What a ThreadDB remembers of one thread: digests by view, and the rows it last wrote or read."""

    memo: MessageDigests = field(default_factory=MessageDigests)
    stored: _Stored | None = None  # the thread row after our last save or load (None: read it again)
    digests: list[str] | None = None  # the messages' digests at that revision, by seq
    next: _Stored | None = None  # what the save in progress writes (kept once it commits)


_W_THREAD = (threads_table.c.owner == bindparam("w_owner")) & (threads_table.c.thread_id == bindparam("w_thread"))
_W_MESSAGES = ((messages_table.c.owner == bindparam("w_owner"))
               & (messages_table.c.thread_id == bindparam("w_thread")))
# built once: a statement built per call is compiled (or its cache key computed from its literals) per call
_SELECT_THREAD = select(threads_table.c.revision, threads_table.c.pending, threads_table.c.meta,
                        threads_table.c.pending_since).where(_W_THREAD)
_SELECT_HEAD = select(threads_table.c.revision, threads_table.c.meta, threads_table.c.updated_at,
                      threads_table.c.pending_since).where(_W_THREAD)
_SELECT_TOMBSTONE = select(tombstones_table.c.thread_id).where(
    (tombstones_table.c.owner == bindparam("w_owner")) & (tombstones_table.c.thread_id == bindparam("w_thread")))
_INSERT_THREAD = threads_table.insert()
_LIST_THREADS = (select(threads_table.c.thread_id, threads_table.c.title, threads_table.c.created_at,
                        threads_table.c.updated_at, threads_table.c.pending_count)
                 .where(threads_table.c.owner == bindparam("w_owner"))
                 .order_by(threads_table.c.updated_at.desc(), threads_table.c.thread_id))
_SELECT_HASHES = select(messages_table.c.hash).where(_W_MESSAGES).order_by(messages_table.c.seq)
_UPDATE_THREAD = threads_table.update().where(_W_THREAD & (threads_table.c.revision == bindparam("w_revision")))
# a rename (here or in another process) does not move the revision: the title is kept in SQL when it is custom
_UPDATE_THREAD_KEEPING_TITLE = _UPDATE_THREAD.values(
    title=case((threads_table.c.title_custom, threads_table.c.title), else_=bindparam("default_title")))
_DELETE_MESSAGES_FROM = messages_table.delete().where(_W_MESSAGES & (messages_table.c.seq >= bindparam("w_seq")))
_UPDATE_MESSAGE = messages_table.update().where(_W_MESSAGES & (messages_table.c.seq == bindparam("w_seq")))
_INSERT_MESSAGE = messages_table.insert()
