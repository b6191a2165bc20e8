"""Reminders and escalation, driven by expiry's sweeper (one worker at a time; each step once, by the row's revision).

At ``remind_at`` the assignees get a ``reminder``; at ``escalate_at`` the escalation's people or
roles are added to the assignees (the first ones can still decide): ``escalated`` in the audit and
the webhook, and every page that shows the request follows. A step is marked done by a conditional
write on the request's row before anything is sent, so a restart or a second worker never sends it twice.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from ...store import requests as store
from ...store.threads_db import ThreadDBError
from ...tab import persistence
from . import core, notices
from .deciding import partial_audit

__all__ = ["remind"]

log = logging.getLogger(__name__)


async def remind() -> int:
    """One pass: send the reminders and escalations that are due; returns how many steps were taken."""
    db = persistence.database()
    if db is None:
        return 0
    now = datetime.now(UTC)
    try:
        due = await persistence.db_read(store.due, db, now)
    except ThreadDBError:
        return 0
    taken = 0
    for row in due:
        people = core.people_of(core.chat_of_key(row.owner))
        if people is None:
            continue
        if not await persistence.db_read(store.still_waiting, db, row):  # deleted, or gone another way
            await persistence.db_call(store.close, db, row.owner, row.thread_id, [row.interrupt_id])
            await core.tell(people, row)
            continue
        if not row.reminded and row.remind_at is not None and row.remind_at <= now:
            marked = await persistence.db_call(store.reminded, db, row)
            if marked is None:
                continue  # another worker took it, or it moved on: the next pass reads it again
            await notices.later("reminder", marked, people)
            await core.tell(people, marked)
            row, taken = marked, taken + 1
        if not row.escalated and row.escalate_at is not None and row.escalate_at <= now and row.escalate_to:
            before = list(row.assignees)
            raised = await persistence.db_call(store.escalate, db, row, row.escalate_to)
            if raised is None:
                continue
            await partial_audit(raised, "", "", action="escalated", by="expiry")
            await notices.later("escalated", raised, people, [w for w in raised.escalate_to if w not in before])
            await core.tell(people, raised, before)
            taken += 1
    return taken
