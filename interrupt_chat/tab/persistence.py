"""An owner's threads in the thread database, called explicitly by the chat (never while publishing).

The database is :class:`~interrupt_chat.store.threads_db.ThreadDB` (``INTERRUPT_CHAT_DB_URL``, else the
Reflex app's ``db_url``, else ``.interrupt_chat/threads.db``; ``off`` keeps threads in memory
only). Threads are loaded inside the state lock when a state first needs them; writes happen after
the lock is released. Database trouble is logged once per failure, shown as one notice, and never
breaks the chat: it keeps working in memory.
"""

from __future__ import annotations

import enum
import inspect
import json
import logging
import os
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import reflex as rx

from ..agui import AgentSession, Pending
from ..model.people import ANONYMOUS
from ..store import policies, pools
from ..store.branches import BranchWrite
from ..store.outage import Outage
from ..store.threads_db import (
    DB_URL_ENV,
    StoredThread,
    ThreadConflict,
    ThreadDB,
    ThreadDBError,
    ThreadDeleted,
    default_db_url,
)
from ..workers import runs, sync
from ..workers.proxy_reads import tab_token
from . import identity

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = [
    "CONFLICT_NOTICE",
    "DB_URL_ENV",
    "ORPHANED_MESSAGE",
    "UNAVAILABLE_NOTICE",
    "Commit",
    "Fresh",
    "carry_answers",
    "check_soon",
    "commit",
    "database",
    "db_call",
    "db_read",
    "driven",
    "end_orphaned",
    "forget",
    "load_thread",
    "owner_of",
    "refresh",
    "reload",
    "restore",
    "run_key",
    "save",
    "set_identity",
    "together",
    "unavailable",
]

T = TypeVar("T")

log = logging.getLogger(__name__)

UNAVAILABLE_NOTICE = ("Threads cannot be saved right now. This chat keeps working, and saves again once the "
                      "database is back; until then a server restart would lose what is new.")
CONFLICT_NOTICE = "This thread changed in another window meanwhile; reload to see where it stands."
ORPHANED_MESSAGE = "The server handling this answer stopped; send your message again."
END_SAVE_WAIT_SECONDS = 10.0  # what an action waits at most for this process's save of a run's end (hurried)
CLAIM_GRACE_SECONDS = 5.0  # a run's claim this young is not read as orphaned: its driver registers right after it

_db: ThreadDB | None = None
_db_url: str | None = None  # the URL _db was made for (None: not made yet)
_outage = Outage()
_checked = False
_db_lock = threading.Lock()


def database() -> ThreadDB | None:
    """The process's thread database (opened lazily); None when ``INTERRUPT_CHAT_DB_URL=off``."""
    global _db, _db_url
    configured = os.environ.get(DB_URL_ENV, "").strip()
    if configured.lower() == "off":
        return None
    url = configured or default_db_url(getattr(rx.config.get_config(), "db_url", None))
    with _db_lock:
        if _db_url != url:
            if _db is not None:
                _db.close()
            global _outage
            _outage, _db_url = Outage(), url
            try:
                _db = ThreadDB(url)
                from .server_secret import public_person  # (it reads the secret through this module)

                _db.public_name = public_person  # the audit names people so, never by key
            except ThreadDBError as exc:  # not a database URL at all: said once, threads stay in memory
                _db = None
                log.error("%s; threads are kept in memory only (set %s to a database URL, or 'off')", exc,
                          DB_URL_ENV)
        return _db


def check_soon() -> None:
    """Open the thread database in the background, once per process.

    A wrong URL or an unreachable server is then reported at start-up (once), not at the first
    person's first action.
    """
    global _checked
    with _db_lock:
        if _checked:
            return
        _checked = True

    def check() -> None:
        try:
            db = database()
            if db is not None:
                db.ensure_schema()
        except ThreadDBError as exc:
            _outage.failed(exc)
        except Exception:  # a check in a daemon thread: report, never raise
            log.exception("thread database: the start-up check failed")
        else:
            if db is not None:
                log.info("thread database: %s", db.url)

    threading.Thread(target=check, name="interrupt_chat-db-check", daemon=True).start()


FORCED_OWNER = runs.FORCED_OWNER  # the owner key a server-side answer acts for (interrupt_chat.approvals.headless)


async def owner_of(chat: ChatLike) -> str:
    """The owner key of a chat: its owner (``chat(owner=...)``, else the browser's identity) and the chat's name.

    "" when the tab has nobody: the app's function gave None (logged out), or the tab's socket has
    no identity (another origin). A task on a tab whose socket this process does not know (it
    closed, or lives on another worker) keeps the owner the state already served (:mod:`.identity`).
    """
    if FORCED_OWNER.get():
        return FORCED_OWNER.get()
    person = identity.person_of(chat)
    if person is None:
        return chat._owner_key
    if person == "":
        return ""  # a socket from another origin: nobody, whatever the app's login says
    fn = chat.__class__.owner_fn  # (type() of a StateProxy is the proxy)
    owner = fn(chat) if fn is not None else chat.owner()
    if inspect.isawaitable(owner):
        owner = await owner
    browser = owner is ANONYMOUS or fn is None
    if owner is ANONYMOUS:  # the app's login has nobody: this tab's browser identity (as without owner=)
        owner = person
    if not owner:
        return ""
    key = f"{owner}|{chat.get_full_name()}"
    from . import adoption  # (it reads the database through this module)

    legacy = identity.legacy_of(chat) if browser else ""
    if legacy and (old := f"{legacy}|{chat.get_full_name()}") not in adoption.adopted_keys:
        await adoption.adopt(old, key)
    if chat.__class__.legacy_names and key not in adoption.moved_keys:
        await adoption.move_legacy(chat, str(owner), key)
    return key


async def db_call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """A database call on the writer thread: a locked SQLite file or an unreachable server never stalls the loop.

    While the database is down, calls fail at once until the next try is due, and the outage is
    logged once (:class:`~interrupt_chat.store.outage.Outage`). Calls that only read go through
    :func:`db_read`: they do not wait behind the writes (:mod:`interrupt_chat.store.pools`).
    """
    return await _call(fn, args, kwargs, write=True)


async def db_read(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """A database call that only reads, on a reader thread; otherwise as :func:`db_call`."""
    return await _call(fn, args, kwargs, write=False)


async def _call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], *, write: bool) -> T:
    outage = _outage
    outage.check()
    try:
        result = await pools.run(fn, *args, write=write, **kwargs)
    except ThreadDBError as exc:
        outage.failed(exc)
        raise
    except ThreadConflict:
        outage.recovered()  # the database answered
        raise
    outage.recovered()
    return result


def run_key(chat: ChatLike, thread_id: str) -> runs.Key:
    """The run registry's key of one thread: stop, liveness and orphans are per thread, not per tab."""
    return (chat._owner_key or f"tab:{tab_token(chat)}|{chat.get_full_name()}", thread_id)


def forget(chat: ChatLike) -> None:
    """Drop everything this state holds (inside the lock): its owner changed, nothing of theirs may stay.

    Every var of the chat and of its substates goes back to its default: threads, the composer's
    attachments, rules, the inbox and its selection, feedback, open edits.
    """
    chat.reset()
    chat._sessions, chat._titles, chat._summaries, chat._frozen = {}, {}, [], {}


async def restore(chat: ChatLike) -> None:
    """Bring the owner's threads into a state that has not loaded them (inside the lock; S25).

    The list comes from the database; the thread to show (this state's, else the most recently
    updated one) is loaded whole, or refreshed when this state holds an older copy. When the
    owner is not the one this state last served (a log-out, another user), every thread it
    holds is dropped first.
    """
    owner = await owner_of(chat)
    if (chat._owner_key and owner != chat._owner_key) or (chat.signed_out and owner):  # (nobody's leftovers too)
        from . import attaching  # (it builds on this module)

        await attaching.forget(chat)  # the composer's files, and their unsent rows
        forget(chat)
    chat._owner_key, chat.signed_out = owner, not owner
    db = database()
    if db is None or not owner:
        return
    try:
        summaries = await db_read(db.threads, owner)
    except ThreadDBError as exc:
        unavailable(chat, exc)
        return
    chat._summaries = summaries
    current = chat.thread_id or (summaries[0].thread_id if summaries else "")
    if current and await load_thread(chat, current) is not None:
        chat.thread_id = current


@dataclass(frozen=True)
class Fresh:
    """What :func:`refresh` found: the copy was replaced, the thread was deleted, another process runs it."""

    replaced: bool = False
    deleted: bool = False
    busy: bool = False  # a run that this process does not drive holds the thread (another tab, another worker)
    pending_since: datetime | None = None  # since when the stored thread waits for the person
    trusted: bool = False  # not read: the copy is as this process last wrote or read it (``trust``)


async def refresh(chat: ChatLike, thread_id: str, known: int = 0, *, trust: bool = False) -> Fresh:
    """Bring this state's copy of a thread up to the database's revision (inside the lock).

    ``known``: a revision the database is known to have reached (a sync notice's): a copy behind it
    is read again at once, without the head read first. ``trust``: the caller's action is claimed
    by a conditional write next, so a copy at the revision this process last wrote or read, with
    no run's claim on it, is acted on without the head read (:attr:`Fresh.trusted`; a stale one
    loses its write and is read again: docs/decisions/0032). A caller that refuses on what such a
    copy says checks again without ``trust``.

    The database is the arbiter: a tab's copy is a cache, checked (one small read) before every
    action that depends on it. A copy whose run this process drives is kept. A newer stored copy
    replaces this one; answers this copy holds that never reach the database (masked, S23) are
    carried over when the set is the same. A deleted thread is dropped.
    """
    mine = chat._sessions.get(thread_id)
    db = database()
    if mine is None or db is None or not chat._owner_key:
        return Fresh()
    if mine.running:
        return Fresh()
    await _end_saved(chat, thread_id)
    if known > mine.revision and (stored := await _read(chat, thread_id)) is not None:
        return _replace(chat, mine, stored, None)
    if trust and known <= mine.revision and (remembered := db.known_head(chat._owner_key, thread_id)) is not None \
            and remembered.revision == mine.revision > 0 and not remembered.in_flight:
        return Fresh(pending_since=remembered.pending_since, trusted=True)
    try:
        with pools.first():  # the check before a person's action does not wait behind other chats' work
            head = await db_read(db.head, chat._owner_key, thread_id)
    except ThreadDBError as exc:
        unavailable(chat, exc)
        return Fresh()
    if head.deleted:
        chat._sessions = {k: v for k, v in chat._sessions.items() if k != thread_id}
        return Fresh(deleted=True)
    if head.revision == 0 or head.revision == mine.revision:  # never stored, or current
        return Fresh(busy=head.in_flight and await _claimed(chat, thread_id, head.updated_at),
                     pending_since=head.pending_since)
    stored = await _read(chat, thread_id)
    if stored is None:
        return Fresh()
    return _replace(chat, mine, stored, head.pending_since)


def _replace(chat: ChatLike, mine: AgentSession, stored: StoredThread, pending_since: datetime | None) -> Fresh:
    """This state's copy replaced by the stored one; the answers only this copy holds (masked) carried over."""
    carry_answers(mine, stored.session)
    stored.session.transcript.keep_remembered(mine.transcript)  # the history's rows are not made again
    stored.session.file_owner = chat._owner_key  # a run sends only its owner's stored files
    chat._sessions = {**chat._sessions, stored.session.thread_id: stored.session}
    return Fresh(replaced=True, busy=stored.in_flight, pending_since=pending_since)


async def reload(chat: ChatLike, thread_id: str) -> AgentSession | None:
    """Replace this state's copy with the database's, whatever it holds (after a lost conditional write)."""
    stored = await _read(chat, thread_id)
    if stored is None:
        chat._sessions = {k: v for k, v in chat._sessions.items() if k != thread_id}
        return None
    stored.session.file_owner = chat._owner_key  # a run sends only its owner's stored files
    chat._sessions = {**chat._sessions, thread_id: stored.session}
    return stored.session


def carry_answers(old: AgentSession, new: AgentSession) -> None:
    """Answers ``old`` holds and ``new`` lacks, for the same open set: the ones never stored (masked, S23)."""
    before, after = old.tracker.pending, new.tracker.pending
    if before is None or after is None or new.tracker.sealed or set_identity(before) != set_identity(after):
        return
    for interrupt_id, entry in old.tracker.answers.items():
        if interrupt_id not in new.tracker.answers:
            new.tracker.carry(entry)


def set_identity(pending: Pending | None) -> tuple[Any, ...] | None:
    """What tells two pending sets apart: their kind, the run that raised them, their interrupts."""
    if pending is None:
        return None
    return pending.kind, pending.run_id, tuple(pending.ids), json.dumps(pending.raw_value, sort_keys=True, default=str)


async def load_thread(chat: ChatLike, thread_id: str) -> AgentSession | None:
    """A thread of the chat's owner, from memory (refreshed) or the database (inside the lock).

    Ids come from the browser: a thread that is neither in this state nor the owner's in the
    database is None.
    """
    if not thread_id:
        return None
    if thread_id in chat._sessions:
        await refresh(chat, thread_id)
        return chat._sessions.get(thread_id)
    stored = await _read(chat, thread_id)
    if stored is None:
        return None
    stored.session.file_owner = chat._owner_key  # a run sends only its owner's stored files
    chat._sessions = {**chat._sessions, thread_id: stored.session}
    return stored.session


async def _read(chat: ChatLike, thread_id: str) -> StoredThread | None:
    """The database's copy of one of the owner's threads; None when there is none or it cannot be read.

    A copy that a run held when it was saved, and whose run nobody drives any more (the process
    died: a restart), is ended as failed here: its sealed set is open again, once (S15).
    """
    db = database()
    if db is None or not chat._owner_key:
        return None
    try:
        with pools.first():  # a thread a person opens, or one that moved under their action
            stored = await db_read(db.read, chat._owner_key, thread_id, client=chat._client())
    except ThreadDBError as exc:
        unavailable(chat, exc)
        return None
    if stored is not None and stored.in_flight and not await _claimed(chat, thread_id, stored.updated_at):
        if await end_orphaned(chat, stored.session) in (Commit.WON, Commit.LOCAL):
            return StoredThread(stored.session, stored.session.revision, False)
        again = await db_read(db.read, chat._owner_key, thread_id, client=chat._client())  # theirs
        return again if again is not None else stored
    return stored


async def _end_saved(chat: ChatLike, thread_id: str) -> None:
    """A run this process drove on the thread has ended and its end is being saved: wait for that save.

    The page shows the run ended before its end is written (the write is after the state lock);
    a read made meanwhile would see the run's claim and refuse the next action as busy. On a busy
    worker that save may wait behind seconds of other chats' claims and saves: it is hurried.
    """
    key = run_key(chat, thread_id)
    run = runs.local(key)
    if run is not None and not run.running:
        with pools.hurry(key):  # a person waits on it: it goes before every other waiting call (saving.write)
            await runs.ended(key, END_SAVE_WAIT_SECONDS)


async def _claimed(chat: ChatLike, thread_id: str, since: datetime | None) -> bool:
    """A run's claim still holds: its driver is alive, or it was made a moment ago (the driver registers next)."""
    young = since is not None and (datetime.now(UTC) - since).total_seconds() < CLAIM_GRACE_SECONDS
    return young or await driven(chat, thread_id)


async def driven(chat: ChatLike, thread_id: str) -> bool:
    """Whether a run of this thread has a driver: this process, or (with Redis) another one that is alive."""
    key = run_key(chat, thread_id)
    return runs.local(key) is not None or await runs.alive(key)


async def end_orphaned(chat: ChatLike, session: AgentSession) -> Commit:
    """End a run nobody drives any more as failed, and write that end (inside the lock): the one way it ends.

    Whoever finds the run: a tab that reads a thread stored in flight whose run has no driver (the
    backend restarted: :func:`_read`), or the tab that watches a run another worker drove, once that
    worker's liveness lapsed (:mod:`.orphans`). ``session`` is that tab's copy, at the revision the
    run's claim wrote: its run fails with :data:`ORPHANED_MESSAGE` (server-side tools left waiting
    fail nothing: they run again, ``driver.run_handlers``). The copy is written conditionally, without
    ``in_flight``: that releases the thread's claim, and of two tabs or workers that find the same run,
    one writes. The run holds nothing in :mod:`interrupt_chat.workers.runs` to release: no process
    drives it, and its driver's liveness key lapsed with the driver.

    Returns:
        How the write went (:func:`commit`): on :attr:`Commit.LOST` or :attr:`Commit.DELETED` another
        tab or worker moved the thread first (it ended the run, or ran on): read what it wrote.
    """
    if not session.needs_handlers:
        session.abandon(ORPHANED_MESSAGE)
    return await commit(chat, session)  # without in_flight: the claim is released


async def save(chat: ChatLike, session: AgentSession) -> None:
    """A conditional write inside the lock whose loss needs no retry (a notice says the copy is stale)."""
    if await commit(chat, session) in (Commit.LOST, Commit.DELETED):
        chat.notice = CONFLICT_NOTICE


class Commit(enum.Enum):
    """What a conditional write of a thread came to (:func:`commit`)."""

    WON = "won"  # written: this copy is the thread now
    LOST = "lost"  # another tab or worker wrote first: nothing was written, read the thread again
    DELETED = "deleted"  # the thread was deleted meanwhile
    LOCAL = "local"  # no database (or it failed, with a notice): the copy in memory is all there is
    PAUSED = "paused"  # ``unless_paused``'s person paused their agents: nothing was written


def together(db: ThreadDB) -> AbstractContextManager[None]:
    """Thread saves that may share a transaction with others waiting beside them (SQLite, decision 0030)."""
    return pools.together(db.batch if db.batches else None)


async def commit(chat: ChatLike, session: AgentSession, *, in_flight: bool = False,
                 branches: BranchWrite | None = None, unless_paused: str = "") -> Commit:
    """Write this copy of a thread if the database still holds the revision it was read at (inside the lock).

    The claim that makes every action happen once: of two tabs (or workers) that read the same
    revision and act on it, one writes and the other gets :attr:`Commit.LOST`. ``in_flight``: a run
    is about to start; the winner registers it at once (a claim younger than
    :data:`CLAIM_GRACE_SECONDS` counts as driven meanwhile, so nobody reads it as orphaned).
    ``branches``: hidden versions stored and dropped in the same write (without a database: in memory).
    ``unless_paused``: a person whose pause refuses the write (:attr:`Commit.PAUSED`), read in the same
    call as the write, and on SQLite in its transaction (decision 0034).
    """
    db = database()
    if db is None or not chat._owner_key:
        if branches is not None:
            session.branches.keep_local(branches.put, branches.drop)
        return Commit.LOCAL
    try:
        # the claim: ahead of the saves other chats' runs queued (decision 0029), with other claims (0030)
        with pools.first(), together(db):
            if not await db_call(_claim, db, chat._owner_key, session, in_flight, branches, unless_paused):
                return Commit.PAUSED
    except ThreadConflict as exc:
        return Commit.DELETED if isinstance(exc, ThreadDeleted) else Commit.LOST
    except ThreadDBError as exc:
        unavailable(chat, exc)
        if branches is not None:
            session.branches.keep_local(branches.put, branches.drop)
        return Commit.LOCAL
    if in_flight:
        await runs.add(run_key(chat, session.thread_id), session)
    await sync.changed(chat._owner_key, session.thread_id, tab_token(chat), session.revision)
    return Commit.WON


def _claim(db: ThreadDB, owner: str, session: AgentSession, in_flight: bool, branches: BranchWrite | None,
           unless_paused: str) -> bool:
    """The conditional save of a claim; False, with nothing written, when ``unless_paused`` (a person) is paused."""
    if unless_paused and policies.paused_since(db, unless_paused) is not None:
        return False
    db.save(owner, session, revision=session.revision, in_flight=in_flight, branches=branches)
    return True


def unavailable(chat: ChatLike, exc: ThreadDBError) -> None:
    """Show the one notice of a database failure (inside the lock; ``db_call`` logs it once per outage)."""
    chat.notice = UNAVAILABLE_NOTICE
