"""``/insights``: how requests wait and end, read from the audit in the database (contracts §6.5).

One state for every chat's insights page (:class:`InsightsState`): the page names its chat, which
must be one the app declared; the viewer is the chat's owner as the chat itself resolves them (its
``owner=`` function, else the browser's identity). A person sees the requests they asked (any of
their chats) or decided (an assignee, a delegate); ``ic.Chat(insights_admin=fn)`` may show an admin
everyone's. The figures are computed in the database (:mod:`..store.insights`), off the event loop.
"""

from __future__ import annotations

import inspect
import logging
from datetime import UTC, datetime
from typing import Any, cast

import reflex as rx

from ..model.protocols import ChatLike
from ..store import insights as store
from ..store.threads_db import ThreadDBError
from ..tab import driver, hooks, pausing, persistence, server_secret

__all__ = ["DEFAULT_PERIOD", "InsightsState", "is_admin", "scope_of"]

log = logging.getLogger(__name__)

DEFAULT_PERIOD = "7d"
UNAVAILABLE = "The insights could not be read from the database; try again in a moment."


def _chat_class(name: str) -> type[ChatLike] | None:
    """A chat the app declared, by its state's full name (a page's argument: anything may come)."""
    if not isinstance(name, str):
        return None
    for cls in hooks.CHATS.values():
        if cast("Any", cls).get_full_name() == name:
            return cast("type[ChatLike]", cls)
    return None


async def is_admin(chat: ChatLike) -> bool:
    """``Chat(insights_admin=fn)`` says this tab's person sees everyone's (sync or async; an error: no)."""
    fn = getattr(chat.__class__, "insights_admin_fn", None)
    if fn is None or not chat._owner_key:
        return False
    try:
        said = fn(chat)
        if inspect.isawaitable(said):
            said = await said
    except Exception:  # the app's check failing shows the person their own figures, never everyone's
        log.exception("insights: the app's insights_admin check failed")
        return False
    return said is True


def scope_of(owner_key: str, chat_cls: Any, admin: bool) -> store.Scope:
    """Whose rows: everyone's for an admin, else the person's chats (as asker) and their name (as decider)."""
    if admin:
        return store.Scope(admin=True)
    return store.Scope(owners=pausing.owner_keys(owner_key), public=server_secret.public_person(owner_key, chat_cls))


class InsightsState(rx.State):
    """The figures of one insights page: the period, the summary and the four charts' rows."""

    insights_period: str = DEFAULT_PERIOD
    insights_loaded: bool = False  # the figures of ``insights_period`` are in (the summary shows then)
    insights_everyone: bool = False  # an admin: everyone's requests, not only the person's
    insights_error: str = ""
    insights_count: int = 0
    insights_p50_ms: int = 0  # 0 while nothing was decided in the period
    insights_p95_ms: int = 0
    insights_expired_rate: str = "0"  # a fraction from 0 to 1
    time_to_decide: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    outcomes: list[dict[str, Any]] = []
    by_tool: list[dict[str, Any]] = []
    _chat_name: str = ""

    @rx.event(background=True)
    async def load_insights(self, chat_name: str):
        """The page's mount: read the figures of the chosen period for the viewer of ``chat_name``."""
        async with self:
            if _chat_class(chat_name) is None:
                return
            self._chat_name = chat_name
        await self._read()

    @rx.event(background=True)
    async def choose_period(self, period: str):
        """``insights-period``: 24h, 7d or 30d (anything else is ignored)."""
        if period not in store.PERIODS:
            return
        async with self:
            self.insights_period, self.insights_loaded = period, False
        await self._read()

    async def _read(self) -> None:
        async with self:
            chat_cls = _chat_class(self._chat_name)
            if chat_cls is None:
                return
            chat = await driver.ready(self, chat_cls)
            owner, period, admin = chat._owner_key, self.insights_period, await is_admin(chat)
        db = persistence.database()
        found, error = store.Insights(), ""
        if db is not None and owner:
            try:
                found = await persistence.db_read(store.insights, db, scope_of(owner, chat_cls, admin), period,
                                                  datetime.now(UTC))
            except ThreadDBError:
                error = UNAVAILABLE
        async with self:
            if self.insights_period != period:  # another period was chosen meanwhile: its read shows
                return
            self._show(found, admin, error)

    def _show(self, found: store.Insights, admin: bool, error: str) -> None:
        self.insights_count, self.insights_p50_ms, self.insights_p95_ms = (found.count, found.p50_ms or 0,
                                                                           found.p95_ms or 0)
        self.insights_expired_rate = f"{found.expired_rate:g}"
        self.time_to_decide, self.waiting = found.time_to_decide, found.waiting
        self.outcomes, self.by_tool = found.outcomes, found.by_tool
        self.insights_everyone, self.insights_error, self.insights_loaded = admin, error, True
