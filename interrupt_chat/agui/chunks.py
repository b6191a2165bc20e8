"""Expand ``*_CHUNK`` events into start / content / end, as ``@ag-ui/client``'s chunks stage does.

A chunked message or tool call stays open while chunks with its id (or no id) keep coming; it
closes when a chunk names another id or another lifecycle or message event arrives, and at the
end of the stream. ``RAW``, ``ACTIVITY_*``, ``REASONING_ENCRYPTED_VALUE`` and ``SUBAGENT_*`` pass
through without closing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from ag_ui.core import (
    BaseEvent,
    EventType,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from .errors import ChunkError

__all__ = ["ChunkError", "ChunkExpander"]

_CHUNK_TYPES = {EventType.TEXT_MESSAGE_CHUNK, EventType.TOOL_CALL_CHUNK, EventType.REASONING_MESSAGE_CHUNK}
# Neither lifecycle nor message events: they pass through without closing an open chunk (transform.ts).
_PASS_THROUGH = {EventType.RAW, EventType.ACTIVITY_SNAPSHOT, EventType.ACTIVITY_DELTA,
                 EventType.REASONING_ENCRYPTED_VALUE, EventType.SUBAGENT_STARTED, EventType.SUBAGENT_FINISHED,
                 EventType.SUBAGENT_ERROR}


@dataclass
class _Open:
    kind: EventType  # the chunk type that opened it
    id: str


class ChunkExpander:
    """Stateful expander for one stream. ``feed`` returns the events to pass on, in order."""

    def __init__(self) -> None:
        """Start with nothing open."""
        self._open: _Open | None = None

    def feed(self, event: BaseEvent) -> list[BaseEvent]:
        """Expand one event: a chunk becomes start / content events, anything else passes on.

        Raises:
            ChunkError: the first chunk of a message or tool call has no id (or no tool name).
        """
        if event.type in _PASS_THROUGH:
            return [event]
        if event.type not in _CHUNK_TYPES:
            return [*self.flush(), event]
        # the event's class follows from its type (AG-UI's union is discriminated by ``type``)
        if event.type == EventType.TOOL_CALL_CHUNK:
            return self._tool_call(cast(ToolCallChunkEvent, event))
        return self._message(cast("TextMessageChunkEvent | ReasoningMessageChunkEvent", event))

    def flush(self) -> list[BaseEvent]:
        """Close whatever chunked message or tool call is open."""
        opened, self._open = self._open, None
        if opened is None:
            return []
        if opened.kind == EventType.TEXT_MESSAGE_CHUNK:
            return [TextMessageEndEvent(message_id=opened.id)]
        if opened.kind == EventType.REASONING_MESSAGE_CHUNK:
            return [ReasoningMessageEndEvent(message_id=opened.id)]
        return [ToolCallEndEvent(tool_call_id=opened.id)]

    def _reopen(self, kind: EventType, chunk_id: str | None) -> tuple[list[BaseEvent], str | None]:
        """Close a different open chunk; return (closing events, id to start or None if continuing)."""
        if self._open and self._open.kind == kind and chunk_id in (None, self._open.id):
            return [], None
        closing = self.flush()
        if not chunk_id:
            what = "tool call" if kind == EventType.TOOL_CALL_CHUNK else "message"
            raise ChunkError(f"the first {kind.value} of a {what} needs an id")
        self._open = _Open(kind, chunk_id)
        return closing, chunk_id

    def _message(self, event: TextMessageChunkEvent | ReasoningMessageChunkEvent) -> list[BaseEvent]:
        out, start_id = self._reopen(event.type, event.message_id)
        assert self._open is not None  # _reopen leaves this message open
        message_id = self._open.id
        if isinstance(event, TextMessageChunkEvent):
            if start_id:
                out.append(TextMessageStartEvent(message_id=start_id, role=event.role or "assistant", name=event.name))
            if event.delta:
                out.append(TextMessageContentEvent(message_id=message_id, delta=event.delta))
        else:
            if start_id:
                out.append(ReasoningMessageStartEvent(message_id=start_id, role="reasoning"))
            if event.delta:
                out.append(ReasoningMessageContentEvent(message_id=message_id, delta=event.delta))
        return out

    def _tool_call(self, event: ToolCallChunkEvent) -> list[BaseEvent]:
        out, start_id = self._reopen(event.type, event.tool_call_id)
        assert self._open is not None  # _reopen leaves this tool call open
        if start_id:
            if not event.tool_call_name:
                raise ChunkError(f"the first TOOL_CALL_CHUNK of {start_id} needs a toolCallName")
            out.append(ToolCallStartEvent(tool_call_id=start_id, tool_call_name=event.tool_call_name,
                                          parent_message_id=event.parent_message_id))
        if event.delta:
            out.append(ToolCallArgsEvent(tool_call_id=self._open.id, delta=event.delta))
        return out
