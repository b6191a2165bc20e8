"""Runs whose worker is gone: a chat that shows a run nobody drives any more ends it as failed.

With several backend workers (Reflex on Redis), the process that drives a run can die mid-stream
(killed, crashed, redeployed). The shared state still says ``status == "running"``, and nothing
would ever end it. So whenever the chat shows a run and its page (re)connects, the page mounts
:meth:`RunWatchHandlers.watch_run` (``components/chat.py``): if another process drives the run,
:func:`watch` waits while the run is alive (:func:`interrupt_chat.workers.runs.alive`); once its liveness
lapses while the chat still shows it running, the run ends as failed with :data:`ORPHANED_MESSAGE`,
the composer unlocks and the thread is saved as the shared state holds it (its saved history and the
user's message are kept; the part of the answer streamed before the worker died is not), conditionally,
as every orphaned run's end is (:func:`interrupt_chat.tab.persistence.end_orphaned`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

import reflex as rx

from ..agui import AgentSession
from ..workers import runs
from . import driver, persistence, routing

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, StateLike

__all__ = ["GRACE_SECONDS", "ORPHANED_MESSAGE", "POLL_SECONDS", "RunWatchHandlers", "abandon", "key_of", "watch"]

ORPHANED_MESSAGE = persistence.ORPHANED_MESSAGE
POLL_SECONDS = 1.0  # how often a watcher reads a remote run's liveness
GRACE_SECONDS = 2.0  # a run unregisters just before its last push, and registers just after its first


async def key_of(state: StateLike, chat_cls: type[ChatLike]) -> runs.Key:
    """The run registry's key of the thread the tab shows (the one :func:`interrupt_chat.tab.driver.drive` uses)."""
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        return persistence.run_key(chat, chat.thread_id)


async def watch(state: StateLike, chat_cls: type[ChatLike]) -> None:
    """While the chat shows a run that another process drives, wait; end it once that process is gone.

    A run driven here needs no watcher: :func:`interrupt_chat.tab.driver.drive` ends it whatever happens,
    short of this process dying (and then the page reconnects to another one, which watches).
    """
    key = await key_of(state, chat_cls)
    if runs.local(key) is not None:
        return
    while True:
        while await runs.alive(key):
            await asyncio.sleep(POLL_SECONDS)
        await asyncio.sleep(GRACE_SECONDS)
        async with state:
            chat = await routing.chat_of(state, chat_cls)
            if chat.status != "running" or persistence.run_key(chat, chat.thread_id) != key:
                return  # it ended normally (or was ended already), or the tab shows another thread now
            if await runs.alive(key):
                continue  # a new run took the key
            fresh = await persistence.refresh(chat, chat.thread_id)
            session, ended_here = chat._session(), not (fresh.replaced or fresh.busy)
            if ended_here:
                await abandon(chat, session)
            else:  # another tab's run, ended and saved (or a new one started): show it as it is
                await driver.publish(chat, session, full=True, starting=fresh.busy)
            call = await routing.route(state, chat_cls, chat._session())  # a resume's set is offered again (S15)
        await routing.settle(state, chat_cls, call)
        return


async def abandon(chat: ChatLike, session: AgentSession) -> None:
    """End the shown run as failed because its driver is gone (inside the lock): error shown, composer free.

    Its end is written at once, as every orphaned run's is (:func:`interrupt_chat.tab.persistence.end_orphaned`);
    when another tab or worker wrote the thread first, the chat shows what that one wrote instead.
    """
    if await persistence.end_orphaned(chat, session) in (persistence.Commit.WON, persistence.Commit.LOCAL):
        await driver.publish(chat, session, full=True)
        await driver.resync(chat)  # the page may hold texts streamed by the dead run: the var carries them whole
        return
    fresh = await persistence.refresh(chat, chat.thread_id)  # theirs: ended, or a new run on it
    await driver.publish(chat, chat._session(), full=True, starting=fresh.busy)


class RunWatchHandlers(rx.State, mixin=True):
    """The chat state's watcher of runs driven by other processes (a mixin of ``ChatState``)."""

    @rx.event(background=True)
    async def watch_run(self):
        """The page (re)connected while the chat shows a run: end the run if its worker is gone."""
        await watch(self, cast("type[ChatLike]", self.__class__))
