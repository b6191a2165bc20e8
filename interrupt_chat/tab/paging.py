"""The chat's ``history`` var: the history's rows sent to the page as deltas (decision 22).

:func:`publish` is the one writer, called by :func:`interrupt_chat.tab.driver.publish` when the
history changes (a turn ends, an older row changes) or a thread is shown anew. The page's store
(``components/history.py``) asks for older pages as the person scrolls up
(:meth:`HistoryHandlers.history_older`) and for a reset when it missed a delta
(:meth:`HistoryHandlers.history_resync`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import reflex as rx

from ..agui import AgentSession
from ..model.history import PAGE_ROWS, HistoryDelta, HistoryFeed
from ..model.views import HistoryRows, MessageRow
from . import driver  # (which imports this module: its names are read when the handlers run)

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["HistoryHandlers", "history_rows", "publish", "show_match"]


def history_rows(session: AgentSession) -> list[MessageRow]:
    """Every row of the session's history: the turns before the current one."""
    return _rows(session)[:]


def _rows(session: AgentSession, frozen: Mapping[str, int] | None = None) -> HistoryRows:
    """The history's rows, each made when read (``frozen``: as ``publish`` says)."""
    transcript = session.transcript
    return HistoryRows(transcript.messages[:transcript.tail_start], transcript, session.thread_id, frozen)


class Paged(Protocol):
    """What paging uses of a chat: its history var, the feed that makes its deltas, and Reflex's dirty vars."""

    history: HistoryDelta[Any]
    _history_feed: HistoryFeed | None
    dirty_vars: set[str]


def _feed(chat: Paged) -> HistoryFeed:
    feed = chat._history_feed or HistoryFeed()
    if "history" not in chat.dirty_vars:  # the last delta went out with the last state update
        feed.sent()
    return feed


def _send(chat: Paged, feed: HistoryFeed, delta: HistoryDelta[Any] | None) -> None:
    chat._history_feed = feed  # reassigned: a state manager saves only what was set
    if delta is not None:
        chat.history = delta


def publish(chat: Paged, session: AgentSession, *, reset: bool = False,
            frozen: Mapping[str, int] | None = None) -> None:
    """Send the page what changed in the history (inside the lock); ``reset``: the newest page anew.

    ``frozen``: the chat's ``_frozen`` (stream key -> characters the var held). When a turn joins
    the history, its streamed texts go as the prefix and stream key the page drew them with: the
    page has the rest (``stream_text.jsx`` keeps texts by key), so the turn is not sent twice. A
    page that lost a text asks for it (``resync_stream``), and gets the history whole.
    """
    feed = _feed(chat)
    transcript = session.transcript
    mark = (session.thread_id, *transcript.history_mark)
    if not reset and feed.mark == mark:  # the rows the feed has (or sends) are the history's: none changed
        _send(chat, feed, None)
        return
    rows = _rows(session)  # made as read: the delta's rows; the digests are kept per message
    feed.mark = mark
    if reset:
        _send(chat, feed, feed.reset(session.thread_id, rows, digests=rows.digests()))
        return
    _send(chat, feed, feed.update(session.thread_id, rows, (lambda: _rows(session, frozen)) if frozen else None,
                                  digests=rows.digests()))


def show_match(chat: Paged, session: AgentSession, query: str) -> None:
    """A thread opened from the thread search: the page around the newest message that matches, brought into view.

    A match in the newest page gets that page, marked; without a match (the title matched) the
    newest page already sent stays.
    """
    needle = query.casefold()
    if not needle:
        return
    rows = history_rows(session)
    found = next((i for i in range(len(rows) - 1, -1, -1) if needle in rows[i].content.casefold()), None)
    if found is None:
        return
    around = None if found >= len(rows) - PAGE_ROWS else found  # in the newest page: that page, marked
    feed = _feed(chat)
    feed.mark = (session.thread_id, *session.transcript.history_mark)
    _send(chat, feed, feed.reset(session.thread_id, rows, around=around, focus=rows[found].id))


class HistoryHandlers(rx.State, mixin=True):
    """The history's var and the page store's requests (a mixin of ``ChatState``)."""

    history: HistoryDelta = HistoryDelta()  # the last change sent; the page keeps the rows
    _history_feed: HistoryFeed | None = None

    @rx.event
    async def history_resync(self):
        """The page missed a delta (a reconnect, a reload before its thread is shown): the newest page anew."""
        chat: ChatLike = await driver.ready(self, type(self))  # type: ignore[arg-type]
        publish(chat, chat._session(), reset=True)

    @rx.event
    async def history_older(self, before: int):
        """The person scrolled up to the page's oldest row (index ``before``): the page above it."""
        await self._history_more(before, older=True)

    @rx.event
    async def history_newer(self, after: int):
        """The person scrolled down to the page's newest row (it shows older rows only): the page below it."""
        await self._history_more(after, older=False)

    async def _history_more(self, index: Any, *, older: bool) -> None:
        chat: ChatLike = await driver.ready(self, type(self))  # type: ignore[arg-type]
        feed = _feed(chat)
        if feed.thread_id == chat.thread_id and isinstance(index, int):  # ids come from the page
            rows = _rows(chat._session())
            _send(chat, feed, feed.older(rows, index) if older else feed.newer(rows, index))  # (one page made)
