"""Requests leave the people's lists when they are decided, withdrawn or gone."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ...store import requests as store
from ...store.threads_db import ThreadDBError
from ...tab import persistence
from ..channels import reach
from . import core

__all__ = ["FINAL", "closed"]

log = logging.getLogger(__name__)

FINAL = ("resolved", "cancelled", "rejected", "expired", "dismissed")


async def closed(owner: str, audits: Sequence[Any]) -> None:
    """After decisions were recorded: their requests close, and every page that listed them follows."""
    people = core.people_of(core.chat_of_key(owner))
    db = persistence.database()
    decided = [a for a in audits if a.action in FINAL and a.interrupt_id]
    if people is None or db is None or not decided:
        return
    by_thread: dict[str, list[str]] = {}
    for audit in decided:
        by_thread.setdefault(audit.thread_id, []).append(audit.interrupt_id)
    for thread_id, ids in by_thread.items():
        try:
            rows = await persistence.db_read(store.of_thread, db, owner, thread_id)
            if not await persistence.db_call(store.close, db, owner, thread_id, ids):
                continue
        except ThreadDBError:
            log.warning("people: decided requests could not be closed; their lists show them until they are")
            continue
        for row in (rows[i] for i in ids if i in rows):
            await core.tell(people, row)
            audit = next(a for a in decided if a.interrupt_id == row.interrupt_id and a.thread_id == thread_id)
            await reach.decided(row, audit.action, str((audit.detail or {}).get("actor") or ""), people)
