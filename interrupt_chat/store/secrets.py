"""Secrets the app did not configure, generated once and kept in the thread database; single-use marks."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from .schema import link_uses_table, secrets_table
from .types import ThreadDBError

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["secret", "use_once", "used"]


def secret(db: ThreadDB, name: str) -> str:
    """The secret ``name``: made on first use (32 random bytes, hex); every worker reads the same one."""
    t = secrets_table
    with db._transaction("read a secret") as conn:
        found = conn.execute(select(t.c.value).where(t.c.name == name)).scalar()
    if found:
        return str(found)
    try:
        with db._transaction("store a secret", write=True) as conn:
            conn.execute(t.insert().values(name=name, value=secrets.token_hex(32)))
    except ThreadDBError:  # another worker stored it first (a unique key): read theirs
        pass
    with db._transaction("read a secret") as conn:
        stored = conn.execute(select(t.c.value).where(t.c.name == name)).scalar()
    if not stored:  # the insert failed for another reason than a race (a locked file, a full disk)
        raise ThreadDBError(f"the secret {name!r} could not be stored")
    return str(stored)


def use_once(db: ThreadDB, token_id: str) -> bool:
    """Mark a single-use token used; False when it was used already (one insert wins)."""
    try:
        with db._transaction("use a link", write=True) as conn:
            conn.execute(link_uses_table.insert().values(token_id=token_id, used_at=datetime.now(UTC)))
    except ThreadDBError as exc:  # it wraps the unique key's IntegrityError: used already
        if isinstance(exc.__cause__, IntegrityError):
            return False
        raise
    return True


def used(db: ThreadDB, token_id: str) -> bool:
    """Whether a single-use token was used."""
    t = link_uses_table
    with db._transaction("read a link's use") as conn:
        return conn.execute(select(t.c.token_id).where(t.c.token_id == token_id)).first() is not None
