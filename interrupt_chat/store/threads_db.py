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

The tables are in :mod:`interrupt_chat.store.schema`, the records and exceptions in
:mod:`~interrupt_chat.store.types`, the row conversions in :mod:`~interrupt_chat.store.rows` and the
statements in :mod:`~interrupt_chat.store.sql`; this module is the :class:`ThreadDB` that uses them. The
audit trail is in :mod:`~interrupt_chat.store.audit`, the inbox's read in :mod:`~interrupt_chat.store.inbox`,
and the newer tables (policies, feedback, branches, files) have modules of their own in the store.

Every method is synchronous and thread-safe, and raises :class:`ThreadDBError` (and only that, for
database trouble) when the database cannot be reached, is locked, or holds a row that does not
parse; callers show a notice and keep working in memory. The URL is any SQLAlchemy URL;
``postgresql://`` (and ``postgres://``) use psycopg 3. See :func:`default_db_url` for the default.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError

from ..agui.records import RecordError, session_from_record, session_record
from ..agui.session import AgentSession
from ..agui.transcript import MessageView
from ..agui.transport import AgentClient
from . import audit as store_audit
from . import branches as store_branches
from . import export as store_export
from . import feedback as store_feedback
from . import files as store_files
from . import inbox as store_inbox
from . import listing as store_listing
from .audit import DECIDED_BY, DECISION_ACTIONS
from .batch import Batches, WriteBatch
from .engine import DEFAULT_DATA_DIR, create, default_db_url
from .feedback import Feedback
from .masking import MASKED, mask_secrets
from .rows import (
    _COLUMN_KEYS,
    _META_KEYS,
    TITLE_CHARS,
    _aware,
    _custom_title,
    _message_row,
    _pending_identity,
    _plain_text,
    _short,
    _shorten,
    _still_owed,
    _thread_values,
)
from .schema import messages_table, schema_version_table, threads_table, tombstones_table  # noqa: F401 - for tests
from .sql import (
    _DELETE_MESSAGES_FROM,
    _INSERT_MESSAGE,
    _INSERT_THREAD,
    _SELECT_HEAD,
    _UPDATE_MESSAGE,
    _UPDATE_THREAD,
    _UPDATE_THREAD_KEEPING_TITLE,
    DB_URL_ENV,
    _Conflict,
    _Known,
    _prepare_schema,
    _Stored,
    _stored_of,
    _stored_row,
    _tombstoned,
)
from .types import (
    DecisionRecord,
    PendingItem,
    SaveResult,
    StoredThread,
    ThreadConflict,
    ThreadDBError,
    ThreadDeleted,
    ThreadHead,
    ThreadSummary,
    WaitingToolCall,
)

__all__ = [
    "DB_URL_ENV", "DECIDED_BY", "DECISION_ACTIONS", "DEFAULT_DATA_DIR", "MASKED", "SCHEMA_VERSION", "DecisionRecord",
    "PendingItem", "SaveResult", "StoredThread", "ThreadConflict", "ThreadDB", "ThreadDBError", "ThreadDeleted",
    "ThreadHead", "ThreadSummary", "WaitingToolCall", "default_db_url", "mask_secrets",
]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 6  # 2: interrupt_chat_decisions.decided_by; 3: its detail, the policies table; 4: people (requests);
# 5: rules' conditions, expiry and tool fingerprint, the pauses table; 6: the audit's hash chain
_CACHED_THREADS = 1024  # threads whose message digests a ThreadDB keeps in memory (least recently saved out)


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
        try:
            parsed = make_url(url)
            if parsed.drivername in ("postgresql", "postgres"):
                parsed = parsed.set(drivername="postgresql+psycopg")
            self._sqlite = parsed.get_backend_name() == "sqlite"
            self.url = parsed.render_as_string(hide_password=True)
            self._engine, self._memory = create(parsed, busy_timeout, connect_timeout)
        except (ArgumentError, SQLAlchemyError, ImportError, ValueError, OSError) as exc:
            raise ThreadDBError(f"thread database: unusable URL ({type(exc).__name__}: {exc})") from exc
        self._lock = threading.RLock()
        self._ready = False
        self._known: OrderedDict[tuple[str, str], _Known] = OrderedDict()  # per thread, least recently used first
        self._damaged: set[tuple[str, str]] = set()  # threads whose rows did not parse: rewrite them whole
        self._batches = Batches()  # the saves that share a transaction (store.batch)
        self._last_stamp = datetime.min.replace(tzinfo=UTC)
        self.public_name: Callable[[str], str] | None = None  # how the audit names an owner key (set by the app)

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

    @property
    def batches(self) -> bool:
        """Whether saves share transactions (:meth:`batch`): on SQLite, whose single writer they wait for."""
        return self._sqlite

    @contextlib.contextmanager
    def batch(self) -> Iterator[WriteBatch]:
        """The saves this thread makes in the block share one transaction, committed when it ends.

        If the block fails, it is rolled back and what the saves left in memory is forgotten
        (:mod:`~interrupt_chat.store.batch`); each save then runs again alone (:mod:`~interrupt_chat.store.pools`).
        """
        with self._lock:
            opened: WriteBatch | None = None
            try:
                with self._transaction("save the threads", write=True) as conn, self._batches.opened(conn) as opened:
                    yield opened
            except BaseException:
                if opened is not None:
                    opened.forget(self._known)
                raise

    @contextlib.contextmanager
    def _transaction(self, what: str, *, write: bool = False) -> Iterator[Connection]:
        """A transaction, every failure turned into ThreadDBError (in a batch: the batch's)."""
        self.ensure_schema()
        batch = self._batches.current
        if batch is not None:
            with self._guard(what), Batches.joined(batch) as conn:
                yield conn
            return
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
                    _prepare_schema(conn, SCHEMA_VERSION)
            self._ready = True

    # -- threads -------------------------------------------------------------------------------

    def save(self, owner: str, session: AgentSession, *, revision: int, title: str | None = None,
             in_flight: bool = False, branches: store_branches.BranchWrite | None = None) -> SaveResult:
        """Write ``session`` as ``owner``'s thread if it is at ``revision``: its row, and only the changed messages.

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
                revision exactly one wins. Required: a write that ignores what others wrote is
                :meth:`overwrite`.
            in_flight: a run is claimed on the thread (:meth:`head` and :meth:`read` say so
                until a save without it).
            branches: hidden versions to store and drop in the same transaction (an edit, a
                regenerated answer, a switch of versions: :mod:`interrupt_chat.agui.branches`).

        Returns:
            The message rows inserted, updated and deleted, and the thread's new revision (the
            session's ``revision`` is set to it too).

        Raises:
            ThreadConflict: ``revision`` is not the thread's (:class:`ThreadDeleted`: it was deleted,
                whatever ``revision`` says); nothing was written.
            ThreadDBError: the database failed; nothing of this save was written.
        """
        if not isinstance(revision, int):  # None once meant "last writer wins": that is overwrite() now
            raise TypeError("ThreadDB.save needs the revision the copy was read at; overwrite() ignores it")
        return self._write(owner, session, title, revision, in_flight, branches)

    def overwrite(self, owner: str, session: AgentSession, *, title: str | None = None, in_flight: bool = False,
                  branches: store_branches.BranchWrite | None = None) -> SaveResult:
        """Write ``session`` as ``owner``'s thread whatever was written since: the last writer wins.

        For tools, imports and tests that own the thread outright; never for a tab's or a run's
        copy, which :meth:`save` writes conditionally. Arguments, result and errors as :meth:`save`
        (only :class:`ThreadDeleted` of the conflicts: a deleted thread is never brought back).
        """
        return self._write(owner, session, title, None, in_flight, branches)

    def _write(self, owner: str, session: AgentSession, title: str | None, revision: int | None, in_flight: bool,
               branches: store_branches.BranchWrite | None) -> SaveResult:
        key, before = (owner, session.thread_id), session.revision
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
                        if branches is not None:
                            store_branches.write(conn, owner, session.thread_id, branches, self._stamp())
                    known.stored, known.digests = known.next, [digest for _, digest in scanned]
                    if (batch := self._batches.current) is not None:
                        batch.saved(session, before, self._damaged, key)
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
                conn.execute(_INSERT_THREAD, {"owner": owner, "thread_id": session.thread_id, "created_at": now,
                                              "revision": revision, **values})
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
        known.next = _Stored(revision, identity, bool(record.get("inFlight")),
                             values.get("pending_since", stored.since if stored else None))
        deleted = max(0, len(old) - len(digests)) + rewritten
        return SaveResult(inserted=len(added), updated=len(changed), deleted=deleted, revision=revision)

    def _known_for(self, key: tuple[str, str]) -> _Known:
        if (batch := self._batches.current) is not None:
            batch.touched.add(key)
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
            known.stored = _stored_of(row)
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
            row = conn.execute(_SELECT_HEAD, where).first()
            if row is None:
                return ThreadHead(0, _tombstoned(conn, where))
        meta = row.meta if isinstance(row.meta, dict) else {}
        return ThreadHead(row.revision, False, bool(meta.get("inFlight")), _aware(row.updated_at),
                          _aware(row.pending_since))

    def known_head(self, owner: str, thread_id: str) -> ThreadHead | None:
        """The thread's head as this process last wrote or read it (no read: None when not remembered).

        Current only while the database still holds that revision, which nothing here checks: a
        conditional save at it does (docs/decisions/0032). Lock-free: one dict lookup, on the loop.
        """
        known = self._known.get((owner, thread_id))
        stored = known.stored if known is not None else None
        return ThreadHead(stored.revision, False, stored.in_flight, None, stored.since) if stored else None

    def threads(self, owner: str, search: str | None = None) -> list[ThreadSummary]:
        """``owner``'s threads, newest first; ``search`` keeps the matching ones (:func:`.store.listing.threads`)."""
        return store_listing.threads(self, owner, search)

    def rename(self, owner: str, thread_id: str, title: str) -> bool:
        """Give ``owner``'s thread a title; a blank one brings back the default (:func:`.store.listing.rename`)."""
        return store_listing.rename(self, owner, thread_id, title)

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
            store_branches.drop_thread(conn, owner, thread_id)
            store_files.drop_thread(conn, owner, thread_id)
            found = conn.execute(t.delete().where((t.c.owner == owner) & (t.c.thread_id == thread_id))).rowcount == 1
            if not _tombstoned(conn, {"w_owner": owner, "w_thread": thread_id}):  # a late save never resurrects it
                conn.execute(tombstones_table.insert().values(owner=owner, thread_id=thread_id,
                                                              deleted_at=self._stamp()))
        with self._lock:
            self._known.pop((owner, thread_id), None)
        return found

    def waiting(self, owner: str) -> list[PendingItem | WaitingToolCall]:
        """What waits for ``owner`` across their threads, newest thread first (:func:`.store.inbox.waiting`)."""
        return store_inbox.waiting(self, owner)

    def pending(self, owner: str) -> list[PendingItem]:
        """Every pending interrupt across ``owner``'s threads: the newest set first (:meth:`waiting`)."""
        return [item for item in self.waiting(owner) if isinstance(item, PendingItem)]

    def tool_waits(self, owner: str) -> list[WaitingToolCall]:
        """Every frontend-tool call waiting for the person across ``owner``'s threads (:meth:`waiting`)."""
        return [item for item in self.waiting(owner) if isinstance(item, WaitingToolCall)]

    # -- the audit trail -----------------------------------------------------------------------

    def record_decision(self, owner: str, thread_id: str, run_id: str | None, interrupt_id: str | None,
                        reason: str | None, action: str, payload: Any = None, schema: Any = None,
                        by: str = "person", detail: dict[str, Any] | None = None, *, tool: str = "",
                        decider: str = "", waited_ms: int | None = None) -> DecisionRecord:
        """Append what was decided about one interrupt to the audit trail (:func:`.store.audit.record`).

        Raises:
            ValueError: an unknown ``action`` or ``by``.
            ThreadDBError: the database failed.
        """
        return store_audit.record(self, owner, thread_id, run_id, interrupt_id, reason, action, payload, schema,
                                  by, detail, tool=tool, decider=decider, waited_ms=waited_ms)

    def decisions(self, owner: str, thread_id: str | None = None) -> list[DecisionRecord]:
        """``owner``'s audit trail (one thread's, when given), oldest first (:func:`.store.audit.decisions`)."""
        return store_audit.decisions(self, owner, thread_id)

    def feedback(self, owner: str) -> list[Feedback]:
        """``owner``'s ratings of the agent's answers (thumbs up / down, comment), oldest first.

        Raises:
            ThreadDBError: the database failed.
        """
        return store_feedback.of_owner(self, owner)

    def export(self, owner: str, thread_id: str, fmt: str = "markdown") -> str | None:
        """One of ``owner``'s threads as a ``"markdown"`` or ``"json"`` file; None if unknown (:mod:`.store.export`)."""
        files = store_export.export(self, owner, thread_id, (fmt,))
        return None if files is None else files[fmt]

    def export_jsonl(self, owner: str) -> str:
        """``owner``'s audit trail as JSON Lines, oldest first: decisions, rules, feedback (:mod:`.store.audit`)."""
        return store_audit.export_jsonl(self, owner)
