"""The concrete state classes behind each ``chat()``: one ``ChatState`` subclass per configuration.

A chat is identified by its agent URL and its configurations; the same ``chat()`` on two pages
shares one conversation state (docs/decisions/0004). A configuration class serves one chat:
passing it to a second one is an error (subclass it instead: ``class Other(Approvals)``).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from typing import Any, cast

from .agui.sanitize import redact
from .live import LiveTurn
from .state import ChatState, InterruptState
from .tools import FrontendToolState

__all__ = ["Headers", "new_chat_state"]

Headers = dict[str, str] | Callable[["ChatState"], dict[str, str]]  # fixed, or made on the server for each run

NAME_CHARS = 40


def new_chat_state(key: str, *, agent_url: str | None, configs: list[type[InterruptState]],
                   headers: Headers | None = None, owner: Callable[[ChatState], Any] | None = None,
                   tools: list[type[FrontendToolState]] | None = None) -> type[ChatState]:
    """The ``ChatState`` subclass for ``key``, created on first use with its default slot config.

    Raises:
        ValueError: a configuration is already attached to another chat.
    """
    module = sys.modules[__name__]
    name = _class_name(key, agent_url, headers, owner)
    existing = getattr(module, name, None)
    if existing is not None:
        return existing
    tools = list(tools or [])
    attached: list[type[InterruptState] | type[FrontendToolState]] = [*configs, *tools]
    for config in attached:
        served = config._chat_state  # not ``owner``: that is the chat's owner function, kept below
        if served is not None:
            where = served.agent_url or "the default agent"
            raise ValueError(f"{config.__name__} already serves the chat for {where}; a configuration serves one"
                             f" chat: subclass it (class Other({config.__name__}): ...) for another one")
    declared = [tool.declaration() for tool in tools]  # a bad tool fails here, at compile time
    if len({t.name for t in declared}) != len(declared):
        raise ValueError("two frontend tools of one chat have the same tool_name")
    # type() builds them through their metaclass (ConcreteSubclasses): concrete states of these bases
    default = cast("type[InterruptState]", type(f"{name}_DefaultSlot", (InterruptState,), {"__module__": __name__}))
    chat_cls = cast("type[ChatState]", type(name, (ChatState,), {"__module__": __name__}))
    chat_cls.live_state = cast("type[LiveTurn]", type(f"{name}_Live", (LiveTurn,), {"__module__": __name__}))
    chat_cls.agent_url, chat_cls.configs, chat_cls.default_config = agent_url, list(configs), default
    chat_cls.headers = headers if callable(headers) else dict(headers or {})
    chat_cls.owner_fn = owner
    chat_cls.tool_states = tools
    for config in [*attached, default]:
        config._chat_state = chat_cls
    setattr(module, name, chat_cls)
    setattr(module, default.__name__, default)
    setattr(module, chat_cls.live_state.__name__, chat_cls.live_state)
    return chat_cls


def _class_name(key: str, agent_url: str | None, headers: Headers | None, owner: Callable[..., Any] | None) -> str:
    """A readable, collision-free class name: the key's letters and digits, then a hash of the chat's identity.

    State names reach the browser: the readable part never holds the URL's credentials or query,
    and header values (tokens) only enter the hash.
    """
    shown = redact(key, agent_url) if agent_url else key
    readable = re.sub(r"[^0-9a-zA-Z]+", "_", shown).strip("_")[:NAME_CHARS]
    identity = json.dumps([key, agent_url, _identity(headers), _identity(owner)])
    return f"Chat_{readable}_{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def _identity(value: Any) -> Any:
    """What tells two chats apart: a function by its name, a mapping by its items (only ever hashed)."""
    if callable(value):
        return f"{value.__module__}.{value.__qualname__}"
    return sorted(value.items()) if isinstance(value, dict) else value
