"""Reasoning: ``REASONING_MESSAGE_START`` and ``REASONING_ENCRYPTED_VALUE``.

A reasoning message's content and end fold as a text message's (:func:`.messages.content`,
:func:`.messages.end`). Each handler takes the transcript and the event of its type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ag_ui.core import ReasoningEncryptedValueEvent, ReasoningMessageStartEvent

from ..message_views import MessageView, ToolCallView

if TYPE_CHECKING:
    from .core import Transcript


def start(t: Transcript, event: ReasoningMessageStartEvent) -> None:
    """A reasoning message opens: a new id, or this turn's own reasoning message."""
    t._open(t._claim(event.message_id, "reasoning", "REASONING_MESSAGE_START"))


def encrypted_value(t: Transcript, event: ReasoningEncryptedValueEvent) -> None:
    """An opaque value for a message or a tool call, sent back with it (a UI does not draw it)."""
    entity = event.entity_id
    target: ToolCallView | MessageView | None = (
        t.tool_calls.get(entity) if event.subtype == "tool-call" else t._by_id.get(entity))
    if target is not None:
        target.encrypted_value = event.encrypted_value
        owner = target.parent_message_id if isinstance(target, ToolCallView) else target.id
        t._wire.pop(owner, None)  # sent back with the message: not drawn, so not a UI change
