"""Saving and restoring a tab's threads, called explicitly by the chat (never while publishing).

The store itself is :mod:`interrupt_chat.thread_store`; this module only knows which owner a
chat state belongs to. Failures are logged and never break the chat.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .thread_store import thread_store
from .views import thread_rows

if TYPE_CHECKING:
    from .state import ChatState

__all__ = ["owner_of", "restore", "save"]

log = logging.getLogger(__name__)


def owner_of(chat: ChatState) -> str:
    """The store key of a chat: the tab's client token and the chat's state name ("" without a token)."""
    token = chat.router.session.client_token
    return f"{token}|{chat.get_full_name()}" if token else ""


def save(chat: ChatState) -> None:
    """Persist the chat's threads and current thread (S25)."""
    store, owner = thread_store(), owner_of(chat)
    if store is None or not owner:
        return
    try:
        store.save(owner, chat._sessions, chat.thread_id)
    except Exception:
        log.exception("thread store: could not save")


def restore(chat: ChatState) -> None:
    """A fresh state for a known tab (after a backend restart): bring its threads back (S25)."""
    store, owner = thread_store(), owner_of(chat)
    if chat._sessions or store is None or not owner:
        return
    saved = store.load(owner)
    if saved is not None:
        chat._sessions, chat.thread_id = saved
        chat.threads = thread_rows(chat._sessions, chat.thread_id)
