"""The stream loop: a run's events go through the session; the view is pushed at most 20 times a second.

Lifecycle events push at once; other changes wait for the next tick, and a change followed by
silence (a slow tool, the end of an answer) is still pushed one tick later. The current turn
has its own var (``live``), so a push does not resend the history (docs/decisions/0006).
Runs in flight are kept by (client token, chat state) so that a stop button reaches them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import reflex as rx
from ag_ui.core import BaseEvent, EventType

from . import persistence, routing
from .agui import AgentSession
from .views import message_rows, thread_rows

if TYPE_CHECKING:
    from .state import ChatState

__all__ = ["FLUSH_NOW", "PUSHES_PER_SECOND", "PUSH_INTERVAL", "drive", "keep", "list_threads", "publish", "ready",
           "stop"]

PUSHES_PER_SECOND = 20
PUSH_INTERVAL = 1.0 / PUSHES_PER_SECOND
FLUSH_NOW = frozenset({EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_ERROR, EventType.TOOL_CALL_START,
                       EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT, EventType.MESSAGES_SNAPSHOT,
                       EventType.TEXT_MESSAGE_END, EventType.STEP_STARTED, EventType.STEP_FINISHED})

_LIVE: dict[tuple[str, str], AgentSession] = {}


def stop(client_token: str, chat_name: str) -> bool:
    """Stop the run in flight for this tab's chat, if any (stop button)."""
    session = _LIVE.get((client_token, chat_name))
    return session is not None and session.cancel()


def publish(chat: ChatState, session: AgentSession, *, full: bool = False, starting: bool = False) -> None:
    """Copy the session's transcript and status into the chat's vars (inside the lock).

    The conversation is ``messages`` (the history) followed by ``live`` (the current turn: the
    user's message through its resumes); streaming touches only ``live``. ``starting``: a run is
    about to start, show it as running already.
    """
    transcript = session.transcript
    history, tail = transcript.take_changes()
    split = transcript.tail_start
    if full or history:
        _assign(chat, "messages", message_rows(transcript.messages[:split], transcript))
    if full or tail:
        _assign(chat, "live", message_rows(transcript.messages[split:], transcript))
    pending = session.tracker.pending
    # The last run's failure wins over a re-offered set (S15): the error is what just happened.
    status = ("running" if session.running or starting else "error" if session.error
              else "interrupted" if pending is not None else "idle")
    _assign(chat, "status", status)
    _assign(chat, "error", session.error or "")
    _assign(chat, "step", transcript.step or "")
    _assign(chat, "locked", pending is not None)
    if full or status != "running":
        keep(chat, session)


def keep(chat: ChatState, session: AgentSession) -> None:
    """Record the session in the chat's threads (reassigned, so the state is marked dirty) and list them."""
    chat._sessions = {**chat._sessions, session.thread_id: session}
    list_threads(chat)


def list_threads(chat: ChatState) -> None:
    """The thread list's rows: the database's (or search's) list with this state's threads laid over it."""
    _assign(chat, "threads", thread_rows(chat._sessions, chat.thread_id, chat._summaries, chat._titles,
                                         chat.thread_query))


async def ready(state: rx.State, chat_cls: type[ChatState]) -> ChatState:
    """The chat, its owner's threads restored first if this state has not loaded them (inside the lock).

    A fresh state (a new tab, or any tab after a backend restart, even without a reload) loads
    the owner's threads before its first event does anything, so no event works on, or saves,
    an empty view of them.
    """
    chat = await routing.chat_of(state, chat_cls)
    if not chat.loaded:
        await persistence.restore(chat)
        chat.loaded = True
        chat.decisions = persistence.decision_rows(chat)
        session = chat._session()
        publish(chat, session, full=True)
        await routing.route(state, chat_cls, session)
    return chat


def _assign(state: rx.State, name: str, value: Any) -> None:
    """Set a var only when it changes: every assignment is sent to the browser."""
    if getattr(state, name) != value:
        setattr(state, name, value)


async def drive(state: rx.State, chat_cls: type[ChatState], session: AgentSession,
                events: AsyncGenerator[BaseEvent, None]) -> None:
    """Stream a run into the view, then surface its pending set (S3), save the thread, count down."""
    key = (state.router.session.client_token, chat_cls.get_full_name())
    _LIVE[key] = session

    async def push(route: bool) -> None:
        async with state:
            chat = await routing.chat_of(state, chat_cls)
            if chat.thread_id == session.thread_id:  # the view may show another thread now (S25)
                publish(chat, session)
                if route:
                    await routing.route(state, chat_cls, session)  # S4: RUN_STARTED removes the card

    throttle = _Throttle(push)
    try:
        async for event in events:
            await throttle.event(event.type)
    finally:
        await throttle.close()
        await events.aclose()  # stopped mid-stream: end the run now
        if _LIVE.get(key) is session:
            del _LIVE[key]
        call = None
        async with state:
            chat = await routing.chat_of(state, chat_cls)
            if chat.thread_id == session.thread_id:
                publish(chat, session, full=True)
                call = await routing.route(state, chat_cls, session)
            else:
                keep(chat, session)
            owner = chat._owner_key
        notice = persistence.write(owner, session)  # after the lock; a plain call, so nothing runs in between
        if notice:
            async with state:
                (await routing.chat_of(state, chat_cls)).notice = notice
    await routing.settle(state, chat_cls, call)


class _Throttle:
    """Pushes on lifecycle events and at most once per tick otherwise, with a trailing push."""

    def __init__(self, push: Callable[[bool], Awaitable[None]]) -> None:
        self._push = push
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None  # the trailing push, armed while a change waits
        self._trailing: asyncio.Future[None] | None = None
        self._last = 0.0

    async def event(self, kind: EventType) -> None:
        now = time.monotonic()
        if kind in FLUSH_NOW or now - self._last >= PUSH_INTERVAL:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._last = now
            await self._push(kind == EventType.RUN_STARTED)
        elif self._timer is None:
            self._timer = self._loop.call_later(self._last + PUSH_INTERVAL - now, self._fire)

    def _fire(self) -> None:  # nothing new within a tick: push what waits (its own task; the lock serializes)
        if self._trailing is not None and not self._trailing.done():  # the previous one is still pushing
            self._timer = self._loop.call_later(PUSH_INTERVAL, self._fire)
            return
        self._timer, self._last = None, time.monotonic()
        self._trailing = asyncio.ensure_future(self._push(False))

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._trailing is not None:
            await asyncio.gather(self._trailing, return_exceptions=True)
