"""What ``ic.Chat(...)`` / ``chat_state(...)`` take, checked when the chat is declared (issue 39 §3).

A declaration mistake (a class where a pair was expected, the pair's halves swapped, a URL
without its scheme) is said in the app builder's terms, with what was expected, at import time,
instead of surfacing later as a Python internal ("cannot unpack non-iterable ...") or as
requests to a path on the app's own backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..assembly.state import InterruptState
from ..model.files import Attachments
from ..tab.endpoint import check_agent_url
from ..tab.endpoint import shown as _shown
from ..tab.tools import FrontendToolState

__all__ = ["check_agent_url", "check_chat", "check_state_args"]  # check_agent_url: from the endpoint

PAIR = "(InterruptState subclass, render_fn) pairs, e.g. interrupts=[(Approvals, approval_slot)]"


def _config(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, InterruptState) and not getattr(value, "_mixin", False)


def _tool(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, FrontendToolState) and not getattr(value, "_mixin", False)


def check_state_args(agent_url: Any, interrupts: Any, headers: Any, owner: Any, tools: Any, name: Any) -> None:
    """``chat_state(...)``'s arguments (the ones that make or find the chat's state class).

    Raises:
        TypeError: an argument of the wrong kind, with what was expected.
        ValueError: an agent URL that is not absolute.
    """
    check_agent_url(agent_url)
    if interrupts is not None:
        if isinstance(interrupts, (str, bytes, Mapping)) or not hasattr(interrupts, "__iter__"):
            raise TypeError(f"interrupts must be a list of {PAIR}; got {_shown(interrupts)}")
        for i, item in enumerate(interrupts):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise TypeError(f"interrupts[{i}] must be a (InterruptState subclass, render_fn) pair, not "
                                f"{_shown(item)}: interrupts takes {PAIR}")
            config, render = item
            if not _config(config) and _config(render) and callable(config):
                raise TypeError(f"interrupts[{i}] is ({_shown(config)}, {_shown(render)}): the pair is swapped; "
                                f"write ({_shown(render)}, {_shown(config)}) - the class first, then its render_fn")
            if not _config(config):
                raise TypeError(f"interrupts[{i}][0] must be a subclass of ic.InterruptState "
                                f"(class Approvals(ic.InterruptState): ...), not {_shown(config)}")
            if not callable(render):
                raise TypeError(f"interrupts[{i}][1] must be a render function (fn(slot) -> rx.Component), "
                                f"not {_shown(render)}")
    if tools is not None:
        if isinstance(tools, (str, bytes, Mapping, type)) or not hasattr(tools, "__iter__"):
            raise TypeError(f"tools must be a list of ic.FrontendToolState subclasses, e.g. tools=[Steps]; "
                            f"got {_shown(tools)}")
        for i, tool in enumerate(tools):
            if not _tool(tool):
                raise TypeError(f"tools[{i}] must be a subclass of ic.FrontendToolState "
                                f"(class Steps(ic.FrontendToolState): ...), not {_shown(tool)}")
    if headers is not None and not (callable(headers) or isinstance(headers, Mapping)):
        raise TypeError(f"headers must be a mapping of header names to values, or fn(chat_state) -> dict; "
                        f"got {_shown(headers)}")
    if isinstance(headers, Mapping):
        for key, value in headers.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"headers must map strings to strings; {key!r} maps to {_shown(value)}")
    if owner is not None and not callable(owner):
        raise TypeError(f"owner must be a function owner(chat_state) -> str (sync or async), not {_shown(owner)}; "
                        "for a fixed owner write owner=lambda chat: 'alice'")
    if name is not None and not (isinstance(name, str) and name.strip()):
        raise TypeError(f"name must be a non-empty string such as name='support', not {_shown(name)}")


def _function(argument: str, value: Any, expected: str) -> None:
    if value is not None and not callable(value):
        raise TypeError(f"{argument} must be {expected}, not {_shown(value)}")


def check_chat(*, tool_renderers: Any, notify: Any, decide_requires_owner: Any, remember: Any, on_feedback: Any,
               attachments: Any) -> None:
    """``ic.Chat(...)``'s other arguments (the options set on the chat's state).

    Raises:
        TypeError: an argument of the wrong kind, with what was expected.
    """
    if tool_renderers is not None:
        if not isinstance(tool_renderers, Mapping):
            raise TypeError("tool_renderers must be a mapping {tool name: render_fn(call)}, "
                            f"not {_shown(tool_renderers)}")
        for key, render in tool_renderers.items():
            if not isinstance(key, str) or not callable(render):
                raise TypeError(f"tool_renderers must map tool names to render functions; {key!r} maps to "
                                f"{_shown(render)}")
    _function("notify", notify, "a function notify(notification) (sync or async)")
    _function("on_feedback", on_feedback, "a function on_feedback(feedback) (sync or async)")
    if decide_requires_owner is not None and not isinstance(decide_requires_owner, bool):
        raise TypeError(f"decide_requires_owner must be True or False, not {_shown(decide_requires_owner)}")
    if remember is not None and not callable(remember) and (
            isinstance(remember, (str, bytes)) or not hasattr(remember, "__iter__")
            or not all(isinstance(tool, str) for tool in remember)):
        raise TypeError("remember must be a collection of tool names (remember={'delete_files'}) or "
                            f"fn(tool_name, interrupt) -> bool, not {_shown(remember)}")
    if attachments is not None and not isinstance(attachments, Attachments):
        raise TypeError(f"attachments must be an ic.Attachments(...), not {_shown(attachments)}")

