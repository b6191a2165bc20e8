"""A tab that reconnects to a fresh backend state gets its thread in the hydrate's own snapshot.

A backend restart (or a reconnect to a worker whose states were lost) gives the tab a fresh state.
Reflex's hydrate then sends that state's defaults (no card, status idle) and the chat restored its
thread only in the ``ensure_loaded`` event that followed: the card vanished for one update (~150 ms).

Each chat marks, in the tab's session storage, that this tab shows it (``ChatState.shown_here``).
Reflex sends session storage with the reconnect's ``hydrate_and_load``; the chats it names are restored
(:func:`interrupt_chat.tab.driver.ready`) before Reflex takes the snapshot, under the same lock, so the
snapshot holds the thread and the card never disappears. The names are hostile input like any event
argument: only chat states are restored, and only the tab's own person's threads (its socket's identity).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

import reflex as rx
from reflex_base.constants.state import FIELD_MARKER

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["SHOWN_VAR", "install"]

log = logging.getLogger(__name__)

SHOWN_VAR = "shown_here"
MAX_CHATS = 16  # chats restored by one hydrate at most (a page shows a few)

_installed = False


async def restore_shown(root: Any, names: Any) -> None:
    """Restore, in the hydrate's lock, each chat the tab says it shows and whose state has not loaded."""
    from . import driver, hooks

    done = 0
    for key in list(names)[:256] if isinstance(names, dict) else []:
        state_name, _, var_name = str(key).rpartition(".")
        if var_name.removesuffix(FIELD_MARKER) != SHOWN_VAR or done >= MAX_CHATS:
            continue
        try:
            cls = rx.State.get_class_substate(state_name)
        except ValueError:
            continue
        if hooks.CHATS.get(cls.__name__) is not cls:  # a chat's state (the assembly's registry made it)
            continue
        done += 1
        chat = await root.get_state(cls)
        if not chat.loaded:
            await driver.ready(chat, cast("type[ChatLike]", cls))


def install() -> None:
    """Wrap Reflex's ``hydrate_and_load`` once per process (its handler object; the event name stays)."""
    global _installed
    if _installed:
        return
    handler = rx.State.hydrate_and_load
    original = handler.fn

    async def hydrate_and_load(self: Any, vars: dict[str, Any] | None = None, hashes: list[str] | None = None) -> Any:
        if vars:
            try:
                await restore_shown(self, vars)
            except Exception:  # the hydrate must go on; the chat's own loader restores it next
                log.exception("restoring a chat in the hydrate failed; its loader restores it next")
        return await original(self, vars, hashes)

    hydrate_and_load.__name__ = original.__name__
    hydrate_and_load.__qualname__ = original.__qualname__
    hydrate_and_load.__doc__ = original.__doc__
    object.__setattr__(handler, "fn", hydrate_and_load)
    _installed = True
