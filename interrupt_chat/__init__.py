"""interrupt_chat: a Reflex chat for AG-UI agents that handles their interrupts.

``interrupt_chat.agui`` is the framework-free protocol core. The Reflex API (``chat``,
``InterruptState``, …) is loaded lazily on first use, so importing the core never imports Reflex.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ChatState", "InterruptState", "SlotProps", "chat", "chat_state"]

_LAZY = {
    "ChatState": "interrupt_chat.state",
    "InterruptState": "interrupt_chat.state",
    "SlotProps": "interrupt_chat.components.interrupt_slot",
    "chat": "interrupt_chat.components.chat",
    "chat_state": "interrupt_chat.components.chat",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'interrupt_chat' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
