"""The thread database: each owner's threads as structured rows, in SQLite or PostgreSQL.

Replaces the pickle-based :mod:`interrupt_chat.thread_store` (D7): a thread is a
:func:`~interrupt_chat.agui.records.session_record` split into a ``threads`` row (state, pending
set, answers, run status) and one ``messages`` row per AG-UI message, so a save writes only the
messages that are new or changed. No masked answer is ever written (S23, D6); pending interrupts
survive a restart (S25). Built on SQLAlchemy Core; framework-free (no Reflex import).

Tables (created on first use, idempotently; ``schema_version`` holds :data:`SCHEMA_VERSION` so a
later version can migrate them):

- ``threads`` — one row per (owner, thread): ``title``, ``title_custom`` (renamed by the person),
  ``created_at``, ``updated_at``, ``version`` (of the record), ``revision`` (bumped by each save),
  ``state``, ``pending``, ``answers``, ``meta`` (tool-call flags, seal, run status) as JSON,
  ``last_run_id``, ``error``, and the denormalised ``pending_count`` / ``pending_since``.
- ``messages`` — one row per message: ``owner``, ``thread_id``, ``seq`` (its position),
  ``message_id``, ``role``, ``body`` (the AG-UI wire dict, JSON), ``text`` (what search reads:
  the text of user and assistant messages) and ``hash`` (a digest of ``body``).
- ``decisions`` — the append-only audit trail of what was answered (:meth:`ThreadDB.record_decision`).

Every method is synchronous and thread-safe, and raises :class:`ThreadDBError` (and only that, for
database trouble) when the database cannot be reached, is locked, or holds a row that does not
parse; callers show a notice and keep working in memory. The URL is any SQLAlchemy URL;
``postgresql://`` (and ``postgres://``) use psycopg 3. See :func:`default_db_url` for the default.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import (
    bindparam,
    case,
    create_engine,
    event,
    exists,
    inspect,
    or_,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from .agui.interrupts import is_secret_schema, parse_expiry
from .agui.records import (
    RECORD_VERSION,
    MessageDigests,
    RecordError,
    message_digest,
    session_from_record,
    session_record,
    view_message,
)
from .agui.session import AgentSession
from .agui.transcript import MessageView, Transcript
from .agui.transport import AgentClient
from .store.schema import decisions_table, messages_table, schema_version_table, threads_table, tombstones_table
from .store.schema import metadata as _metadata

__all__ = [
    "DB_URL_ENV",
    "DECISION_ACTIONS",
    "DEFAULT_DATA_DIR",
    "MASKED",
    "SCHEMA_VERSION",
    "DecisionRecord",
    "PendingItem",
    "SaveResult",
    "StoredThread",
    "ThreadConflict",
    "ThreadDB",
    "ThreadDBError",
    "ThreadDeleted",
    "ThreadHead",
    "ThreadSummary",
    "WaitingToolCall",
    "default_db_url",
    "mask_secrets",
]

log = logging.getLogger(__name__)

DB_URL_ENV = "INTERRUPT_CHAT_DB_URL"
#: Folder (under the working directory) of the default SQLite file, created on first use. Hidden: Reflex's dev
#: reloader skips dot-folders, so thread writes (``-wal``/``-shm`` files) never restart the dev backend.
DEFAULT_DATA_DIR = ".interrupt_chat"
LEGACY_DATA_DIR = "interrupt_chat_data"  # the default before 0.x: still used when it holds a database
DEFAULT_DB_FILE = "threads.db"
SCHEMA_VERSION = 1
#: What :meth:`ThreadDB.record_decision` writes instead of a masked field's value (S23).
MASKED = "[masked]"
DECISION_ACTIONS = ("resolved", "cancelled", "rejected", "expired", "dismissed")
TITLE_CHARS = 60
CUSTOM_TITLE_CHARS = 200
_CACHED_THREADS = 1024  # threads whose message digests a ThreadDB keeps in memory (least recently saved out)
_TEXT_ROLES = frozenset({"user", "assistant"})
_PG_LOCK_KEY = 0x1C7DB  # pg_advisory_xact_lock key: one process creates or migrates the schema at a time


class ThreadDBError(Exception):
    """The thread database failed: unreachable, locked, or holding a row that does not parse.

    The only exception :class:`ThreadDB` raises for database trouble (the SQLAlchemy, driver or
    :class:`~interrupt_chat.agui.records.RecordError` cause is chained as ``__cause__``). Invalid
    arguments (an unknown decision action) raise ``ValueError`` as usual.
    """


class ThreadConflict(Exception):
    """A conditional write lost: the thread is not at the revision the caller read.

    Another tab, worker or process wrote it since. Nothing of the write happened; read it again.

    Not a :class:`ThreadDBError`: the database works, the caller's copy is stale (docs/decisions/0016).
    """


class ThreadDeleted(ThreadConflict):
    """The thread was deleted (it has a tombstone): a save never brings it back."""


@dataclass(frozen=True)
class ThreadHead:
    """Where one thread stands in the database, read cheaply (:meth:`ThreadDB.head`).

    Attributes:
        revision: its revision; 0 when the owner has no such thread.
        deleted: it was deleted (a tombstone; ``revision`` is then 0).
        in_flight: a run was claimed on it and has not been saved as ended.
        updated_at: its last save (aware, UTC); None when there is no such thread.
    """

    revision: int
    deleted: bool
    in_flight: bool = False
    updated_at: datetime | None = None


@dataclass(frozen=True)
class StoredThread:
    """One thread as read (:meth:`ThreadDB.read`): the session, its revision, and whether a run holds it."""

    session: AgentSession
    revision: int
    in_flight: bool
    updated_at: datetime | None = None


@dataclass(frozen=True)
class ThreadSummary:
    """One thread in an owner's list (:meth:`ThreadDB.threads`).

    Attributes:
        thread_id: the AG-UI ``threadId``.
        title: the person's title, else the first user message (at most 60 characters), else "".
        created_at: first save (aware, UTC).
        updated_at: last save (aware, UTC).
        pending: interrupts or frontend-tool calls are waiting for the person.
        pending_count: how many (a legacy interrupt counts one, so does each waiting tool call).
    """

    thread_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    pending: bool
    pending_count: int


@dataclass(frozen=True)
class PendingItem:
    """One pending interrupt of one of an owner's threads (:meth:`ThreadDB.pending`).

    Attributes:
        thread_id: the thread it belongs to.
        title: that thread's title.
        interrupt_id: the interrupt's id; "" for a legacy interrupt (it has none).
        reason: its ``reason`` ("" when it has none).
        message: the text for the person (a legacy value's ``message`` / ``question``, or the
            value itself when it is a string); None when there is none.
        expires_at: ``expiresAt`` parsed (S11); None when absent or unparseable.
        raised_at: when a save first saw this pending set (aware, UTC).
    """

    thread_id: str
    title: str
    interrupt_id: str
    reason: str
    message: str | None
    expires_at: datetime | None
    raised_at: datetime | None


@dataclass(frozen=True)
class WaitingToolCall:
    """A frontend-tool call that waits for the person in one of an owner's threads (S27).

    Listed by :meth:`ThreadDB.tool_waits`.

    Attributes:
        thread_id: the thread it belongs to.
        title: that thread's title.
        tool_call_id: the call's id.
        tool_name: the tool it calls.
        raised_at: when a save first saw the thread waiting (aware, UTC).
    """

    thread_id: str
    title: str
    tool_call_id: str
    tool_name: str
    raised_at: datetime | None


@dataclass(frozen=True)
class DecisionRecord:
    """One entry of the audit trail (:meth:`ThreadDB.decisions`); masked fields read ``[masked]``.

    Attributes:
        id: increasing with time, unique in the database.
        thread_id: the thread.
        run_id: the run that raised the interrupt.
        interrupt_id: the interrupt ("" for a legacy one).
        reason: the interrupt's reason.
        action: ``resolved``, ``cancelled``, ``rejected``, ``expired`` or ``dismissed``.
        payload: the answer as sent, masked fields replaced by :data:`MASKED`.
        at: when it was recorded (aware, UTC).
    """

    id: int
    thread_id: str
    run_id: str | None
    interrupt_id: str
    reason: str | None
    action: str
    payload: Any
    at: datetime

    def to_json(self) -> dict[str, Any]:
        """The entry as plain JSON data (camelCase keys, ``at`` in ISO 8601)."""
        return {"id": self.id, "threadId": self.thread_id, "runId": self.run_id, "interruptId": self.interrupt_id,
                "reason": self.reason, "action": self.action, "payload": self.payload, "at": self.at.isoformat()}


@dataclass(frozen=True)
class SaveResult:
    """What one :meth:`ThreadDB.save` wrote: message rows inserted, updated and deleted; the new revision."""

    inserted: int
    updated: int
    deleted: int
    revision: int = 0

    @property
    def written(self) -> int:
        """Message rows touched in all."""
        return self.inserted + self.updated + self.deleted


def default_db_url(reflex_db_url: str | None = None) -> str:
    """The database URL to use when none is configured explicitly.

    In order: the ``INTERRUPT_CHAT_DB_URL`` environment variable; else ``reflex_db_url`` (pass
    the Reflex app's ``rx.Config.db_url`` if it has one); else a SQLite file
    ``.interrupt_chat/threads.db`` under the current working directory (the app's root when
    started by ``reflex run``). The folder is created when :class:`ThreadDB` first opens the file;
    unlike Reflex's ``.states`` folder it is not emptied at start-up, and like it, Reflex's dev
    reloader does not watch it. A database left in the older default folder
    ``interrupt_chat_data/`` is still used (with a warning: there, every write restarts a dev backend).
    """
    configured = os.environ.get(DB_URL_ENV, "").strip()
    if configured:
        return configured
    if reflex_db_url and reflex_db_url.strip():
        return reflex_db_url.strip()
    legacy = Path.cwd() / LEGACY_DATA_DIR / DEFAULT_DB_FILE
    if legacy.exists() and not (Path.cwd() / DEFAULT_DATA_DIR / DEFAULT_DB_FILE).exists():
        log.warning("thread database: using %s; move it to %s/ (Reflex's dev reloader restarts the backend on "
                    "every write in %s/)", legacy, DEFAULT_DATA_DIR, LEGACY_DATA_DIR)
        return f"sqlite:///{legacy}"
    return f"sqlite:///{Path.cwd() / DEFAULT_DATA_DIR / DEFAULT_DB_FILE}"


def mask_secrets(payload: Any, schema: Any) -> Any:
    """``payload`` with the value of every masked field (S23) replaced by :data:`MASKED`.

    A field is masked when its schema is a secret (``format: password`` or ``writeOnly: true``,
    :func:`~interrupt_chat.agui.interrupts.is_secret_schema`); object properties (and
    ``additionalProperties``) and array ``items`` are followed to any depth.
    """
    if is_secret_schema(schema):
        return MASKED
    if not isinstance(schema, dict):
        return payload
    if isinstance(payload, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = schema.get("additionalProperties")
        return {key: mask_secrets(value, props.get(key, extra)) for key, value in payload.items()}
    if isinstance(payload, list) and isinstance(schema.get("items"), dict):
        return [mask_secrets(value, schema["items"]) for value in payload]
    return payload


#: The record keys kept in ``threads.meta`` (the others have columns or message rows).
_META_KEYS = ("toolCalls", "sealed", "trackerError", "status", "statusError", "toolWaits", "inFlight")


# -- the database ------------------------------------------------------------------------------------


class ThreadDB:
    """Each owner's threads in a SQL database (SQLite or PostgreSQL), saved incrementally.

    Nothing connects until the first call (:meth:`ensure_schema` checks at once); the tables are
    created then. SQLite files get WAL journaling and a busy timeout; PostgreSQL connections a
    connect timeout. A ThreadDB is safe to share between threads; several processes may share
    a database (each save checks the thread's revision and re-reads the digests when another
    process wrote in between).

    Args:
        url: a SQLAlchemy database URL, e.g. ``sqlite:////srv/app/threads.db`` or
            ``postgresql+psycopg://user@host/db`` (``postgresql://`` means psycopg 3 here).
        busy_timeout: seconds a SQLite statement waits for a lock before failing.
        connect_timeout: seconds to wait for a PostgreSQL connection (at least 2, libpq's minimum).

    Attributes:
        url: the URL in use, its password hidden (fit for a log line or a notice).

    Raises:
        ThreadDBError: the URL is not a usable database URL (or a SQLite file's folder cannot be made).
    """

    def __init__(self, url: str, *, busy_timeout: float = 5.0, connect_timeout: float = 5.0) -> None:
        """Prepare the engine; nothing connects yet."""
        self._memory = False
        try:
            parsed = make_url(url)
            if parsed.drivername in ("postgresql", "postgres"):
                parsed = parsed.set(drivername="postgresql+psycopg")
            self._sqlite = parsed.get_backend_name() == "sqlite"
            self.url = parsed.render_as_string(hide_password=True)
            self._engine = self._create_engine(parsed, busy_timeout, connect_timeout)
        except (ArgumentError, SQLAlchemyError, ImportError, ValueError, OSError) as exc:
            raise ThreadDBError(f"thread database: unusable URL ({type(exc).__name__}: {exc})") from exc
        self._lock = threading.RLock()
        self._ready = False
        self._known: OrderedDict[tuple[str, str], _Known] = OrderedDict()  # per thread, least recently used first
        self._damaged: set[tuple[str, str]] = set()  # threads whose rows did not parse: rewrite them whole
        self._last_stamp = datetime.min.replace(tzinfo=UTC)

    def _create_engine(self, url: Any, busy_timeout: float, connect_timeout: float) -> Engine:
        if not self._sqlite:
            args = {"connect_timeout": max(2, round(connect_timeout))} if url.get_backend_name() == "postgresql" else {}
            return create_engine(url, pool_pre_ping=True, connect_args=args)
        database = url.database or ""
        self._memory = database in ("", ":memory:") or database.startswith("file::memory:")
        if not self._memory:
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": busy_timeout, "check_same_thread": False},
                               **({"poolclass": StaticPool} if self._memory else {}))
        memory = self._memory

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # transactions are begun below, not by the driver
            cursor = dbapi_connection.cursor()
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            # a write takes the lock at BEGIN, so it waits (busy timeout) instead of failing to upgrade
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("ic_write") else "BEGIN")

        return engine

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for tests and tools; the tables are in this module)."""
        return self._engine

    def close(self) -> None:
        """Close every pooled connection (the ThreadDB can still be used: it reconnects)."""
        self._engine.dispose()

    def __enter__(self) -> ThreadDB:
        """Use as a context manager: closed on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the connections."""
        self.close()

    # -- plumbing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self, what: str, *, write: bool = False) -> Iterator[Connection]:
        """A transaction, every failure turned into ThreadDBError."""
        self.ensure_schema()
        with self._guard(what), self._serial(write), self._engine.connect() as conn:
            if write:
                conn.execution_options(ic_write=True)
            elif not self._sqlite:
                # one snapshot for the thread row and its messages
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    def _serial(self, write: bool) -> contextlib.AbstractContextManager[Any]:
        # writes are serialized per ThreadDB (the digest cache follows the database);
        # an in-memory SQLite database is one shared connection: everything is serialized
        return self._lock if write or (self._sqlite and self._memory) else contextlib.nullcontext()

    @contextlib.contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        try:
            yield
        except ThreadDBError:
            raise
        except RecordError as exc:
            raise ThreadDBError(f"thread database: could not {what}: {exc}") from exc
        except SQLAlchemyError as exc:
            raise ThreadDBError(f"thread database: could not {what}: {_short(exc)}") from exc
        except (ValueError, TypeError, KeyError) as exc:  # a JSON column that does not decode, a wrong shape
            raise ThreadDBError(f"thread database: could not {what}: a row does not parse ({exc})") from exc

    def _stamp(self) -> datetime:
        """Now (UTC), strictly after every earlier stamp of this ThreadDB: saves order newest first."""
        now = datetime.now(UTC)
        with self._lock:
            if now <= self._last_stamp:
                now = self._last_stamp + timedelta(microseconds=1)
            self._last_stamp = now
        return now

    def ensure_schema(self) -> None:
        """Create the tables if they are missing and check the schema version (idempotent).

        Called by every other method; call it at start-up to learn early that the database works.

        Raises:
            ThreadDBError: the database is unreachable or locked, or its schema is newer than this code.
        """
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            with self._guard("create the tables"), self._engine.connect() as conn:
                conn.execution_options(ic_write=True)
                with conn.begin():
                    if conn.dialect.name == "postgresql":
                        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
                    _metadata.create_all(conn)
                    _check_tables(conn)
                    found = conn.execute(select(schema_version_table.c.version)
                                         .where(schema_version_table.c.id == 1)).scalar()
                    if found is None:
                        conn.execute(schema_version_table.insert().values(id=1, version=SCHEMA_VERSION))
                    elif found > SCHEMA_VERSION:
                        raise ThreadDBError(f"thread database: its schema version {found} is newer than this code's "
                                            f"({SCHEMA_VERSION}); upgrade interrupt_chat")
                    elif found < SCHEMA_VERSION:  # pragma: no cover - no older schema exists yet
                        conn.execute(schema_version_table.update().where(schema_version_table.c.id == 1)
                                     .values(version=SCHEMA_VERSION))
            self._ready = True

    # -- threads -------------------------------------------------------------------------------

    def save(self, owner: str, session: AgentSession, *, title: str | None = None, revision: int | None = None,
             in_flight: bool = False) -> SaveResult:
        """Write ``session`` as ``owner``'s thread: its row, and only the messages that changed.

        The messages are compared, by digest, with what this ThreadDB last saved for the thread
        (read back from the ``hash`` column when another process wrote since, or after a
        restart); a save after one new message writes one message row whatever the history's
        length. No answer holding a masked field is written (S23).

        Args:
            owner: whose thread it is (e.g. a tab's client token and the chat's name).
            session: the thread; its ``thread_id`` is the key.
            title: rename the thread (else: the title given earlier, or the first user message).
            revision: write only if the thread is at this revision (0: only if it does not exist
                yet), else raise :class:`ThreadConflict`: the write is conditional
                (``UPDATE … WHERE revision = :seen``), so of two writers that read the same
                revision exactly one wins. None: last writer wins (retried on a race; for tools).
            in_flight: a run is claimed on the thread (:meth:`head` and :meth:`read` say so
                until a save without it).

        Returns:
            The message rows inserted, updated and deleted, and the thread's new revision (the
            session's ``revision`` is set to it too).

        Raises:
            ThreadConflict: ``revision`` is not the thread's (:class:`ThreadDeleted`: it was deleted,
                whatever ``revision`` says); nothing was written.
            ThreadDBError: the database failed; nothing of this save was written.
        """
        key = (owner, session.thread_id)
        known = self._known_for(key)
        record = session_record(session, messages=False)
        if in_flight:
            record["inFlight"] = True
        scanned = known.memo.scan(session.transcript)  # converts only the messages that changed
        for attempt in range(3):
            try:
                with self._lock:  # the write and what we remember of it change together
                    with self._transaction("save the thread", write=True) as conn:
                        result = self._save(conn, owner, session, record, scanned, title, known, revision)
                    known.stored, known.digests = known.next, [digest for _, digest in scanned]
                    self._damaged.discard(key)
                session.revision = result.revision
                return result
            except _Conflict as exc:
                known.stored = None
                if revision is not None or exc.deleted:
                    raise (ThreadDeleted if exc.deleted else ThreadConflict)(
                        f"thread {session.thread_id:.80} {'was deleted' if exc.deleted else 'changed'} "
                        f"since revision {revision}") from None
                log.info("thread %s was saved elsewhere meanwhile; saving again (%d)", session.thread_id, attempt + 1)
            except ThreadDBError:
                known.stored = None
                raise
        raise ThreadDBError(f"thread database: could not save thread {session.thread_id}: it kept changing")

    def _save(self, conn: Connection, owner: str, session: AgentSession, record: dict[str, Any],
              scanned: list[tuple[MessageView, str]], title: str | None, known: _Known,
              expected: int | None) -> SaveResult:
        key = (owner, session.thread_id)
        where = {"w_owner": owner, "w_thread": session.thread_id}
        digests = [digest for _, digest in scanned]
        damaged = key in self._damaged
        stored, old = _stored_row(conn, where, known, damaged, expected)
        now = self._stamp()
        values = _thread_values(record, now)
        renamed = title is not None and bool(title.strip())
        if renamed:
            values["title"], values["title_custom"] = _custom_title(title or ""), True
        else:  # the first user message, unless the thread was renamed (the UPDATE keeps a custom title)
            first_user = next((view for view, _ in scanned if view.role == "user"), None)
            values["default_title"] = _shorten(_plain_text(first_user.content), TITLE_CHARS) if first_user else ""
        identity = _pending_identity(values["pending"], values["meta"])
        if not values["pending_count"] or stored is None or not _still_owed(stored.pending, identity):
            values["pending_since"] = now if values["pending_count"] else None
        rewritten = 0
        if stored is None:
            if _tombstoned(conn, where):  # deleted: a late save (a run that ended after it) never resurrects it
                raise _Conflict(deleted=True)
            revision = 1
            if not renamed:
                values["title"], values["title_custom"] = values.pop("default_title"), False
            try:
                conn.execute(threads_table.insert().values(owner=owner, thread_id=session.thread_id, created_at=now,
                                                           revision=revision, **values))
            except IntegrityError as exc:  # another process created it meanwhile
                raise _Conflict from exc
        else:
            revision = stored.revision + 1
            statement = _UPDATE_THREAD if renamed else _UPDATE_THREAD_KEEPING_TITLE
            updated = conn.execute(statement, {**where, "w_revision": stored.revision, "revision": revision, **values})
            if updated.rowcount != 1:  # another writer saved (or deleted) the thread meanwhile: read it again
                raise _Conflict(deleted=_tombstoned(conn, where))
            if damaged:  # a row may differ from its digest: write every message again
                rewritten = conn.execute(_DELETE_MESSAGES_FROM, {**where, "w_seq": 0}).rowcount
        changed = [seq for seq in range(min(len(old), len(digests))) if old[seq] != digests[seq]]
        added = range(len(old), len(digests))
        if len(old) > len(digests):
            conn.execute(_DELETE_MESSAGES_FROM, {**where, "w_seq": len(digests)})
        if changed:
            conn.execute(_UPDATE_MESSAGE, [{**where, "w_seq": seq, **_message_row(session.transcript, *scanned[seq])}
                                           for seq in changed])
        if added:
            conn.execute(_INSERT_MESSAGE, [{"owner": owner, "thread_id": session.thread_id, "seq": seq,
                                            **_message_row(session.transcript, *scanned[seq])} for seq in added])
        known.next = _Stored(revision, identity)
        deleted = max(0, len(old) - len(digests)) + rewritten
        return SaveResult(inserted=len(added), updated=len(changed), deleted=deleted, revision=revision)

    def _known_for(self, key: tuple[str, str]) -> _Known:
        with self._lock:
            known = self._known.get(key)
            if known is None:
                known = self._known[key] = _Known()
                while len(self._known) > _CACHED_THREADS:
                    self._known.popitem(last=False)
            self._known.move_to_end(key)
            return known

    def load(self, owner: str, thread_id: str, client: AgentClient | None = None) -> AgentSession | None:
        """``owner``'s thread ``thread_id`` as a session, or None (no such thread for this owner).

        The session has no client unless ``client`` is given (see
        :func:`~interrupt_chat.agui.records.session_from_record`).

        Raises:
            ThreadDBError: the database failed, or the thread's rows do not parse.
        """
        stored = self.read(owner, thread_id, client)
        return stored.session if stored is not None else None

    def read(self, owner: str, thread_id: str, client: AgentClient | None = None) -> StoredThread | None:
        """``owner``'s thread as :meth:`load` reads it, with its revision and whether a run holds it.

        The session's ``revision`` is set to the revision read: pass it back to :meth:`save`.

        Raises:
            ThreadDBError: the database failed, or the thread's rows do not parse.
        """
        try:
            return self._load(owner, thread_id, client)
        except ThreadDBError as exc:
            with self._lock:
                self._known.pop((owner, thread_id), None)
                if isinstance(exc.__cause__, (RecordError, ValueError, TypeError, KeyError)):
                    self._damaged.add((owner, thread_id))  # a row does not parse: its next save writes every row
            raise

    def _load(self, owner: str, thread_id: str, client: AgentClient | None) -> StoredThread | None:
        t, m = threads_table, messages_table
        with self._transaction(f"load thread {thread_id:.80}") as conn:
            row = conn.execute(select(t).where((t.c.owner == owner) & (t.c.thread_id == thread_id))).first()
            if row is None:
                return None
            rows = conn.execute(select(m.c.body, m.c.hash).where((m.c.owner == owner) & (m.c.thread_id == thread_id))
                                .order_by(m.c.seq)).all()
            meta = row.meta if row.meta is not None else {}
            if not isinstance(meta, dict):
                raise RecordError(f"thread {thread_id:.80}: meta is not an object")
            in_flight = bool(meta.get("inFlight"))
            record = {**{k: v for k, v in meta.items()
                         if k != "inFlight" and (k in _META_KEYS or k not in _COLUMN_KEYS)},
                      "version": row.version, "threadId": row.thread_id, "messages": [r.body for r in rows],
                      "state": row.state, "pending": row.pending, "answers": row.answers,
                      "lastRunId": row.last_run_id, "error": row.error}
            session = session_from_record(record, client)
        session.revision = row.revision
        known = self._known_for((owner, thread_id))
        known.memo.scan(session.transcript)  # so the next save converts only what changes after this load
        with self._lock:
            known.stored = _Stored(row.revision, _pending_identity(row.pending, row.meta))
            known.digests = [r.hash for r in rows]
        return StoredThread(session, row.revision, in_flight, _aware(row.updated_at))

    def head(self, owner: str, thread_id: str) -> ThreadHead:
        """The thread's revision (0: none), whether it was deleted and whether a run holds it: one small read.

        What a tab checks before it acts on its copy (docs/decisions/0016).

        Raises:
            ThreadDBError: the database failed.
        """
        where = {"w_owner": owner, "w_thread": thread_id}
        with self._transaction("read the thread's revision") as conn:
            row = conn.execute(select(threads_table.c.revision, threads_table.c.meta, threads_table.c.updated_at)
                               .where(_W_THREAD), where).first()
            if row is None:
                return ThreadHead(0, _tombstoned(conn, where))
        meta = row.meta if isinstance(row.meta, dict) else {}
        return ThreadHead(row.revision, False, bool(meta.get("inFlight")), _aware(row.updated_at))

    def threads(self, owner: str, search: str | None = None) -> list[ThreadSummary]:
        """``owner``'s threads, newest (last saved) first.

        Args:
            owner: whose threads.
            search: keep the threads whose title or a user/assistant message contains this text
                (case-insensitive; ``%`` and ``_`` are plain characters). None or blank: all.

        Raises:
            ThreadDBError: the database failed.
        """
        t, m = threads_table, messages_table
        query = (select(t.c.thread_id, t.c.title, t.c.created_at, t.c.updated_at, t.c.pending_count)
                 .where(t.c.owner == owner))
        needle = (search or "").strip()
        if needle:
            in_messages = exists().where((m.c.owner == t.c.owner) & (m.c.thread_id == t.c.thread_id)
                                         & m.c.text.icontains(needle, autoescape=True))
            query = query.where(or_(t.c.title.icontains(needle, autoescape=True), in_messages))
        query = query.order_by(t.c.updated_at.desc(), t.c.thread_id)
        with self._transaction("list the threads") as conn:
            rows = conn.execute(query).all()
        return [ThreadSummary(r.thread_id, r.title, _aware(r.created_at), _aware(r.updated_at), r.pending_count > 0,
                              r.pending_count) for r in rows]

    def rename(self, owner: str, thread_id: str, title: str) -> bool:
        """Give ``owner``'s thread a title; a blank one brings back the default (the first user message).

        Returns:
            False when the owner has no such thread.

        Raises:
            ThreadDBError: the database failed.
        """
        t, m = threads_table, messages_table
        where = (t.c.owner == owner) & (t.c.thread_id == thread_id)
        with self._transaction("rename the thread", write=True) as conn:
            if title.strip():
                values = {"title": _custom_title(title), "title_custom": True}
            else:
                first = conn.execute(select(m.c.text).where((m.c.owner == owner) & (m.c.thread_id == thread_id)
                                                            & (m.c.role == "user")).order_by(m.c.seq).limit(1)).scalar()
                values = {"title": _shorten(first or "", TITLE_CHARS), "title_custom": False}
            return conn.execute(t.update().where(where).values(**values)).rowcount == 1

    def delete(self, owner: str, thread_id: str) -> bool:
        """Delete ``owner``'s thread and its messages (its audit entries stay: the trail is append-only).

        The thread leaves a tombstone: no later save (a run that ends after the delete, a stale tab)
        brings it back (:class:`ThreadDeleted`).

        Returns:
            False when the owner has no such thread.

        Raises:
            ThreadDBError: the database failed.
        """
        t, m = threads_table, messages_table
        with self._transaction("delete the thread", write=True) as conn:
            conn.execute(m.delete().where((m.c.owner == owner) & (m.c.thread_id == thread_id)))
            found = conn.execute(t.delete().where((t.c.owner == owner) & (t.c.thread_id == thread_id))).rowcount == 1
            if not _tombstoned(conn, {"w_owner": owner, "w_thread": thread_id}):  # a late save never resurrects it
                conn.execute(tombstones_table.insert().values(owner=owner, thread_id=thread_id,
                                                              deleted_at=self._stamp()))
        with self._lock:
            self._known.pop((owner, thread_id), None)
        return found

    def waiting(self, owner: str) -> list[PendingItem | WaitingToolCall]:
        """What waits for ``owner`` across their threads, newest thread first, from one query.

        Each thread's pending interrupts (protocol order), then its frontend-tool calls waiting for
        the person (S27). A pending set that does not parse is skipped with a warning (it still
        raises :class:`ThreadDBError` from :meth:`load`).

        Raises:
            ThreadDBError: the database failed.
        """
        t = threads_table
        query = (select(t.c.thread_id, t.c.title, t.c.pending, t.c.meta, t.c.pending_since)
                 .where((t.c.owner == owner) & (t.c.pending_count > 0))
                 .order_by(t.c.pending_since.desc(), t.c.thread_id))
        with self._transaction("list what waits for the person") as conn:
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

    def pending(self, owner: str) -> list[PendingItem]:
        """Every pending interrupt across ``owner``'s threads: the newest set first (:meth:`waiting`)."""
        return [item for item in self.waiting(owner) if isinstance(item, PendingItem)]

    def tool_waits(self, owner: str) -> list[WaitingToolCall]:
        """Every frontend-tool call waiting for the person across ``owner``'s threads (:meth:`waiting`)."""
        return [item for item in self.waiting(owner) if isinstance(item, WaitingToolCall)]

    # -- the audit trail -----------------------------------------------------------------------

    def record_decision(self, owner: str, thread_id: str, run_id: str | None, interrupt_id: str | None,
                        reason: str | None, action: str, payload: Any = None, schema: Any = None) -> DecisionRecord:
        """Append what the person decided about one interrupt to the audit trail.

        Args:
            owner: whose thread.
            thread_id: the thread.
            run_id: the run that raised the interrupt (the resume's ``parentRunId``).
            interrupt_id: the interrupt's id (None or "" for a legacy interrupt).
            reason: the interrupt's ``reason``.
            action: one of :data:`DECISION_ACTIONS`.
            payload: the answer; every masked field (per ``schema``) is stored as :data:`MASKED` (S23).
            schema: the interrupt's ``responseSchema``.

        Returns:
            The entry as stored.

        Raises:
            ValueError: ``action`` is not one of :data:`DECISION_ACTIONS`.
            ThreadDBError: the database failed.
        """
        if action not in DECISION_ACTIONS:
            raise ValueError(f"unknown decision action {action!r} (expected one of {', '.join(DECISION_ACTIONS)})")
        masked = mask_secrets(payload, schema)
        at = self._stamp()
        with self._transaction("record the decision", write=True) as conn:
            key = conn.execute(decisions_table.insert().values(
                owner=owner, thread_id=thread_id, run_id=run_id, interrupt_id=interrupt_id or "", reason=reason,
                action=action, payload=masked, at=at)).inserted_primary_key
        if key is None:  # pragma: no cover - every backend here returns the new id
            raise ThreadDBError("thread database: the audit entry got no id")
        return DecisionRecord(int(key[0]), thread_id, run_id, interrupt_id or "", reason, action, masked, at)

    def decisions(self, owner: str, thread_id: str | None = None) -> list[DecisionRecord]:
        """``owner``'s audit trail (one thread's, when given), oldest first.

        Raises:
            ThreadDBError: the database failed.
        """
        d = decisions_table
        query = select(d).where(d.c.owner == owner)
        if thread_id is not None:
            query = query.where(d.c.thread_id == thread_id)
        with self._transaction("read the audit trail") as conn:
            rows = conn.execute(query.order_by(d.c.id)).all()
        return [DecisionRecord(r.id, r.thread_id, r.run_id, r.interrupt_id, r.reason, r.action, r.payload,
                               _aware(r.at)) for r in rows]

    def export_jsonl(self, owner: str) -> str:
        """``owner``'s audit trail as JSON Lines (one :meth:`DecisionRecord.to_json` object a line).

        Raises:
            ThreadDBError: the database failed.
        """
        return "".join(json.dumps(d.to_json(), ensure_ascii=False) + "\n" for d in self.decisions(owner))


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
    stored = _Stored(row.revision, _pending_identity(row.pending, row.meta)) if row else None
    if expected is not None and (stored.revision if stored else 0) != expected:
        raise _Conflict(deleted=_tombstoned(conn, where))
    return stored, [] if stored is None or damaged else list(conn.execute(_SELECT_HASHES, where).scalars())


def _tombstoned(conn: Connection, where: dict[str, Any]) -> bool:
    tombstone = tombstones_table
    return conn.execute(select(tombstone.c.thread_id).where(
        (tombstone.c.owner == where["w_owner"]) & (tombstone.c.thread_id == where["w_thread"]))).first() is not None


@dataclass(frozen=True)
class _Stored:
    """What a save needs to know of the thread row it replaces."""

    revision: int
    pending: tuple[Any, frozenset[str]]  # _pending_identity of the stored row


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
_SELECT_THREAD = select(threads_table.c.revision, threads_table.c.pending, threads_table.c.meta).where(_W_THREAD)
_SELECT_HASHES = select(messages_table.c.hash).where(_W_MESSAGES).order_by(messages_table.c.seq)
_UPDATE_THREAD = threads_table.update().where(_W_THREAD & (threads_table.c.revision == bindparam("w_revision")))
# a rename (here or in another process) does not move the revision: the title is kept in SQL when it is custom
_UPDATE_THREAD_KEEPING_TITLE = _UPDATE_THREAD.values(
    title=case((threads_table.c.title_custom, threads_table.c.title), else_=bindparam("default_title")))
_DELETE_MESSAGES_FROM = messages_table.delete().where(_W_MESSAGES & (messages_table.c.seq >= bindparam("w_seq")))
_UPDATE_MESSAGE = messages_table.update().where(_W_MESSAGES & (messages_table.c.seq == bindparam("w_seq")))
_INSERT_MESSAGE = messages_table.insert()


_COLUMN_KEYS = frozenset({"version", "threadId", "messages", "state", "pending", "answers", "lastRunId", "error"})


def _message_row(transcript: Transcript, view: MessageView, digest: str) -> dict[str, Any]:
    body = view_message(transcript, view)
    if body is None:  # pragma: no cover - a message cannot turn UI-only; only a concurrent rewrite could do it
        raise ThreadDBError(f"thread database: message {view.id:.80} changed while the thread was being saved")
    if message_digest(body) != digest:  # changed since the scan (a run still streaming): write what it is now
        digest = message_digest(body)
    role = str(body.get("role", ""))
    return {"message_id": str(body.get("id", "")), "role": role, "body": body,
            "text": _plain_text(_content_text(body.get("content"))) if role in _TEXT_ROLES else "", "hash": digest}


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part["text"] for part in content
                        if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _plain_text(value: str) -> str:
    """Text any database stores: no NUL (PostgreSQL refuses it), no lone surrogate."""
    return value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _shorten(value: str, limit: int) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def _custom_title(title: str) -> str:
    return _shorten(_plain_text(title), CUSTOM_TITLE_CHARS)


def _thread_values(record: dict[str, Any], now: datetime) -> dict[str, Any]:
    """A session record's ``threads`` columns (title and ``pending_since`` aside)."""
    pending, meta = record["pending"], {k: record[k] for k in _META_KEYS if k in record}
    return {"updated_at": now, "version": RECORD_VERSION, "state": record["state"], "pending": pending,
            "answers": record["answers"], "meta": meta, "last_run_id": record["lastRunId"], "error": record["error"],
            "pending_count": _pending_count(pending, meta)}


def _person_waits(meta: Any) -> list[dict[str, Any]]:
    """The frontend-tool calls in ``meta`` that wait for a person (not for a server-side handler, S30)."""
    waits = meta.get("toolWaits") if isinstance(meta, dict) else None
    return [w for w in waits or [] if isinstance(w, dict) and not w.get("handled")]


def _pending_count(pending: dict[str, Any] | None, meta: Any = None) -> int:
    """How many answers the person owes: each interrupt (a legacy one counts one) and each waiting tool call."""
    interrupts = (0 if pending is None else 1 if pending.get("kind") == "legacy"
                  else len(pending.get("interrupts") or []))
    return interrupts + len(_person_waits(meta))


def _pending_identity(pending: Any, meta: Any = None) -> tuple[Any, frozenset[str]]:
    """What the person owes.

    The pending set (its run, its interrupts' ids or legacy value) and the waiting tool calls' ids.
    """
    waits = frozenset(str(w.get("toolCallId")) for w in _person_waits(meta))
    if not isinstance(pending, dict):
        return None, waits
    run_id = pending.get("runId", pending.get("run_id"))
    interrupts = pending.get("interrupts") or []
    ids = [i.get("id") for i in interrupts if isinstance(i, dict)]
    raw = pending.get("rawValue", pending.get("raw_value"))
    return (pending.get("kind"), run_id, ids, json.dumps(raw, sort_keys=True, default=str)), waits


def _still_owed(before: tuple[Any, frozenset[str]], now: tuple[Any, frozenset[str]]) -> bool:
    """Nothing new is asked: the same pending set, and no tool call that was not waiting before.

    The thread then keeps the time it started waiting (answering one call of several does not move it).
    """
    return before[0] == now[0] and now[1] <= before[1]


def _pending_items(thread_id: str, title: str, pending: Any, raised_at: datetime | None) -> list[PendingItem]:
    if pending is None:  # only tool calls wait
        return []
    if not isinstance(pending, dict):
        raise ValueError("the pending set is not an object")
    if pending.get("kind") == "legacy":
        event = pending.get("event")
        value = event.get("value") if isinstance(event, dict) else pending.get("rawValue", pending.get("raw_value"))
        reason, message = "", None
        if isinstance(value, dict):
            reason = str(value.get("reason") or "")
            found = value.get("message") or value.get("question")
            message = str(found) if found is not None else None
        elif isinstance(value, str):
            message = value
        return [PendingItem(thread_id, title, "", reason, message, None, raised_at)]
    items = []
    for interrupt in pending["interrupts"]:
        message = interrupt.get("message")
        items.append(PendingItem(thread_id, title, str(interrupt["id"]), str(interrupt.get("reason") or ""),
                                 str(message) if message is not None else None,
                                 parse_expiry(interrupt.get("expiresAt")), raised_at))
    return items


def _aware(moment: datetime | None) -> Any:
    """SQLite gives naive datetimes back: every stored time is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _short(exc: BaseException) -> str:
    """A SQLAlchemy error's first line, without the SQL statement and parameters it appends."""
    original = getattr(exc, "orig", None)
    message = str(original if original is not None else exc).strip().splitlines()
    return f"{type(original or exc).__name__}: {message[0] if message else ''}"[:300]
