"""Attached files: their bytes in a table of their own, outside the messages' JSON and every Reflex var.

A message references a file as ``ic-file:<file_id>`` (:mod:`interrupt_chat.agui.multimodal`); the
id is random (128 bits), so a reference cannot be guessed. A run reads a file only for its owner
(:func:`read_owned`): an id that a message names, whoever wrote it, gives nobody else's bytes.

A file waits in the composer *unsent* (``thread_id`` is ``UNSENT``) until its message is sent
(:func:`assign`): removing its chip deletes it (:func:`drop_unsent`), a person's unsent files are
limited in number and bytes (:func:`unsent_usage`), and unsent files older than ``UNSENT_TTL``
are deleted (:func:`expire_unsent`). Sent files go with their thread when it is deleted.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, select, true
from sqlalchemy.engine import Connection

from ..model.files import StoredFile
from .schema import files_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["UNSENT", "UNSENT_TTL", "assign", "drop_thread", "drop_unsent", "expire_unsent", "new_file_id", "put",
           "read", "read_owned", "unsent_usage"]

UNSENT = ""  # the thread of a file waiting in a composer: none yet
UNSENT_TTL = timedelta(days=1)  # an unsent file older than this is deleted (its chip then sends a note)


def new_file_id() -> str:
    """A random file id (a reference to it cannot be guessed)."""
    return f"file-{uuid.uuid4().hex}"


def put(db: ThreadDB, owner: str, file: StoredFile, data: bytes) -> None:
    """Store a file's bytes, unsent (its message gives it a thread: :func:`assign`)."""
    with db._transaction("store a file", write=True) as conn:
        conn.execute(files_table.insert().values(file_id=file.file_id, owner=owner, thread_id=UNSENT,
                                                 name=file.name.replace("\x00", ""), mime=file.mime, size=len(data),
                                                 data=data, created_at=datetime.now(UTC)))


def read(db: ThreadDB, file_id: str) -> tuple[str, bytes] | None:
    """A file's type and bytes by its id, whoever owns it (for tests and tools; a run uses :func:`read_owned`)."""
    f = files_table
    with db._transaction("read a file") as conn:
        row = conn.execute(select(f.c.mime, f.c.data).where(f.c.file_id == file_id)).first()
    return (row.mime, bytes(row.data)) if row is not None else None


def read_owned(db: ThreadDB, owner: str, file_id: str) -> tuple[str, str, bytes] | None:
    """One of ``owner``'s files: (name, type, bytes), or None (no such file, or another owner's)."""
    f = files_table
    with db._transaction("read a file") as conn:
        row = conn.execute(select(f.c.name, f.c.mime, f.c.data)
                           .where((f.c.file_id == file_id) & (f.c.owner == owner))).first()
    return (row.name, row.mime, bytes(row.data)) if row is not None else None


def drop_thread(conn: Connection, owner: str, thread_id: str) -> None:
    """Inside a delete's transaction: the thread's files go with it."""
    conn.execute(delete(files_table).where((files_table.c.owner == owner) & (files_table.c.thread_id == thread_id)))


def assign(db: ThreadDB, owner: str, file_ids: list[str], thread_id: str) -> None:
    """The files were sent in ``thread_id``: they go with it when it is deleted, and no longer expire."""
    f = files_table
    with db._transaction("file the attachments", write=True) as conn:
        conn.execute(f.update().where((f.c.owner == owner) & f.c.file_id.in_(file_ids)).values(thread_id=thread_id))


def drop_unsent(db: ThreadDB, file_ids: list[str], owner: str | None = None) -> int:
    """Delete these files if they were never sent (of ``owner`` when given); returns how many went."""
    f = files_table
    if not file_ids:
        return 0
    mine = (f.c.owner == owner) if owner is not None else true()
    with db._transaction("remove an attachment", write=True) as conn:
        return int(conn.execute(delete(f).where(f.c.file_id.in_(file_ids) & (f.c.thread_id == UNSENT) & mine))
                   .rowcount or 0)


def unsent_usage(db: ThreadDB, owner: str) -> tuple[int, int]:
    """How many unsent files ``owner`` has, and their bytes together (what the quota counts)."""
    f = files_table
    with db._transaction("count the waiting attachments") as conn:
        row = conn.execute(select(func.count(), func.coalesce(func.sum(f.c.size), 0))
                           .where((f.c.owner == owner) & (f.c.thread_id == UNSENT))).first()
    return (int(row[0]), int(row[1])) if row is not None else (0, 0)


def expire_unsent(db: ThreadDB, now: datetime | None = None, owner: str | None = None) -> int:
    """Delete the unsent files older than ``UNSENT_TTL`` (of ``owner`` when given, else everyone's)."""
    f = files_table
    cutoff = (now or datetime.now(UTC)) - UNSENT_TTL
    mine = (f.c.owner == owner) if owner is not None else true()
    with db._transaction("expire unsent attachments", write=True) as conn:
        return int(conn.execute(delete(f).where((f.c.thread_id == UNSENT) & (f.c.created_at < cutoff) & mine))
                   .rowcount or 0)
