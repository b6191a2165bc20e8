"""An owner's threads in the thread database, called explicitly by the chat (never while publishing).

The database is :class:`~interrupt_chat.threads_db.ThreadDB` (``INTERRUPT_CHAT_DB_URL``, else the
Reflex app's ``db_url``, else ``interrupt_chat_data/threads.db``; ``off`` keeps threads in memory
only). Threads are loaded inside the state lock when a state first needs them; writes happen after
the lock is released. Database trouble is logged once per failure, shown as one notice, and never
breaks the chat: it keeps working in memory.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import reflex as rx

from .agui import AgentSession, is_expired
from .agui.sanitize import short_text
from .threads_db import DB_URL_ENV, ThreadDB, ThreadDBError, default_db_url

if TYPE_CHECKING:
    from .state import ChatState

__all__ = ["DB_URL_ENV", "UNAVAILABLE_NOTICE", "Audit", "database", "decision_rows", "expired_audits", "load_thread",
           "owner_of", "refresh", "restore", "unavailable", "write"]

log = logging.getLogger(__name__)

UNAVAILABLE_NOTICE = "Threads cannot be saved right now; this chat keeps working, but only in this window."

_db: ThreadDB | None = None
_db_url = ""
_db_lock = threading.Lock()


def database() -> ThreadDB | None:
    """The process's thread database (opened lazily); None when ``INTERRUPT_CHAT_DB_URL=off``."""
    global _db, _db_url
    configured = os.environ.get(DB_URL_ENV, "").strip()
    if configured.lower() == "off":
        return None
    url = configured or default_db_url(getattr(rx.config.get_config(), "db_url", None))
    with _db_lock:
        if _db is None or _db_url != url:
            if _db is not None:
                _db.close()
            _db, _db_url = ThreadDB(url), url
        return _db


async def owner_of(chat: ChatState) -> str:
    """The owner key of a chat: its owner (``chat(owner=...)``, else the browser's id) and the chat's name."""
    fn = chat.__class__.owner_fn  # (type() of a StateProxy is the proxy)
    owner = fn(chat) if fn is not None else chat.owner()
    if inspect.isawaitable(owner):
        owner = await owner
    return f"{owner}|{chat.get_full_name()}" if owner else ""


async def restore(chat: ChatState) -> None:
    """Bring the owner's threads into a state that has not loaded them (inside the lock; S25).

    The list comes from the database; the thread to show (this state's, else the most recently
    updated one) is loaded whole. Threads this state already holds are never dropped.
    """
    chat._owner_key = await owner_of(chat)
    db = database()
    if db is None or not chat._owner_key:
        return
    try:
        summaries = db.threads(chat._owner_key)
        current = chat.thread_id or (summaries[0].thread_id if summaries else "")
        if current and (current not in chat._sessions or refresh(chat, current)):
            session = chat._sessions.get(current) or db.load(chat._owner_key, current, client=chat._client())
            if session is not None:
                chat._sessions = {**chat._sessions, current: session}
                chat.thread_id = current
    except ThreadDBError as exc:
        unavailable(chat, exc)
        return
    chat._summaries = summaries


def refresh(chat: ChatState, thread_id: str) -> bool:
    """Replace this state's copy of a thread when the database holds a newer one (inside the lock).

    Another tab of the same owner may have run or answered it since: its last run then differs.
    A copy that is running, or that the database does not know, is kept.

    Returns:
        True when the copy was replaced.
    """
    mine = chat._sessions.get(thread_id)
    if mine is None or mine.running:
        return False
    stored = _stored(chat, thread_id)
    if stored is None or stored.last_run_id == mine.last_run_id:
        return False
    chat._sessions = {**chat._sessions, thread_id: stored}
    return True


def load_thread(chat: ChatState, thread_id: str) -> AgentSession | None:
    """A thread of the chat's owner, from memory or the database (inside the lock)."""
    session = chat._sessions.get(thread_id) or _stored(chat, thread_id)
    if session is not None and thread_id not in chat._sessions:
        chat._sessions = {**chat._sessions, thread_id: session}
    return session


def _stored(chat: ChatState, thread_id: str) -> AgentSession | None:
    """The database's copy of one of the owner's threads; None when there is none or it cannot be read."""
    db = database()
    if db is None or not chat._owner_key:
        return None
    try:
        return db.load(chat._owner_key, thread_id, client=chat._client())
    except ThreadDBError as exc:
        unavailable(chat, exc)
        return None


@dataclass
class Audit:
    """One decision for the audit trail, captured inside the lock and written after it."""

    thread_id: str
    run_id: str | None
    interrupt_id: str
    reason: str | None
    action: str  # resolved | cancelled | rejected | expired | dismissed
    payload: Any = None
    schema: Any = None


def write(owner: str, session: AgentSession | None, audits: list[Audit] | None = None) -> str:
    """Save a thread and record decisions, after the state lock (a plain call: no await in between).

    Returns:
        "" on success, else the notice to show (the error itself is logged).
    """
    db = database()
    if db is None or not owner:
        return ""
    try:
        for audit in audits or []:
            db.record_decision(owner, audit.thread_id, audit.run_id, audit.interrupt_id, audit.reason,
                               audit.action, audit.payload, audit.schema)
        if session is not None and session.transcript.messages:
            db.save(owner, session)
    except ThreadDBError as exc:
        log.warning("thread database: %s", exc)
        return UNAVAILABLE_NOTICE
    return ""


def expired_audits(session: AgentSession, entries: list[Any]) -> list[Audit]:
    """Members of a submitted set sent as ``cancelled`` because they had expired (S11)."""
    pending = session.tracker.pending
    by_id = {i.id: i for i in pending.interrupts} if pending else {}
    now = session.tracker.now()
    return [Audit(session.thread_id, pending.run_id if pending else None, e.interrupt_id,
                  by_id[e.interrupt_id].reason, "expired")
            for e in entries if e.status == "cancelled" and e.interrupt_id in by_id
            and is_expired(by_id[e.interrupt_id], now)]


def unavailable(chat: ChatState, exc: ThreadDBError) -> None:
    """Log a database failure and show the one notice (inside the lock); the chat goes on in memory."""
    log.warning("thread database: %s", exc)
    chat.notice = UNAVAILABLE_NOTICE


def decision_rows(chat: ChatState) -> list[dict[str, str]]:
    """The shown thread's audit trail as rows (inside the lock): who decided what, and when."""
    db = database()
    if db is None or not chat._owner_key or not chat.thread_id:
        return []
    try:
        records = db.decisions(chat._owner_key, chat.thread_id)
    except ThreadDBError as exc:
        unavailable(chat, exc)
        return []
    return [{"interrupt_id": r.interrupt_id, "action": r.action, "reason": r.reason or "",
             "at": r.at.strftime("%Y-%m-%d %H:%M:%S"),
             "payload": short_text(json.dumps(r.payload, ensure_ascii=False), 160) if r.payload is not None else ""}
            for r in records]

