"""The concrete state classes behind each ``chat()``: one ``ChatState`` subclass per configuration.

A chat is identified by its agent URL and its configurations; the same ``chat()`` on two pages
shares one conversation state (docs/decisions/0004).
"""

from __future__ import annotations

import sys

from .state import ChatState, InterruptState

__all__ = ["new_chat_state"]


def new_chat_state(key: str, *, agent_url: str | None, configs: list[type[InterruptState]]) -> type[ChatState]:
    """The ``ChatState`` subclass for ``key``, created on first use with its default slot config."""
    module = sys.modules[__name__]
    name = "Chat_" + "".join(ch if ch.isalnum() else "_" for ch in key)
    existing = getattr(module, name, None)
    if existing is not None:
        return existing
    default = type(f"{name}_DefaultSlot", (InterruptState,), {"__module__": __name__})
    chat_cls = type(name, (ChatState,), {"__module__": __name__})
    chat_cls.agent_url, chat_cls.configs, chat_cls.default_config = agent_url, list(configs), default
    for config in [*configs, default]:
        config._chat_state = chat_cls
    setattr(module, name, chat_cls)
    setattr(module, default.__name__, default)
    return chat_cls
