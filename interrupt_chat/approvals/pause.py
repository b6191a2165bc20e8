"""``pause-all`` (§6.4): a person stops every agent of theirs at once, and turns them back on.

The pause is stored per person, for all of their chats (it survives reloads, restarts and other
workers: :mod:`interrupt_chat.tab.pausing` reads it). Turning it on stops every run of the person in
flight, in whichever worker drives it (the threads the database marks in flight, stopped through the
run registry), and from then on
no rule answers anything and a new message is refused. Both switches are audited (``paused`` /
``unpaused``, by the person) and shown on the person's other tabs (the rules' sync notice).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

import reflex as rx

from ..store import policies as store
from ..store.threads_db import ThreadDBError
from ..tab import driver, pausing, persistence
from ..workers import runs, sync
from ..workers.proxy_reads import tab_token
from .rule_answers import POLICY_NOTICE

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["PauseHandlers", "switch"]

log = logging.getLogger(__name__)


async def switch(owner: str, on: bool, origin: str = "") -> bool:
    """Turn ``owner``'s pause on or off; True when the stored pause is now as asked.

    ``owner``: the owner key. Turning it on stops the person's runs in flight.
    """
    db = persistence.database()
    if db is None or not owner:
        return False
    person = pausing.person_of(owner)
    keys = pausing.owner_keys(owner)
    try:
        if await persistence.db_call(store.set_pause, db, person, on):  # (the audit: no thread, no notification)
            await persistence.db_call(db.record_decision, owner, "", None, "", None, "paused" if on else "unpaused")
        running = await persistence.db_read(store.running_threads, db, keys) if on else []
    except ThreadDBError:
        return False
    for key in running:
        await runs.stop(key)  # the run's worker stops it: its end is saved as stopped
    for each in keys:  # the person's tabs of every chat show the banner (or drop it)
        await sync.changed(each, POLICY_NOTICE, origin)
    return True


class PauseHandlers(rx.State, mixin=True):
    """The chat state's pause: ``paused`` and ``pause-all``'s handler (a mixin of ``ChatState``)."""

    paused: bool = False  # the owner paused their agents: pause-banner, sends refused, no rule answers

    @rx.event(background=True)
    async def toggle_pause(self):
        """``pause-all``: stop every agent of the owner (and every rule), or let them go on again."""
        async with self:
            chat = await driver.ready(self, cast("type[ChatLike]", self.__class__))
            owner, origin, signed_out = chat._owner_key, tab_token(chat), chat.signed_out
        if signed_out or not owner:
            return
        on = not await pausing.paused(owner)  # the stored pause, not this tab's copy: another tab may have turned it
        done = await switch(owner, on, origin)
        async with self:
            chat = cast("ChatLike", self)
            if chat._owner_key == owner and done:
                chat.paused = on
