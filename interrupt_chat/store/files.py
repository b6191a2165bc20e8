"""Attached files: their bytes in a table of their own, outside the messages' JSON and every Reflex var.

A message references a file as ``ic-file:<file_id>`` (:mod:`interrupt_chat.agui.multimodal`); the
id is random (128 bits), so a reference cannot be guessed. Files go with their thread when it is
deleted.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from ..files import StoredFile
from .schema import files_table

if TYPE_CHECKING:
    from ..threads_db import ThreadDB

__all__ = ["assign", "drop_thread", "new_file_id", "put", "read", "read_owned"]


def new_file_id() -> str:
    """A random file id (a reference to it cannot be guessed)."""
    return f"file-{uuid.uuid4().hex}"


def put(db: ThreadDB, owner: str, thread_id: str, file: StoredFile, data: bytes) -> None:
    """Store a file's bytes."""
    with db._transaction("store a file", write=True) as conn:
        conn.execute(files_table.insert().values(file_id=file.file_id, owner=owner, thread_id=thread_id,
                                                 name=file.name.replace("\x00", ""), mime=file.mime, size=len(data),
                                                 data=data, created_at=datetime.now(UTC)))


def read(db: ThreadDB, file_id: str) -> tuple[str, bytes] | None:
    """A file's type and bytes by its id (what a run sends), or None."""
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
    """The files were sent in ``thread_id``: they go with it when it is deleted."""
    f = files_table
    with db._transaction("file the attachments", write=True) as conn:
        conn.execute(f.update().where((f.c.owner == owner) & f.c.file_id.in_(file_ids)).values(thread_id=thread_id))
