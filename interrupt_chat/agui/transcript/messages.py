"""Text messages (``TEXT_MESSAGE_*``) and ``MESSAGES_SNAPSHOT``, which speaks for the whole message list.

Each handler takes the transcript and the event of its type (as :mod:`.fold` lists them). A
reasoning message streams its content and end as a text message does (:func:`content`, :func:`end`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    Message,
    MessagesSnapshotEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolMessage,
)

from ..message_views import MessageView, ToolCallView
from ..snapshot_merge import merge
from ..wire_messages import text_of

if TYPE_CHECKING:
    from .core import Transcript

log = logging.getLogger("interrupt_chat.agui.transcript")  # the reducer's one logger, as before its split


def text_start(t: Transcript, event: TextMessageStartEvent) -> None:
    """A text message opens: a new id, or this turn's own message of that role."""
    message = t._claim(event.message_id, event.role or "assistant", "TEXT_MESSAGE_START")
    t._open(message)
    message.name = event.name or message.name
    t._touch(message.id)


def content(t: Transcript, event: TextMessageContentEvent | ReasoningMessageContentEvent) -> None:
    """A delta of a text or reasoning message (an unknown message's is ignored)."""
    message = t._by_id.get(event.message_id)
    if message is not None and event.delta:
        t._grow(message.id, message.parts, event.delta, "a message")
        t._touch(message.id)


def end(t: Transcript, event: TextMessageEndEvent | ReasoningMessageEndEvent) -> None:
    """A text or reasoning message is complete."""
    message = t._by_id.get(event.message_id)
    if message is not None:
        message.streaming = False
        t._touch(message.id)


def snapshot(t: Transcript, event: MessagesSnapshotEvent) -> None:
    """Merge by id: existing order kept, snapshot versions swapped in, new ids at their snapshot place.

    A new message goes right after the known message before it in the snapshot (a tool result the
    producer renamed lands after its call, not after the answer that followed it: the next run's
    history must keep that order); new messages before every known one are appended, in order.
    Dict lookups only: linear in the snapshot plus the transcript (the snapshot speaks for the
    whole list). A message whose wire form did not change keeps its cached AG-UI model.
    """
    by_id: dict[str, MessageView] = {}  # a repeated id: one message, its last version, at its first place
    for view in (view_from_message(t, m) for m in event.messages):
        by_id[view.id] = view
    if len(by_id) < len(event.messages):
        log.warning("MESSAGES_SNAPSHOT repeats message ids; keeping the last version of each")
    merged = merge(t.messages, list(by_id.values()))
    history_ids = {m.id for m in t.messages[:t.tail_start]}
    replace_messages(t, merged)
    # the tail starts at the first message that was not history: this run's, or new in the snapshot
    t.tail_start = next((i for i, m in enumerate(merged) if m.id not in history_ids), len(merged))
    t._tail_ids = {m.id for m in merged[t.tail_start:]}
    t._history_changed()
    t._tail_dirty = True


def replace_messages(t: Transcript, merged: list[MessageView]) -> None:
    """``merged`` becomes the message list; cached models and their JSON text carry over where the key is the same."""
    old_wire = t._wire
    t.messages = merged
    t._by_id = {message.id: message for message in merged}
    t._init_indexes()
    wire = t._wire
    for view in merged:
        entry = old_wire.get(view.id)
        # the model is a function of the key: equal keys, equal models (whichever view it came from)
        if entry is not None and t._cacheable(view) and t._wire_key(view) == entry[2]:
            wire[view.id] = (view, entry[1], entry[2], entry[3])


def view_from_message(t: Transcript, message: Message) -> MessageView:
    """A snapshot's message as a view; the tool calls it carries or answers are updated in ``t.tool_calls``."""
    fields = message.__dict__  # a field a role lacks is a miss here, not pydantic's raised AttributeError
    role = message.role
    content = fields.get("content")
    view = MessageView(id=message.id, role=role, parts=[text_of(content)] if content else [],
                       name=fields.get("name"), encrypted_value=fields.get("encrypted_value"))
    if content is not None and not isinstance(content, str) and role != "activity":
        view.raw_content = content
    if isinstance(message, AssistantMessage):
        for tool_call in message.tool_calls or []:
            call = t.tool_calls.get(tool_call.id)
            if call is None:  # new in this run's snapshot: the run made it (S27: it may wait for the chat)
                call = t.tool_calls[tool_call.id] = ToolCallView(
                    id=tool_call.id, name=tool_call.function.name, parent_message_id=message.id)
                t._run_tool_calls.add(tool_call.id)
            call.name, call.parent_message_id, call.ended = tool_call.function.name, message.id, True
            call.args_parts[:] = [tool_call.function.arguments]
            view.tool_call_ids.append(tool_call.id)
    elif isinstance(message, ToolMessage):
        view.tool_call_id, view.error = message.tool_call_id, message.error
        call = t.tool_calls.get(message.tool_call_id)
        if call is not None:
            call.result, call.awaiting = view.content, False
    elif isinstance(message, ActivityMessage):
        view.activity_type, view.activity_content, view.parts = message.activity_type, dict(message.content), []
    return view
