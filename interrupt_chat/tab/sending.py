"""Sending the person's message: refresh, claim, run (docs/decisions/0016)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from ag_ui.core import BaseEvent

from ..agui import AgentSession
from . import attaching, claims, driver, persistence
from .endpoint import NO_AGENT_MESSAGE

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["CLAIM_ATTEMPTS", "DELETED_NOTICE", "HEADERS_FAILED_MESSAGE", "refreshed", "send", "set_headers"]

log = logging.getLogger(__name__)

CLAIM_ATTEMPTS = claims.CLAIM_ATTEMPTS  # conditional writes lost to other tabs before an action gives up
DELETED_NOTICE = "That thread was deleted in another window."
HEADERS_FAILED_MESSAGE = "The request to the assistant could not be prepared; nothing was sent. Try again."


async def send(chat: ChatLike, text: str) -> None:
    """The composer's text as the thread's next user message: the thread is claimed before the run starts.

    The copy is brought up to the database's revision first; the claim is a conditional write of
    the user's message with the run marked in flight (docs/decisions/0016). When another tab wrote
    first, the send is tried again on their copy (if the thread is still free), at most
    ``CLAIM_ATTEMPTS`` times. Nothing typed is lost on a restart: the message is stored first.
    """
    text = str(text).strip()
    if not text and not chat.attachments:
        return
    async with chat:
        await driver.ready(chat, chat.__class__)
        if chat.signed_out:  # nobody (logged out, another origin): nothing goes to the agent
            return
        tries = 0

        async def attempt() -> claims.Attempt[AsyncGenerator[BaseEvent, None]] | None:
            nonlocal tries
            tries += 1  # the first try acts on a copy this process knows current (decision 0034); a retry reads
            return await _try_send(chat, text, trust=tries == 1)

        claimed = await claims.claim(chat, attempt)  # claimed before anything leaves
        if claimed is None:
            return
        session, events, owner = claimed.session, claimed.value, chat._owner_key
        await attaching.sent(chat, session.thread_id)
        await driver.publish(chat, session, full=True, starting=True)
    await driver.drive(chat, chat.__class__, session, events, owner)  # (its owner read here: no lock to read it)


async def _try_send(chat: ChatLike, text: str,
                    trust: bool = False) -> claims.Attempt[AsyncGenerator[BaseEvent, None]] | None:
    """Inside the lock, one try of :func:`send`: refresh, check, add the message; None: nothing to claim.

    ``trust``: a copy at the revision this process last wrote or read is not checked first (the
    claim's conditional write checks it); a refusal on such a copy reads the head after all.
    """
    fresh = await refreshed(chat, trust=trust)
    if fresh is None:
        return None
    session = chat._session()
    if fresh.busy and not session.running and chat.status != "running":
        fresh = await _saved(chat, fresh)  # this tab's own run just ended: its end is being saved
        session = chat._session()  # the refresh may have brought a newer copy
    chat.notice = ("Wait for the current answer, or stop it." if fresh.busy or session.running
                   or chat.status == "running"
                   else "Answer or cancel the agent's request first."
                   if session.tracker.pending is not None or session.tool_waits else "")
    if chat.notice and fresh.trusted:  # refused on trust: the stored thread decides
        return await _try_send(chat, text)
    if chat.notice:
        await driver.publish(chat, session, full=fresh.replaced)
        return None
    if not chat._client().url:
        chat.error, chat.status = NO_AGENT_MESSAGE, "error"
        return None
    if not await set_headers(chat, session):
        return None
    events = session.send(text, files=attaching.parts(chat))
    # (undo: never started); the stored pause refuses the claim (another tab or worker may have turned it on)
    return claims.Attempt(session, events, in_flight=True, undo=events.aclose, unless_paused=True,
                          deleted=lambda: _left(chat))  # (a copy taken on trust learns it at the claim)


async def refreshed(chat: ChatLike, *, trust: bool = False) -> persistence.Fresh | None:
    """Inside the lock, before a claim: the shown thread brought up to the database; None when it was deleted.

    A deleted thread is left (the chat shows a new one) with :data:`DELETED_NOTICE`. ``trust``: as
    :func:`~interrupt_chat.tab.persistence.refresh`'s.
    """
    fresh = await persistence.refresh(chat, chat.thread_id, trust=trust)
    if fresh.deleted:
        await _left(chat)
        return None
    return fresh


async def _left(chat: ChatLike) -> None:
    """The shown thread was deleted in another tab or worker: its copy goes, the chat shows a new one, and says so."""
    chat._sessions = {k: v for k, v in chat._sessions.items() if k != chat.thread_id}
    chat.thread_id, chat.notice = "", DELETED_NOTICE
    await driver.publish(chat, chat._session(), full=True)


SAVE_WAIT = 1.0  # seconds a send waits for the end of this tab's own last run to be saved


async def _saved(chat: ChatLike, fresh: persistence.Fresh) -> persistence.Fresh:
    """Inside the lock: the head again until the run that just ended here is saved (at most ``SAVE_WAIT``).

    A run's end is shown before it is saved (the save is after the lock): a message sent in between,
    right after Stop, would otherwise be refused as if another tab were running.
    """
    deadline = asyncio.get_running_loop().time() + SAVE_WAIT
    while fresh.busy and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
        fresh = await persistence.refresh(chat, chat.thread_id)
    return fresh


async def set_headers(chat: ChatLike, session: AgentSession) -> bool:
    """The next run's headers on the session's client (inside the lock).

    Returns False, with an error shown, when ``chat(headers=fn)`` raised: nothing is sent. Also False,
    silently, for a tab with nobody (:mod:`.identity`): it sends nothing, with the app's headers least of all.
    """
    if chat.signed_out or not chat._owner_key:
        return False
    try:
        headers = await chat.agent_headers()
    except Exception:  # the app's function: log it, keep the chat usable
        log.exception("chat(headers=...) raised; nothing was sent to the agent")
        chat.error, chat.status = HEADERS_FAILED_MESSAGE, "error"
        return False
    if session.client is not None:
        session.client.headers = headers
    return True
