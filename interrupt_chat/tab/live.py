"""The current turn's rows (``live``) in a state of their own, so a push of the turn re-renders only them.

Reflex re-renders every component that reads a state whenever any var of that state changes.
The chat's state is read all over the chat: the status line, the composer, the thread list, the
history and the audit trail. A push that changes only the current turn (its first text, a tool
call's status, a run's end) would re-render all of them, and the history's every row with them.
``live`` therefore lives in a :class:`LiveTurn` made for each chat class (:mod:`.registry`):
the rows of the current turn are the only components that read it.

:func:`interrupt_chat.tab.driver.publish`, the one writer of ``live``, loads the state (:func:`load`)
when the turn changes, so a Redis state manager reads it only then; :func:`live_of` is the
synchronous look-up once it is loaded (tests, benchmarks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import reflex as rx

from ..model.views import MessageRow
from .mixins import ConcreteSubclasses

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["LiveTurn", "live_of", "load"]


class LiveTurn(rx.State, mixin=True, metaclass=ConcreteSubclasses):
    """The current turn of one chat: the user's message through its answer and resumes."""

    live: list[MessageRow] = []  # pushed while the turn streams; the history goes as ChatState.history


def live_of(chat: ChatLike) -> LiveTurn:
    """The chat's current turn, already loaded (by :func:`load`)."""
    return cast(LiveTurn, chat._get_state_from_cache(chat.__class__.live_state))


async def load(chat: ChatLike) -> LiveTurn:
    """Load the chat's current turn into the state tree (a Redis state manager loads states on demand)."""
    return await chat.get_state(chat.__class__.live_state)
