"""Sending the person's message: refresh, claim, run (docs/decisions/0016)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from . import driver, persistence
from .agui import AgentSession
from .endpoint import NO_AGENT_MESSAGE

if TYPE_CHECKING:
    from .state import ChatState

__all__ = ["CLAIM_ATTEMPTS", "DELETED_NOTICE", "HEADERS_FAILED_MESSAGE", "send"]

log = logging.getLogger(__name__)

CLAIM_ATTEMPTS = 3  # conditional writes lost to other tabs before an action gives up with a notice
DELETED_NOTICE = "That thread was deleted in another window."
HEADERS_FAILED_MESSAGE = "The request to the assistant could not be prepared; nothing was sent. Try again."


async def send(chat: ChatState, text: str) -> None:
    """The composer's text as the thread's next user message: the thread is claimed before the run starts.

    The copy is brought up to the database's revision first; the claim is a conditional write of
    the user's message with the run marked in flight (docs/decisions/0016). When another tab wrote
    first, the send is tried again on their copy (if the thread is still free), at most
    ``CLAIM_ATTEMPTS`` times. Nothing typed is lost on a restart: the message is stored first.
    """
    text = str(text).strip()
    if not text:
        return
    async with chat:
        await driver.ready(chat, chat.__class__)
        for _ in range(CLAIM_ATTEMPTS):  # the thread is claimed before anything leaves (docs/decisions/0016)
            fresh = await persistence.refresh(chat, chat.thread_id)
            if fresh.deleted:
                chat.thread_id, chat.notice = "", DELETED_NOTICE
                await driver.publish(chat, chat._session(), full=True)
                return
            session = chat._session()
            chat.notice = ("Wait for the current answer, or stop it." if fresh.busy or session.running
                           or chat.status == "running"
                           else "Answer or cancel the agent's request first."
                           if session.tracker.pending is not None or session.tool_waits else "")
            if chat.notice:
                await driver.publish(chat, session, full=fresh.replaced)
                return
            if not chat._client().url:
                chat.error, chat.status = NO_AGENT_MESSAGE, "error"
                return
            if not await _set_headers(chat, session):
                return
            events = session.send(text)
            claim = await persistence.commit(chat, session, in_flight=True)
            if claim in (persistence.Commit.WON, persistence.Commit.LOCAL):
                break
            await events.aclose()  # never started: nothing left
            await persistence.reload(chat, session.thread_id)  # another tab moved it on: try on theirs
        else:
            chat.notice = persistence.CONFLICT_NOTICE
            return
        await driver.publish(chat, session, full=True, starting=True)
    await driver.drive(chat, chat.__class__, session, events)


async def _set_headers(chat: ChatState, session: AgentSession) -> bool:
    """The next run's headers on the session's client (inside the lock).

    Returns False, with an error shown, when ``chat(headers=fn)`` raised: nothing is sent.
    """
    try:
        headers = await chat.agent_headers()
    except Exception:  # the app's function: log it, keep the chat usable
        log.exception("chat(headers=...) raised; nothing was sent to the agent")
        chat.error, chat.status = HEADERS_FAILED_MESSAGE, "error"
        return False
    if session.client is not None:
        session.client.headers = headers
    return True
