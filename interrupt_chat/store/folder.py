"""The folder of a SQLite thread database, made on first use; the default dot-folder ignores itself.

``.interrupt_chat/`` holds ``threads.db`` and SQLite's ``threads.db-wal`` / ``threads.db-shm``: a
``.gitignore`` of ``*`` written in it keeps all of them (and itself) out of the app's repository,
whatever the app's own ``.gitignore`` says (Reflex's template lists ``*.db`` only).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

__all__ = ["IGNORED_FOLDER", "make_folder"]

IGNORED_FOLDER = ".interrupt_chat"  # threads_db.DEFAULT_DATA_DIR
IGNORE_ALL = "# interrupt_chat's thread database (threads.db, -wal, -shm): never committed\n*\n"


def make_folder(database: str) -> None:
    """Create the folder of the SQLite file ``database``; the default dot-folder gets its ``.gitignore``."""
    folder = Path(database).expanduser().parent
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if folder.name == IGNORED_FOLDER and not ignore.exists():
        with contextlib.suppress(OSError):  # a read-only folder still holds the database
            ignore.write_text(IGNORE_ALL)
