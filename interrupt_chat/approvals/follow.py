"""What a tab shows of a change made elsewhere (:mod:`interrupt_chat.workers.sync` calls it, inside the tab's lock).

The shown thread is read again from the database (a running turn's rows come with the notice:
they are in no database until the turn ends); the thread list, the audit trail and, when the tab
showed it, the inbox are read again too. A thread this tab drives itself is left alone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..model.views import MessageRow, ToolCallRow
from ..tab import driver, live, persistence, routing, saving, trail
from ..workers import sync
from . import rule_answers
from .inbox import fill
from .people.core import PEOPLE_NOTICE

if TYPE_CHECKING:
    from ..model.protocols import ChatLike
    from ..workers.sync import Notice, Watch

__all__ = ["follow", "follow_rest", "follow_tab"]

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


async def follow_rest(chat: ChatLike, notice: Notice) -> None:
    """After the thread was pushed (inside the lock again): the audit trail, the thread list, the inbox."""
    if notice.thread_id == chat.thread_id:
        await trail.show_trail(chat)
    summaries = await saving.summaries(chat._owner_key)
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
    """Live sync's follower: bring the tab ``token`` up to date with ``notice`` (its lock taken here)."""
    try:
        async with sync.modify(token, seen.state) as chat:
            if chat is not None and not hasattr(chat, "_owner_key"):  # another page of the thread (/decide)
                if notice.thread_id == seen.thread_id and notice.rows is None:
                    await chat.follow_notice()
                return
            if chat is None or chat._owner_key != notice.owner or await persistence.owner_of(chat) != notice.owner:
                sync.forget(notice.owner, token)  # (a log-out in the app, with no event since, is seen here too)
                return
            call, rest = await follow(chat, notice)
        if rest:  # the thread is on screen: now what goes with it
            async with sync.modify(token, seen.state) as chat:
                if chat is not None and chat._owner_key == notice.owner:
                    await follow_rest(chat, notice)
        if call is not None:  # S17: a set new to this tab owes its configuration's handler, outside the lock
            await _handle(token, seen.state, call)
    except Exception:  # a tab that cannot follow stays as it is (it refreshes before acting anyway)
        log.exception("sync: could not bring a tab up to date")


async def _handle(token: str, state_name: str, call: Any) -> None:
    async with sync.modify(token, state_name) as chat:
        if chat is None:
            return
        config = await chat.get_state(call.config_cls)
    result = await routing.run_handler(config, call.props)
    async with sync.modify(token, state_name) as chat:
        if chat is not None:
            routing.keep_result(await chat.get_state(call.config_cls), call, result)
