"""Answers given on the server, with no tab of the owner open: decision links and expiry.

An answer goes through the same path as the inbox's (:func:`interrupt_chat.tab.answers.record`: the
thread is read fresh, the answer checked and claimed by a conditional write), on a chat state
that belongs to no browser: a detached state tree whose owner is forced to the thread's owner.
The resume then runs in the background, in a context of its own (no tab receives its stream);
its end is saved and every open tab of the owner shows it live (:mod:`interrupt_chat.workers.sync`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import reflex as rx
from reflex.istate.data import SessionData

from ..agui import new_id
from ..tab import answers, driver, pausing, persistence
from ..workers import lane

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["Answered", "answer", "detached"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answered:
    """What a server-side answer came to: ``sent`` (recorded, and resumed when it was the last), else why not."""

    recorded: bool
    message: str = ""


def detached(chat_cls: type[ChatLike], label: str) -> ChatLike:
    """A chat state of no browser tab (its own state tree, a client token of its own)."""
    root = rx.State(_reflex_internal_init=True)  # type: ignore[call-arg]  # plain rx.State() raises outside pytest
    token = f"{label}-{new_id('server')}"
    root.rx_router_session = SessionData(client_token=token, client_ip="", session_id=token)
    return root.get_substate(chat_cls.get_full_name().split("."))  # type: ignore[return-value]


async def answer(chat_cls: type[ChatLike], owner_key: str, thread_id: str, verb: str, payload: Any,
                 interrupt_id: str, run_id: str, by: str, *, shown: str = "") -> Answered:
    """Answer one interrupt of ``owner_key``'s thread as ``by`` (link, expiry or bulk); resume in the background."""
    forced, deciding = persistence.FORCED_OWNER.set(owner_key), pausing.DECIDED_BY.set(by)
    try:
        chat = detached(chat_cls, by)
        await driver.ready(chat, chat_cls)
        await persistence.load_thread(chat, thread_id)  # ready() loads the newest thread only
        errors: list[str] = []
        outcome, _moved = await answers.record(chat, thread_id, _set_of(run_id), verb, payload, interrupt_id or None,
                                               lambda card_id, message: errors.append(message), shown=shown)
        payload = None  # S23: the tracker holds it now
        if outcome is None:
            return Answered(False, errors[0] if errors else chat.notice or "There was nothing to answer.")
        if by == "expiry":  # the backend cancelled them because they expired: one "expired" entry each
            expired = {a.interrupt_id for a in outcome.audits if a.action == "expired"}
            outcome.audits[:] = [a for a in outcome.audits
                                 if not (a.action == "cancelled" and a.interrupt_id in expired)]
        for audit in outcome.audits:
            audit.by = by
            if by == "expiry" and audit.action == "cancelled":
                audit.action = "expired"
            if by == "expiry" and audit.detail:  # nobody decided it: no actor
                audit.detail = {k: v for k, v in audit.detail.items() if k not in ("actor", "onBehalfOf")}
        session = chat._sessions[thread_id]
    finally:
        persistence.FORCED_OWNER.reset(forced)
        pausing.DECIDED_BY.reset(deciding)
    background = contextvars.Context()  # no tab's event context: the stream goes to no page
    background.run(persistence.FORCED_OWNER.set, owner_key)
    hold = lane.hand_over(background)  # a person's click (an assignee's, in the inbox): their resume goes first
    task = asyncio.get_running_loop().create_task(_conclude(chat, chat_cls, session, outcome, hold),
                                                  name="interrupt_chat.approvals.headless", context=background)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return Answered(True)


_tasks: set[asyncio.Task[None]] = set()
CONCURRENT_RESUMES = 8  # server-side resumes in flight at once, per worker (a bulk action sends many)
_gates: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


def _gate() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    if loop not in _gates:
        _gates.clear()  # a loop of the past (tests run several) is done with
        _gates[loop] = asyncio.Semaphore(CONCURRENT_RESUMES)
    return _gates[loop]


def _set_of(run_id: str) -> Any:
    return lambda pending: pending is not None and (pending.run_id or "") == run_id


async def _conclude(chat: ChatLike, chat_cls: type[ChatLike], session: Any, outcome: answers.Outcome,
                    hold: lane.Hold | None = None) -> None:
    try:
        async with _gate():
            await answers.conclude(chat, chat_cls, session, outcome)
    except Exception:  # a run in the background: logged, never raised into nothing
        log.exception("a server-side answer's resume failed")
    finally:
        if hold is not None:  # (the agent's first answer closed it already, unless nothing reached the agent)
            hold.close()
