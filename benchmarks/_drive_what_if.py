"""WHAT-IF (benchmarks only; ``interrupt_chat`` is not changed): ``_drive`` with the trailing push
armed as one timer per tick instead of a pending ``__anext__`` task and an ``asyncio.wait`` per event.

The real ``_drive`` (interrupt_chat/state.py) wraps every event in a task
(``asyncio.ensure_future(iterator.__anext__())``) and, while something is unpublished, waits for it
with ``asyncio.wait(..., timeout=...)``: each event costs a task, a waiter future, a timer handle
and at least one extra turn of the event loop (a ``select`` call). This variant keeps the plain
``async for`` over the run (no task per event) and, when an event is left unpublished, arms one
``loop.call_at(last_push + interval)`` that starts the trailing push; the next immediate or
interval push disarms it. Same decisions otherwise (``_FLUSH_NOW``, ``_PUSH_INTERVAL``, the route
on ``RUN_STARTED``, the final publish and surfacing). Concurrency: the trailing push runs as its
own task; in the app both it and the stream's pushes go through ``async with state`` (the state
lock), and the final publish waits for it.

Used by ``stream_throughput`` (cost per event) and ``push_throttle`` (same push schedule and
trailing latency on the virtual clock).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import BaseEvent, EventType

from interrupt_chat.agui import AgentSession
from interrupt_chat.state import _FLUSH_NOW, _LIVE, _PUSH_INTERVAL, _chat_of, _route_pending, _tick_expiry


async def drive_one_timer(state: Any, chat_cls: type, session: AgentSession,
                          events: AsyncIterator[BaseEvent]) -> None:
    """Drop-in for ``interrupt_chat.state._drive`` (same arguments, same pushes)."""
    key = (state.router.session.client_token, chat_cls.get_full_name())
    _LIVE[key] = session
    loop = asyncio.get_running_loop()

    async def push(route: bool = False) -> None:
        async with state:
            chat = await _chat_of(state, chat_cls)
            if chat.thread_id == session.thread_id:
                chat._publish(session)
                if route:
                    await _route_pending(state, chat_cls, session)

    last_push = 0.0
    timer: asyncio.TimerHandle | None = None
    trailing: set[asyncio.Task] = set()

    def fire() -> None:  # nothing arrived within a tick of an unpublished change
        nonlocal timer, last_push
        timer, last_push = None, loop.time()  # at once: an event arriving now must not push again
        task = asyncio.ensure_future(push())
        trailing.add(task)
        task.add_done_callback(trailing.discard)

    try:
        async for event in events:
            now = loop.time()
            if event.type in _FLUSH_NOW or now - last_push >= _PUSH_INTERVAL:
                if timer is not None:
                    timer.cancel()
                    timer = None
                await push(route=event.type == EventType.RUN_STARTED)
                last_push = now
            elif timer is None:
                timer = loop.call_at(last_push + _PUSH_INTERVAL, fire)
    finally:
        if timer is not None:
            timer.cancel()
        if trailing:
            await asyncio.gather(*trailing, return_exceptions=True)
        if _LIVE.get(key) is session:
            del _LIVE[key]
        async with state:
            chat = await _chat_of(state, chat_cls)
            if chat.thread_id == session.thread_id:
                chat._publish(session, full=True)
                await _route_pending(state, chat_cls, session)
            else:
                chat._store(session)
    await _tick_expiry(state, chat_cls)
