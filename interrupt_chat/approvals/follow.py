"""What a tab shows of a change made elsewhere (:mod:`interrupt_chat.workers.sync` calls it, inside the tab's lock).

The shown thread is read again from the database (a running turn's rows come with the notice:
they are in no database until the turn ends); the thread list, the audit trail and, when the tab
showed it, the inbox are read again too. A thread this tab drives itself is left alone.

The thread is drawn first. What goes with it (the rest: the trail and ratings, the thread list,
the inbox) follows as a notice of its own behind those waiting for the tab, so a running turn's
rows are not held back by it; its reads are made before the tab's lock, at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model.views import MessageRow, ToolCallRow
from ..store.threads_db import ThreadDBError
from ..tab import driver, feedback, live, persistence, routing, saving, trail
from ..workers import sync
from . import rule_answers
from .inbox import fill
from .people.core import PEOPLE_NOTICE

if TYPE_CHECKING:
    from ..model.protocols import ChatLike
    from ..store.feedback import Feedback
    from ..store.threads_db import ThreadSummary
    from ..store.types import DecisionRecord
    from ..workers.sync import Notice, Watch

__all__ = ["Rest", "follow", "follow_rest", "follow_tab", "read_rest"]

log = logging.getLogger(__name__)


async def follow(chat: ChatLike, notice: Notice) -> tuple[routing.HandlerCall | None, bool]:
    """Bring the tab's shown thread up to date with ``notice`` (inside its lock).

    Returns the handler call a new set owes (S17), and whether the rest (:func:`follow_rest`) is to
    be read too. The rest goes in a second turn of the lock: the thread (a new card) is pushed first.
    """
    if notice.thread_id == rule_answers.POLICY_NOTICE:  # the owner's rules changed, not a thread
        await rule_answers.relist(chat)
        return None, False
    if notice.thread_id == PEOPLE_NOTICE:  # a request assigned to this person changed (someone else's thread)
        if chat._inbox_shown:
            await fill(chat)
        return None, False
    mine = chat._sessions.get(notice.thread_id)
    if mine is not None and mine.running:
        return None, False  # this tab drives the run: it shows it already
    if notice.rows is not None:  # a turn streaming: only a tab that shows its thread has anything to draw
        if notice.thread_id == chat.thread_id:
            await _show_turn(chat, notice)
        return None, False
    if notice.thread_id == chat.thread_id:
        return await _show_thread(chat, type(chat), notice.thread_id, notice.revision), True
    return None, True


@dataclass
class Rest:
    """What goes with a changed thread, read before the tab's lock (:func:`read_rest`)."""

    thread_id: str = ""  # the thread whose trail and ratings were read ("": none was)
    records: list[DecisionRecord] | None = None
    ratings: list[Feedback] | None = None
    summaries: list[ThreadSummary] | None = None
    failed: ThreadDBError | None = None  # the trail's or the ratings' read failed


async def read_rest(notice: Notice, seen: Watch) -> Rest:
    """The rest of a change, read at once, without the lock: the owner's list; a shown thread's trail and ratings.

    Which thread the tab shows is what it last told live sync (``seen``): if it moved since, the
    lock's side reads its trail (:func:`follow_rest`).
    """
    thread_id = notice.thread_id if seen.thread_id == notice.thread_id else ""
    got = await asyncio.gather(trail.records_of(notice.owner, thread_id), feedback.of_thread(notice.owner, thread_id),
                               saving.summaries(notice.owner), return_exceptions=True)
    records, ratings, summaries = got
    for result in got:
        if isinstance(result, BaseException) and not isinstance(result, ThreadDBError):
            raise result
    failed = records if isinstance(records, ThreadDBError) else ratings if isinstance(ratings, ThreadDBError) else None
    return Rest(thread_id, None if isinstance(records, BaseException) else records,
                None if isinstance(ratings, BaseException) else ratings,
                None if isinstance(summaries, BaseException) else summaries, failed)


async def follow_rest(chat: ChatLike, notice: Notice, read: Rest | None = None) -> None:
    """After the thread was pushed (inside the lock again): the audit trail, the thread list, the inbox.

    ``read``: what :func:`read_rest` found before the lock (else it is read here).
    """
    if notice.thread_id == chat.thread_id:
        if read is None or read.thread_id != chat.thread_id:
            await trail.show_trail(chat)
        elif read.failed is not None:
            persistence.unavailable(chat, read.failed)
        else:
            chat.decisions = trail.rows_of(chat, read.records or [])
            if read.ratings is not None:
                feedback.apply(chat, read.ratings)
    summaries = read.summaries if read is not None else await saving.summaries(chat._owner_key)
    if summaries is not None and not chat.thread_query:
        chat._summaries = summaries
        driver.list_threads(chat)
    if chat._inbox_shown:
        await fill(chat)


async def _show_turn(chat: ChatLike, notice: Notice) -> None:
    """Another tab's running turn on the shown thread: its rows as they are now, whole."""
    rows = [_row(raw) for raw in notice.rows or []]
    turn = await live.load(chat)
    if turn.live != rows:
        turn.live = rows
    if chat.status != "running":
        chat.status = "running"
    if not chat.following:
        chat.following = True
    if chat.step != notice.step:
        chat.step = notice.step


async def _show_thread(chat: ChatLike, chat_cls: type[ChatLike], thread_id: str,
                       revision: int = 0) -> routing.HandlerCall | None:
    """The shown thread as the database has it now (at ``revision`` at least): messages, status, cards."""
    if thread_id not in chat._sessions:
        await persistence.load_thread(chat, thread_id)
    fresh = await persistence.refresh(chat, thread_id, revision)
    busy = fresh.busy
    if fresh.deleted:  # as in the tab that deleted it: the newest other thread, or a new one
        chat.thread_id = next((row["id"] for row in chat.threads if row["id"] != thread_id), "")
        if not chat.thread_id or await persistence.load_thread(chat, chat.thread_id) is None:
            chat.thread_id = ""
    session = chat._session()
    await driver.publish(chat, session, full=True, starting=busy)
    return await routing.route(chat, chat_cls, session)  # (its trail follows: follow_rest)


def _row(raw: dict[str, Any]) -> MessageRow:
    calls = [ToolCallRow(**call) for call in raw.get("tool_calls") or []]
    return MessageRow(**{**raw, "tool_calls": calls})


async def follow_tab(token: str, seen: Watch, notice: Notice) -> None:
    """Live sync's follower: bring the tab ``token`` up to date with ``notice`` (its lock taken here).

    A change is followed in two steps: the thread (a new card drawn at once), then the rest, as a
    notice of its own (``trail``) that waits behind the notices already waiting for this tab.
    """
    try:
        if notice.trail:
            read = await read_rest(notice, seen)
            async with sync.modify(token, seen.state) as chat:
                if await _followed(chat, token, seen, notice):
                    await follow_rest(chat, notice, read)
            return
        async with sync.modify(token, seen.state) as chat:
            if not await _followed(chat, token, seen, notice):
                return
            call, rest = await follow(chat, notice)
        if rest:  # the thread is on screen: now what goes with it
            sync.follow_later(token, seen, dataclasses.replace(notice, rows=None, step="", revision=0, trail=True))
        if call is not None:  # S17: a set new to this tab owes its configuration's handler, outside the lock
            _spawn(_handle(token, seen.state, call))  # (the tab's next notices do not wait for it)
    except Exception:  # a tab that cannot follow stays as it is (it refreshes before acting anyway)
        log.exception("sync: could not bring a tab up to date")


async def _followed(chat: Any, token: str, seen: Watch, notice: Notice) -> bool:
    """Whether this tab (inside its lock) follows the notice here: it is a chat of the notice's owner."""
    if chat is not None and not hasattr(chat, "_owner_key"):  # another page of the thread (/decide)
        if notice.thread_id == seen.thread_id and notice.rows is None:
            await chat.follow_notice()
        return False
    if chat is None or chat._owner_key != notice.owner or await persistence.owner_of(chat) != notice.owner:
        sync.forget(notice.owner, token)  # (a log-out in the app, with no event since, is seen here too)
        return False
    return True


_handlers: set[asyncio.Task[None]] = set()


def _spawn(call: Coroutine[Any, Any, None]) -> None:
    task = asyncio.ensure_future(call)
    _handlers.add(task)
    task.add_done_callback(_ended)


def _ended(task: asyncio.Task[None]) -> None:
    _handlers.discard(task)
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("sync: a handler of a set new to a tab failed", exc_info=exc)


async def _handle(token: str, state_name: str, call: Any) -> None:
    async with sync.modify(token, state_name) as chat:
        if chat is None:
            return
        config = await chat.get_state(call.config_cls)
    result = await routing.run_handler(config, call.props)
    async with sync.modify(token, state_name) as chat:
        if chat is not None:
            routing.keep_result(await chat.get_state(call.config_cls), call, result)
