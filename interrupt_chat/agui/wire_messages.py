"""A transcript message as the next run sends it: its AG-UI model, and the key that says when to rebuild it.

Pure functions of a :class:`~.message_views.MessageView` and the transcript's tool calls, so that
:class:`~.transcript.Transcript` can cache each model and build it again only when its key changes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ag_ui.core import (
    AssistantMessage,
    DeveloperMessage,
    FunctionCall,
    Message,
    ReasoningMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from .message_views import MessageView, ToolCallView

__all__ = ["build_message", "cacheable", "text_of", "wire_key"]

Calls = Mapping[str, ToolCallView]


def cacheable(view: MessageView, calls: Calls) -> bool:
    """A change to one of its tool calls reaches it (touches name the call's parent): it owns them all."""
    ids = view.tool_call_ids
    return not ids or all(i in calls and calls[i].parent_message_id == view.id for i in ids)


def wire_key(view: MessageView, calls: Calls) -> tuple[Any, ...]:
    """Everything :func:`build_message` reads, besides the id: equal keys build equal models."""
    ids = view.tool_call_ids
    tool_calls = tuple((c.id, c.name, c.args_text, c.encrypted_value)
                       for c in (calls[i] for i in ids if i in calls)) if ids else ()
    return (view.role, view.content, view.raw_content, view.name, view.encrypted_value, view.tool_call_id,
            view.error, tool_calls)


def build_message(view: MessageView, calls: Calls) -> Message | None:
    """The message's AG-UI model; None for activity messages and empty assistant turns (never sent back)."""
    role = view.role
    content = view.raw_content if view.raw_content is not None else view.content
    if role == "user":
        return UserMessage(id=view.id, content=content, name=view.name, encrypted_value=view.encrypted_value)
    if role == "assistant":
        own = [calls[i] for i in view.tool_call_ids if i in calls]
        if not view.content and not own:
            return None
        return AssistantMessage(
            id=view.id, content=view.content or None, name=view.name, encrypted_value=view.encrypted_value,
            tool_calls=[ToolCall(id=c.id, type="function", encrypted_value=c.encrypted_value,
                                 function=FunctionCall(name=c.name, arguments=c.args_text or "{}"))
                        for c in own] or None)
    if role == "tool":
        return ToolMessage(id=view.id, content=content, tool_call_id=view.tool_call_id or "",
                           error=view.error, encrypted_value=view.encrypted_value)
    if role == "reasoning":
        return ReasoningMessage(id=view.id, content=view.content, encrypted_value=view.encrypted_value)
    if role == "system":
        return SystemMessage(id=view.id, content=view.content, name=view.name)
    if role == "developer":
        return DeveloperMessage(id=view.id, content=view.content, name=view.name)
    return None  # activity messages are UI-only


def text_of(content: Any) -> str:
    """Text of a message content: a string, or the text parts of a multimodal list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [getattr(part, "text", None) or (part.get("text") if isinstance(part, dict) else None)
                 for part in content]
        return "".join(t for t in texts if t)
    return json.dumps(content, default=str)
