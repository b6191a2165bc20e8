"""The concrete state classes behind each chat: one ``ChatState`` subclass per chat identity.

A chat's identity is its ``name``, else its configuration and tool classes (``"default"`` for a
chat with neither); never its agent URL, headers or owner function, so a frontend built with one
agent URL still talks to a backend started with another (docs/decisions/0017). Declaring the
same identity again returns the same class: arguments left out are taken from the first
declaration, and arguments that differ are an error. A configuration class serves one chat:
passing it to a second one is an error (subclass it instead: ``class Other(Approvals)``).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from typing import Any, cast

from ..agui.sanitize import redact
from ..model.old_paths import old_name
from ..tab import hooks
from ..tab.live import LiveTurn
from ..tab.tools import FrontendToolState
from .state import ChatState, InterruptState

# A state's name holds its module, and the database keys a chat's threads by that name: the chat
# classes keep the module they had before the layers (0024), so no stored thread changes owner.
STATE_MODULE = "interrupt_chat.registry"

__all__ = ["Headers", "identity_key", "legacy_class_name", "new_chat_state"]

Headers = dict[str, str] | Callable[["ChatState"], dict[str, str]]  # fixed, or made on the server for each run

NAME_CHARS = 40


def identity_key(configs: list[type[InterruptState]], tools: list[type[FrontendToolState]],
                 name: str | None) -> str:
    """A chat's identity: its ``name``, else its configuration and tool classes, else ``"default"``."""
    if name:
        return f"name:{name}"
    names = [config.get_full_name() for config in configs] + [f"tool:{t.get_full_name()}" for t in tools]
    return "|".join(names) or "default"


def new_chat_state(key: str, *, agent_url: str | None, configs: list[type[InterruptState]],
                   headers: Headers | None = None, owner: Callable[[ChatState], Any] | None = None,
                   tools: list[type[FrontendToolState]] | None = None,
                   legacy_name: str | None = None) -> type[ChatState]:
    """The ``ChatState`` subclass for the identity ``key``, created on first use with its default slot config.

    ``legacy_name``: the class name this chat had before identities left the URL out; its
    owners' stored threads are moved to the new name on first use (``persistence.owner_of``).

    Raises:
        ValueError: a configuration is already attached to another chat, or ``key`` is already
            declared with a different agent URL, headers, owner, configurations or tools.
    """
    module = sys.modules[__name__]
    name = class_name(key)
    tools = list(tools or [])
    existing = getattr(module, name, None)
    if existing is not None:
        _merge(existing, key, agent_url=agent_url, configs=list(configs), headers=headers, owner=owner, tools=tools)
        return cast("type[ChatState]", existing)
    _check_free([*configs, *tools])
    _check_tools(tools)
    # type() builds them through their metaclass (ConcreteSubclasses): concrete states of these bases
    default = cast("type[InterruptState]", type(f"{name}_DefaultSlot", (InterruptState,), {"__module__": STATE_MODULE}))
    chat_cls = cast("type[ChatState]", type(name, (ChatState,), {"__module__": STATE_MODULE}))
    chat_cls.live_state = cast("type[LiveTurn]", type(f"{name}_Live", (LiveTurn,), {"__module__": STATE_MODULE}))
    chat_cls.agent_url, chat_cls.configs, chat_cls.default_config = agent_url, list(configs), default
    chat_cls.headers = headers if callable(headers) else dict(headers or {})
    chat_cls.owner_fn = owner
    chat_cls.tool_states = tools
    chat_cls.identity = key
    chat_cls.legacy_names = [legacy_name] if legacy_name and legacy_name != name else []
    for config in [*configs, *tools, default]:
        config._chat_state = chat_cls
    setattr(module, name, chat_cls)
    hooks.CHATS[name] = chat_cls  # (expiry's sweeper finds the chats it serves here)
    setattr(module, default.__name__, default)
    setattr(module, chat_cls.live_state.__name__, chat_cls.live_state)
    return chat_cls


def _check_free(attached: list[type[InterruptState]] | list[Any]) -> None:
    for config in attached:
        served = config._chat_state  # not ``owner``: that is the chat's owner function, kept below
        if served is not None:
            where = served.agent_url or "the default agent"
            raise ValueError(f"{config.__name__} already serves the chat for {where}; a configuration serves one"
                             f" chat: subclass it (class Other({config.__name__}): ...) for another one")


def _check_tools(tools: list[type[FrontendToolState]]) -> None:
    declared = [tool.declaration() for tool in tools]  # a bad tool fails here, at compile time
    if len({t.name for t in declared}) != len(declared):
        raise ValueError("two frontend tools of one chat have the same tool_name")


def _merge(chat_cls: type[ChatState], key: str, *, agent_url: str | None, configs: list[type[InterruptState]],
           headers: Headers | None, owner: Callable[[ChatState], Any] | None,
           tools: list[type[FrontendToolState]]) -> None:
    """A second declaration of one chat: what it leaves out comes from the first, what it changes is an error."""
    shown = key.removeprefix("name:")
    clashes = []
    if agent_url is not None and chat_cls.agent_url is not None and agent_url != chat_cls.agent_url:
        before, after = redact(chat_cls.agent_url, chat_cls.agent_url), redact(agent_url, agent_url)
        clashes.append(f"agent URL ({before} vs {after})")
    if headers is not None and chat_cls.headers and _identity(headers) != _identity(chat_cls.headers):
        clashes.append("headers")
    if owner is not None and chat_cls.owner_fn is not None and _identity(owner) != _identity(chat_cls.owner_fn):
        clashes.append("owner")
    if configs and chat_cls.configs and configs != chat_cls.configs:
        clashes.append("interrupts")
    if tools and chat_cls.tool_states and tools != chat_cls.tool_states:
        clashes.append("tools")
    if clashes:
        raise ValueError(f"the chat {shown!r} is already declared with another {', '.join(clashes)}: declare it once"
                         " (ic.Chat(...)) and reuse it, or give the second chat its own name=")
    if agent_url is not None and chat_cls.agent_url is None:
        chat_cls.agent_url = agent_url
    if headers is not None and not chat_cls.headers:
        chat_cls.headers = headers if callable(headers) else dict(headers)
    if owner is not None and chat_cls.owner_fn is None:
        chat_cls.owner_fn = owner
    if configs and not chat_cls.configs:
        _check_free(configs)
        chat_cls.configs = list(configs)
        for config in configs:
            config._chat_state = chat_cls
    if tools and not chat_cls.tool_states:
        _check_free(tools)
        _check_tools(tools)
        chat_cls.tool_states = list(tools)
        for tool in tools:
            tool._chat_state = chat_cls


def class_name(key: str) -> str:
    """A readable, collision-free class name: the identity's letters and digits, then a hash of it."""
    # a named chat shows its name; another, its configurations' own class names (not their full path)
    shown = key.removeprefix("name:") if key.startswith("name:") else "_".join(
        part.rsplit(".", 1)[-1].rsplit("____", 1)[-1] for part in key.split("|"))
    readable = re.sub(r"[^0-9a-zA-Z]+", "_", shown).strip("_")[:NAME_CHARS]
    return f"Chat_{readable}_{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def legacy_class_name(key: str, agent_url: str | None, headers: Headers | None,
                      owner: Callable[..., Any] | None) -> str:
    """The class name a chat had before 0017 (its key held the URL; the hash also held headers and owner).

    State names reach the browser: the readable part never held the URL's credentials or query,
    and header values (tokens) only entered the hash.
    """
    shown = redact(key, agent_url) if agent_url else key
    readable = re.sub(r"[^0-9a-zA-Z]+", "_", shown).strip("_")[:NAME_CHARS]
    identity = json.dumps([key, agent_url, _identity(headers), _identity(owner)])
    return f"Chat_{readable}_{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def _identity(value: Any) -> Any:
    """What tells two chats apart: a function by its name, a mapping by its items (only ever hashed)."""
    if callable(value):
        return f"{old_name(value.__module__)}.{value.__qualname__}"  # as stored before the layers
    return sorted(value.items()) if isinstance(value, dict) else value
