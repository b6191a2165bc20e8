"""Saving and restoring a tab's threads, called explicitly by the chat (never while publishing).

The store itself is :mod:`interrupt_chat.thread_store`; this module only knows which owner a
chat state belongs to. Failures are logged and never break the chat.
"""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING

from .thread_store import thread_store
from .views import thread_rows

if TYPE_CHECKING:
    from .state import ChatState

__all__ = ["owner_of", "restore", "save"]

log = logging.getLogger(__name__)


async def owner_of(chat: ChatState) -> str:
    """The store key of a chat: its owner (``chat(owner=...)``, else the browser's id) and the chat's name."""
    fn = chat.__class__.owner_fn  # (type() of a StateProxy is the proxy)
    owner = fn(chat) if fn is not None else chat.owner()
    if inspect.isawaitable(owner):
        owner = await owner
    return f"{owner}|{chat.get_full_name()}" if owner else ""


def save(chat: ChatState) -> None:
    """Persist the chat's threads and current thread (S25)."""
    store, owner = thread_store(), chat._owner_key
    if store is None or not owner:
        return
    try:
        store.save(owner, chat._sessions, chat.thread_id)
    except Exception:
        log.exception("thread store: could not save")


async def restore(chat: ChatState) -> None:
    """Bring the owner's threads into a state that has not loaded them (new tab, backend restart; S25)."""
    store, owner = thread_store(), await owner_of(chat)
    chat._owner_key = owner
    if store is None or not owner:
        return
    saved = store.load(owner)
    if saved is not None:
        sessions, current = saved
        chat._sessions = {**sessions, **chat._sessions}  # never drop a thread this state already holds
        chat.thread_id = chat.thread_id if chat.thread_id in chat._sessions else current
        chat.threads = thread_rows(chat._sessions, chat.thread_id)
