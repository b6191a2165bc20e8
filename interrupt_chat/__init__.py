"""interrupt_chat: a Reflex chat for AG-UI agents that handles their interrupts.

``interrupt_chat.agui`` is the framework-free protocol core. The Reflex API (``Chat``,
``chat``, ``InterruptState``, …) is loaded lazily on first use, so importing the core never imports Reflex.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names load on first use
    from .components.chat import chat, chat_state
    from .components.decide import decide_page
    from .components.declaration import Chat
    from .components.inbox import approvals_inbox
    from .components.interrupt_slot import SlotProps
    from .components.policies import policy_list
    from .components.threads import audit_trail, thread_list
    from .components.tool_wait import ToolCall
    from .emit_tuning import tune_emit
    from .endpoint import set_default_agent_url
    from .expiry import expiry_sweeper
    from .files import Attachments
    from .gc_tuning import tune_gc
    from .reasons import for_reasons
    from .state import ChatState, InterruptState
    from .tools import FrontendToolState

__all__ = ["Attachments", "Chat", "ChatState", "FrontendToolState", "InterruptState", "SlotProps", "ToolCall",
           "approvals_inbox", "audit_trail", "chat", "chat_state", "decide_page", "expiry_sweeper", "for_reasons",
           "policy_list", "set_default_agent_url", "thread_list", "tune_emit", "tune_gc"]

_LAZY = {
    "Attachments": "interrupt_chat.files",
    "Chat": "interrupt_chat.components.declaration",
    "ChatState": "interrupt_chat.state",
    "InterruptState": "interrupt_chat.state",
    "FrontendToolState": "interrupt_chat.tools",
    "ToolCall": "interrupt_chat.components.tool_wait",
    "SlotProps": "interrupt_chat.components.interrupt_slot",
    "chat": "interrupt_chat.components.chat",
    "chat_state": "interrupt_chat.components.chat",
    "decide_page": "interrupt_chat.components.decide",
    "set_default_agent_url": "interrupt_chat.endpoint",
    "expiry_sweeper": "interrupt_chat.expiry",
    "tune_gc": "interrupt_chat.gc_tuning",
    "tune_emit": "interrupt_chat.emit_tuning",
    "for_reasons": "interrupt_chat.reasons",
    "thread_list": "interrupt_chat.components.threads",
    "approvals_inbox": "interrupt_chat.components.inbox",
    "audit_trail": "interrupt_chat.components.threads",
    "policy_list": "interrupt_chat.components.policies",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'interrupt_chat' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, lazy ones included."""
    return sorted([*globals(), *__all__])
