"""One way to claim a thread for an action: refresh, act, commit; on a loss reload and try again (decision 0016).

Sending a message, answering a tool call, recording an answer and rewriting a branch all act on
the copy of a thread this state holds, then write it conditionally on the revision it was read at
(:func:`~interrupt_chat.tab.persistence.commit`). Of two tabs or workers that act on the same
revision, one wins; the other undoes what its try started, reloads the thread and acts again on
top of what won, at most :data:`CLAIM_ATTEMPTS` times before it gives up with
:data:`~interrupt_chat.tab.persistence.CONFLICT_NOTICE`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from ..agui import AgentSession
from ..store.branches import BranchWrite
from . import pausing, persistence

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["CLAIM_ATTEMPTS", "Attempt", "claim"]

T = TypeVar("T")

CLAIM_ATTEMPTS = 3  # conditional writes lost to other tabs before an action gives up with a notice


@dataclass
class Attempt(Generic[T]):
    """One try of an action, ready to be written: the copy to claim, and what the action made of it."""

    session: AgentSession  # the copy to write; on a loss its thread is reloaded
    value: T  # what the caller goes on with once the claim holds (a run's events, an answer's outcome)
    in_flight: bool = False  # the write claims a run that starts once it holds (persistence.commit)
    branches: BranchWrite | None = None  # hidden versions stored and dropped in the same write
    undo: Callable[[], Awaitable[object]] | None = None  # on a loss, before the reload: e.g. close unstarted events
    unless_paused: bool = False  # the person's pause refuses the write (a new run): read with it (decision 0034)
    deleted: Callable[[], Awaitable[object]] | None = None  # the thread was deleted meanwhile: the action ends here


async def claim(chat: ChatLike, attempt: Callable[[], Awaitable[Attempt[T] | None]],
                attempts: int = CLAIM_ATTEMPTS) -> Attempt[T] | None:
    """Refresh, act, commit, inside the state lock: ``attempt()`` until its write holds, at most ``attempts`` times.

    ``attempt()`` brings the thread up to the database (``persistence.refresh``), checks that the
    action still applies, and acts on the copy; it returns None to stop without writing (it shows why
    itself, or there is nothing to do). Its :class:`Attempt` is written with
    :func:`~interrupt_chat.tab.persistence.commit`: won (or kept in memory, without a database), it is
    returned. Lost to another writer (or the thread was deleted): ``undo`` runs, the thread is
    reloaded (:func:`~interrupt_chat.tab.persistence.reload`) and ``attempt()`` runs again. An
    attempt that starts a run (``unless_paused``) is refused while the person is paused:
    :data:`~interrupt_chat.tab.pausing.PAUSED_MESSAGE`, and nothing is written. One whose thread was
    deleted meanwhile ends with its ``deleted`` (when it has one) instead of another try.

    Returns:
        The attempt whose write holds; None when ``attempt()`` stopped, or when every try lost (then
        :data:`~interrupt_chat.tab.persistence.CONFLICT_NOTICE` is shown).
    """
    for _ in range(attempts):
        step = await attempt()
        if step is None:
            return None
        person = pausing.person_of(chat._owner_key) if step.unless_paused else ""
        written = await persistence.commit(chat, step.session, in_flight=step.in_flight, branches=step.branches,
                                           unless_paused=person)
        if step.unless_paused:  # the stored pause (another tab or worker may have turned it): pause-banner
            chat.paused = written is persistence.Commit.PAUSED
        if written in (persistence.Commit.WON, persistence.Commit.LOCAL):
            return step
        if step.undo is not None:
            await step.undo()
        if written is persistence.Commit.DELETED and step.deleted is not None:
            await step.deleted()
            return None
        await persistence.reload(chat, step.session.thread_id)  # another tab moved it on: try again on theirs
        if written is persistence.Commit.PAUSED:  # (the copy as stored: without what the attempt added)
            chat.notice = pausing.PAUSED_MESSAGE
            return None
    chat.notice = persistence.CONFLICT_NOTICE
    return None
