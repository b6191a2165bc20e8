"""Where the thread database lives and how it is opened: the default URL, the SQLite folder, the engine."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.pool import StaticPool

from .folder import make_folder
from .sql import DB_URL_ENV

__all__ = ["DEFAULT_DATA_DIR", "DEFAULT_DB_FILE", "LEGACY_DATA_DIR", "create", "default_db_url"]

log = logging.getLogger("interrupt_chat.store.threads_db")

#: Folder (under the working directory) of the default SQLite file, created on first use. Hidden: Reflex's dev
#: reloader skips dot-folders, so thread writes (``-wal``/``-shm`` files) never restart the dev backend.
DEFAULT_DATA_DIR = ".interrupt_chat"
LEGACY_DATA_DIR = "interrupt_chat_data"  # the default before 0.x: still used when it holds a database
DEFAULT_DB_FILE = "threads.db"


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


def create(url: URL, busy_timeout: float, connect_timeout: float) -> tuple[Engine, bool]:
    """The engine of ``url`` and whether it is an in-memory SQLite database.

    SQLite files get WAL journaling, a busy timeout and writes that lock at ``BEGIN``; PostgreSQL
    connections a connect timeout and a pre-ping.
    """
    if url.get_backend_name() != "sqlite":
        args = {"connect_timeout": max(2, round(connect_timeout))} if url.get_backend_name() == "postgresql" else {}
        return create_engine(url, pool_pre_ping=True, connect_args=args), False
    database = url.database or ""
    memory = database in ("", ":memory:") or database.startswith("file::memory:")
    if not memory:
        make_folder(database)  # the default dot-folder gets a .gitignore of "*" (threads.db, -wal, -shm)
    engine = create_engine(url, connect_args={"timeout": busy_timeout, "check_same_thread": False},
                           **({"poolclass": StaticPool} if memory else {}))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, not by the driver
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        if not memory:
            set_wal(cursor, busy_timeout)
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # a write takes the lock at BEGIN, so it waits (busy timeout) instead of failing to upgrade
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("ic_write") else "BEGIN")

    return engine, memory


def set_wal(cursor: Any, patience: float) -> None:
    """Switch the connection's file to WAL journaling, trying again for up to ``patience`` seconds while it is locked.

    SQLite may answer "database is locked" here at once, without its busy handler: seen when two
    workers open one file at the same moment (each connection checks the journal mode first).
    """
    deadline = time.monotonic() + patience
    pause = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.fetchall()  # the statement done: it holds no read of the file
            return
        except sqlite3.OperationalError as exc:
            if not _held(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _held(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite said the file is busy or locked (its primary result code, not the message's words)."""
    code = getattr(exc, "sqlite_errorcode", None)  # set by SQLite's own errors (Python 3.11+)
    return code is not None and (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
