"""Threads kept under an owner key of earlier versions move to the key in use now (docs/decisions/0017).

A browser that still had the readable id of the versions before identities, and a chat stored under
the class names it had before 0017: once per key and process, in one transaction each (``move_owner``).
"""

from __future__ import annotations

import logging

from reflex.utils.format import to_snake_case

from ..model.protocols import ChatLike
from ..store.moves import move_owner
from ..store.threads_db import ThreadDBError
from .persistence import database, db_call

__all__ = ["adopt", "adopted_keys", "move_legacy", "moved_keys"]

log = logging.getLogger(__name__)


async def adopt(old: str, key: str) -> None:
    """A browser that still had the readable id of earlier versions: its threads move to its new identity."""
    db = database()
    if db is None:
        return
    try:
        moved = await db_call(move_owner, db, old, key)
    except ThreadDBError:  # tried again on the socket's next load
        return
    adopted_keys.add(old)
    if moved:
        log.info("identity: %d thread(s) moved from a browser's old readable id to its new identity", moved)


moved_keys: set[str] = set()  # owner keys whose threads under the chat's legacy names were moved (this process)
adopted_keys: set[str] = set()  # pre-identity owner keys whose threads moved to a browser's identity (this process)


async def move_legacy(chat: ChatLike, owner: str, key: str) -> None:
    """Once per owner key and process: threads stored under the chat's name before 0017 move to its name now."""
    db = database()
    if db is None:
        return
    cls = chat.__class__
    parent, module = cls.get_full_name().rsplit(".", 1)[0], cls.__module__.replace(".", "___")
    try:
        for legacy in cls.legacy_names:
            old = f"{owner}|{parent}.{to_snake_case(f'{module}___{legacy}')}"
            moved = await db_call(move_owner, db, old, key)
            if moved:
                log.info("thread database: %d thread(s) moved to the chat's new name (%s)", moved, cls.identity)
    except ThreadDBError:  # logged once per outage (db_call); tried again on the next use
        return
    moved_keys.add(key)
