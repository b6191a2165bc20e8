"""The concrete state classes behind each ``chat()``: one ``ChatState`` subclass per configuration.

A chat is identified by its agent URL and its configurations; the same ``chat()`` on two pages
shares one conversation state (docs/decisions/0004). A configuration class serves one chat:
passing it to a second one is an error (subclass it instead: ``class Other(Approvals)``).
"""

from __future__ import annotations

import hashlib
import re
import sys

from .state import ChatState, InterruptState

__all__ = ["new_chat_state"]

NAME_CHARS = 40


def new_chat_state(key: str, *, agent_url: str | None, configs: list[type[InterruptState]]) -> type[ChatState]:
    """The ``ChatState`` subclass for ``key``, created on first use with its default slot config.

    Raises:
        ValueError: a configuration is already attached to another chat.
    """
    module = sys.modules[__name__]
    name = _class_name(key)
    existing = getattr(module, name, None)
    if existing is not None:
        return existing
    for config in configs:
        owner = config._chat_state
        if owner is not None:
            raise ValueError(f"{config.__name__} already serves the chat for {owner.agent_url or 'the default agent'}; "
                             f"a configuration serves one chat: subclass it (class Other({config.__name__}): ...) "
                             "for another one")
    default = type(f"{name}_DefaultSlot", (InterruptState,), {"__module__": __name__})
    chat_cls = type(name, (ChatState,), {"__module__": __name__})
    chat_cls.agent_url, chat_cls.configs, chat_cls.default_config = agent_url, list(configs), default
    for config in [*configs, default]:
        config._chat_state = chat_cls
    setattr(module, name, chat_cls)
    setattr(module, default.__name__, default)
    return chat_cls


def _class_name(key: str) -> str:
    """A readable, collision-free class name: the key's letters and digits, then a hash of the whole key."""
    readable = re.sub(r"[^0-9a-zA-Z]+", "_", key).strip("_")[:NAME_CHARS]
    return f"Chat_{readable}_{hashlib.sha256(key.encode()).hexdigest()[:12]}"
