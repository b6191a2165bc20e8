"""BASELINE for the benchmarks: the pickle-based thread store interrupt_chat used before its database.

It rewrote a tab's whole pickled sessions on every save; ``benchmarks/thread_save.py`` runs it
next to :class:`interrupt_chat.store.threads_db.ThreadDB` and prints the ratio. Not part of the package.

``reflex run`` empties its disk state manager's folder at every start, so the chat also keeps each
tab's threads (transcripts and pending interrupts) in a small SQLite file, keyed by the tab's
client token and the chat. What is stored is the pickled ``AgentSession``s — which, by design,
hold no masked answer (``InterruptTracker.__getstate__``, S23).

Framework-free. ``INTERRUPT_CHAT_THREAD_STORE`` sets the file (default
``interrupt_chat_threads.db`` in the working directory; ``off`` disables the store).
"""

from __future__ import annotations

import logging
import os
import pickle
import sqlite3
import threading
import time
from pathlib import Path

from interrupt_chat.agui import AgentSession

__all__ = ["THREAD_STORE_ENV", "ThreadStore", "thread_store"]

log = logging.getLogger(__name__)

THREAD_STORE_ENV = "INTERRUPT_CHAT_THREAD_STORE"
DEFAULT_PATH = "interrupt_chat_threads.db"
KEEP_SECONDS = 7 * 24 * 3600


class ThreadStore:
    """``owner -> (threads, current thread)``; one row per owner (a tab's chat)."""

    def __init__(self, path: str | Path, keep_seconds: float = KEEP_SECONDS) -> None:
        """Open (or create) the SQLite file; rows older than ``keep_seconds`` are deleted."""
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS threads (owner TEXT PRIMARY KEY, current TEXT NOT NULL, "
                         "sessions BLOB NOT NULL, updated REAL NOT NULL)")
        self._db.execute("DELETE FROM threads WHERE updated < ?", (time.time() - keep_seconds,))

    def save(self, owner: str, sessions: dict[str, AgentSession], current: str) -> None:
        """Store ``owner``'s threads (pickled) and current thread, replacing what was there."""
        blob = pickle.dumps(dict(sessions), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO threads (owner, current, sessions, updated) VALUES (?, ?, ?, ?)",
                             (owner, current, blob, time.time()))

    def load(self, owner: str) -> tuple[dict[str, AgentSession], str] | None:
        """``owner``'s threads and current thread; None when there is no row or it cannot be read."""
        with self._lock:
            row = self._db.execute("SELECT sessions, current FROM threads WHERE owner = ?", (owner,)).fetchone()
        if row is None:
            return None
        try:
            sessions = pickle.loads(row[0])
        except Exception:  # noqa: BLE001 - a row from an older version: start afresh, do not break the page
            log.warning("thread store: dropping an unreadable row for %s", owner)
            return None
        return sessions, row[1]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


_store: ThreadStore | None = None
_store_lock = threading.Lock()


def thread_store() -> ThreadStore | None:
    """The process's store, opened on first use; None when disabled or unusable."""
    global _store
    setting = os.environ.get(THREAD_STORE_ENV, DEFAULT_PATH).strip()
    if not setting or setting.lower() == "off":
        return None
    with _store_lock:
        if _store is None or _store.path != Path(setting):
            try:
                _store = ThreadStore(setting)
            except sqlite3.Error as exc:
                log.warning("thread store %s unavailable (%s): threads will not survive a restart", setting, exc)
                return None
        return _store
