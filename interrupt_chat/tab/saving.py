"""A run's end and a decision's audit, saved after the state lock, off the event loop.

Split from :mod:`.persistence`, which reads threads and makes the claims (the writes inside the
lock): here is what follows an action, where nothing waits for the tab's lock. A save is
conditional on the revision the copy holds; when another writer moved the thread meanwhile, the
copy goes over it only if it extends what is stored (no turn of theirs is lost).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, NamedTuple

from ..store import pools
from ..store.threads_db import ThreadConflict, ThreadDB, ThreadDBError, ThreadDeleted, ThreadSummary
from ..workers import runs, sync, traces
from . import hooks, persistence
from .audits import ACTOR, Audit
from .persistence import CONFLICT_NOTICE, UNAVAILABLE_NOTICE

if TYPE_CHECKING:
    from ..agui import AgentSession

__all__ = ["Written", "summaries", "write"]

log = logging.getLogger(__name__)


class Written(NamedTuple):
    """What :func:`write` came to."""

    notice: str = ""  # "" on success, else the notice to show (the error itself is logged)
    summaries: list[ThreadSummary] | None = None  # ``listing``: the owner's thread list, read after the save


async def write(owner: str, session: AgentSession | None, audits: list[Audit] | None = None, *,
                in_flight: bool = False, origin: str = "", urgent: bool = False, run: runs.Key | None = None,
                listing: bool = False) -> Written:
    """Save a thread and record decisions, after the state lock, off the event loop.

    The save is conditional on the revision the copy holds (its run's claim). When another
    writer moved the thread meanwhile (an orphan check on another worker), the copy is written
    over it only if it extends what is stored (no turn of theirs is lost); a deleted thread stays
    deleted. ``urgent``: the save goes ahead of the waiting ones (a set a person must answer surfaced).
    ``run``: the key of the run whose end this saves; a send waiting for that save hurries it
    (``persistence._end_saved``).
    ``listing``: the owner's thread list is read in the save's call (on SQLite, in its transaction:
    decision 0034), and returned.
    """
    db = persistence.database()
    if db is None or not owner:
        return Written()
    summaries = None
    try:
        for audit in audits or []:
            await persistence.db_call(db.record_decision, owner, audit.thread_id, audit.run_id, audit.interrupt_id,
                                      audit.reason, audit.action, audit.payload, audit.schema, audit.by,
                                      audit.detail, tool=audit.about.get("tool", ""), decider=ACTOR.get(),
                                      waited_ms=audit.waited_ms)
            traces.decided(audit.thread_id, audit.run_id, audit.interrupt_id, audit.action, audit.by)
        if session is not None and (session.transcript.messages or session.revision):
            # a set surfacing: ahead of other saves; a send waiting for this save: ahead of all (persistence._end_saved)
            with pools.first(urgent), pools.hurriable(run), persistence.together(db):
                summaries = await persistence.db_call(_save_extending, db, owner, session, in_flight, listing)
        thread_id = session.thread_id if session is not None else audits[0].thread_id if audits else ""
        # the other tabs show it (origin: the tab that did it); the revision saves them a read
        await sync.changed(owner, thread_id, origin, session.revision if session is not None else 0,
                           trail=session is None)
        if audits:
            await hooks.beyond.decided(owner, audits)  # notifications (the approvals beyond the tab)
    except ThreadDeleted:
        log.info("thread %.80s was deleted while it ran: its end is not saved", session.thread_id if session else "")
    except ThreadConflict as exc:
        log.warning("thread database: %s; this copy was not saved", exc)
        return Written(CONFLICT_NOTICE)
    except ThreadDBError:  # logged once per outage (db_call)
        return Written(UNAVAILABLE_NOTICE)
    return Written("", summaries)


def _save_extending(db: ThreadDB, owner: str, session: AgentSession, in_flight: bool,
                    listing: bool = False) -> list[ThreadSummary] | None:
    """Save conditionally; on a conflict, over the stored copy only if ours extends its messages.

    ``listing``: then the owner's thread list (None if that read fails: the save holds all the same).
    """
    for _ in range(3):
        try:
            db.save(owner, session, revision=session.revision, in_flight=in_flight)
            if not listing:
                return None
            with contextlib.suppress(ThreadDBError):
                return db.threads(owner)
            return None
        except ThreadDeleted:
            raise
        except ThreadConflict:
            stored = db.read(owner, session.thread_id)
            if stored is None:
                raise
            theirs = [m.id for m in stored.session.transcript.messages]
            ours = [m.id for m in session.transcript.messages]
            if ours[:len(theirs)] != theirs:
                raise
            session.revision = stored.revision
    raise ThreadConflict(f"thread {session.thread_id:.80} kept changing")


async def summaries(owner: str) -> list[ThreadSummary] | None:
    """The owner's thread list from the database (after the lock); None without one, or when it fails."""
    db = persistence.database()
    if db is None or not owner:
        return None
    try:
        return await persistence.db_read(db.threads, owner)
    except ThreadDBError:  # logged once per outage (db_call)
        return None
