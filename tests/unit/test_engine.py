"""Opening the SQLite file: WAL journaling, tried again while another process holds the file at open."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from interrupt_chat.store.engine import set_wal


class _Refusing:
    """A real cursor whose first ``times`` statements SQLite answers with ``said`` (as it may when two open at once)."""

    def __init__(self, cursor: sqlite3.Cursor, times: int, said: str = "database is locked") -> None:
        self.cursor, self.left, self.said, self.tries = cursor, times, said, 0

    def execute(self, sql: str) -> Any:
        self.tries += 1
        if self.left:
            self.left -= 1
            raise sqlite3.OperationalError(self.said)
        return self.cursor.execute(sql)

    def fetchall(self) -> list[Any]:
        return self.cursor.fetchall()


def _journal(path: Any) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA journal_mode").fetchone()[0]


def test_a_locked_answer_at_open_is_tried_again_until_wal_is_set(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    cursor = _Refusing(conn.cursor(), times=3)
    set_wal(cursor, patience=5)
    conn.close()
    assert cursor.tries == 4 and _journal(tmp_path / "t.db") == "wal"


def test_other_errors_and_a_lock_that_outlasts_the_patience_are_raised(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    broken = _Refusing(conn.cursor(), times=1, said="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        set_wal(broken, patience=5)
    assert broken.tries == 1  # not a lock: not tried again
    held = _Refusing(conn.cursor(), times=1000)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        set_wal(held, patience=0.05)
    assert 1 < held.tries < 1000
    conn.close()
