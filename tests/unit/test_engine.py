"""Opening the SQLite file: WAL journaling, tried again while another connection holds the file at open."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from interrupt_chat.store.engine import set_wal


class _Counting:
    """A real cursor that counts the statements it was given (each a try of ``set_wal``)."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self.cursor, self.tries = cursor, 0

    def execute(self, sql: str) -> Any:
        self.tries += 1
        return self.cursor.execute(sql)

    def fetchall(self) -> list[Any]:
        return self.cursor.fetchall()


class _Refusing(_Counting):
    """A real cursor whose first statement fails with a disk error that carries no SQLite result code (not a lock)."""

    def execute(self, sql: str) -> Any:
        if not self.tries:
            self.tries += 1
            raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql)


def _holding(path: Path) -> sqlite3.Connection:
    """Another connection with the file locked (an exclusive write transaction), as a worker opening it would."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def _opening(path: Path) -> tuple[sqlite3.Connection, _Counting]:
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)  # SQLite answers "locked" at once
    return conn, _Counting(conn.cursor())


def _journal(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA journal_mode").fetchone()[0]


def test_a_locked_answer_at_open_is_tried_again_until_wal_is_set(tmp_path):
    path = tmp_path / "t.db"
    holder = _holding(path)
    conn, cursor = _opening(path)
    release = threading.Timer(0.2, holder.rollback)
    release.start()
    try:
        set_wal(cursor, patience=10)
    finally:
        release.join()
        holder.close()
        conn.close()
    assert cursor.tries > 1 and _journal(path) == "wal"  # refused while held, then set


def test_other_errors_and_a_lock_that_outlasts_the_patience_are_raised(tmp_path):
    path = tmp_path / "t.db"
    conn = sqlite3.connect(path, isolation_level=None)
    broken = _Refusing(conn.cursor())
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        set_wal(broken, patience=5)
    assert broken.tries == 1  # not a lock: not tried again
    conn.close()
    holder = _holding(path)
    conn, held = _opening(path)
    with pytest.raises(sqlite3.OperationalError) as raised:
        set_wal(held, patience=0.05)
    holder.close()
    conn.close()
    assert raised.value.sqlite_errorcode == sqlite3.SQLITE_BUSY and held.tries > 1
