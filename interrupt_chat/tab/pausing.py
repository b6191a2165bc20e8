"""The person's pause (``pause-all``, §6.4) as the chat reads it: a stored flag, the database its arbiter.

While it is on, a new message is refused (nothing reaches the agent) and the chat shows
``pause-banner``; the rules answer nothing (:mod:`interrupt_chat.approvals.rule_answers`). It is
turned on and off on the policies page (:mod:`interrupt_chat.approvals.pause`). A run's claim reads
it with its write (:mod:`.claims`, ``unless_paused``), not before it.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any, cast

from ..store import policies as store
from ..store.threads_db import ThreadDBError
from . import hooks
from .persistence import database, db_read

__all__ = ["DECIDED_BY", "PAUSED_MESSAGE", "owner_keys", "paused", "person_of"]

log = logging.getLogger(__name__)

PAUSED_MESSAGE = ("Your agents are paused: nothing was sent. Resume them on the policies page to send "
                  "messages again.")

DECIDED_BY: ContextVar[str] = ContextVar("interrupt_chat_decided_by", default="person")
"""Who gives the answer being recorded: ``person`` (a card), or a server-side path's ``link``, ``bulk``, ``expiry``."""


def person_of(owner: str) -> str:
    """The person of an owner key (``"<owner>|<chat state>"``): a pause holds for all of their chats."""
    return owner.rsplit("|", 1)[0]


def owner_keys(owner: str) -> list[str]:
    """The owner keys of ``owner``'s person in every chat of the app, ``owner`` first (a pause, their insights)."""
    person = person_of(owner)
    return list(dict.fromkeys([owner, *(f"{person}|{cast('Any', c).get_full_name()}" for c in hooks.CHATS.values())]))


async def paused(owner: str) -> bool:
    """Whether the person of ``owner`` (an owner key) paused their agents; False without a database or an owner.

    A database that cannot be read says "not paused": the chat goes on working in memory while its
    database is away (as it does for everything else), and its rules answer nothing meanwhile.
    """
    db = database()
    if db is None or not owner:
        return False
    try:
        return await db_read(store.paused_since, db, person_of(owner)) is not None
    except ThreadDBError:
        log.warning("the pause could not be read")
        return False
