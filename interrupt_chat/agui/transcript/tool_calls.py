"""Tool calls: ``TOOL_CALL_*`` events, where a result goes, and the marks a chat sets on a call.

Each handler takes the transcript and the event of its type (as :mod:`.fold` lists them). A call
whose arguments the shared state follows (PredictState, :mod:`.shared_state`) moves the state as
they stream and when they end.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ag_ui.core import ToolCallArgsEvent, ToolCallEndEvent, ToolCallResultEvent, ToolCallStartEvent

from ..errors import ProtocolViolation
from ..message_views import MessageView, ToolCallView
from ..wire_messages import text_of

if TYPE_CHECKING:
    from .core import Transcript


def start(t: Transcript, event: ToolCallStartEvent) -> None:
    """A call starts on its parent message; one replayed after HITL streams its arguments again."""
    existing = t.tool_calls.get(event.tool_call_id)
    if existing is not None:  # replayed after HITL: no duplicate, arguments stream again
        existing.args_parts.clear()
        t._sizes.pop(existing.id, None)
        t.predictor.call_started(existing.id, existing.name)
        existing.ended = existing.failed = False
        t._touch_call(existing)
        t._run_tool_calls.add(existing.id)
        return
    parent = _parent(t, event.parent_message_id, event.tool_call_id)
    call = ToolCallView(id=event.tool_call_id, name=event.tool_call_name, parent_message_id=parent.id)
    t.tool_calls[call.id] = call
    t.predictor.call_started(call.id, call.name)
    t._list_call(parent, call.id)
    t._run_tool_calls.add(call.id)
    t._touch(parent.id)


def _parent(t: Transcript, parent_id: str | None, tool_call_id: str) -> MessageView:
    if parent_id:
        return t._claim(parent_id, "assistant", "TOOL_CALL_START's parentMessageId")
    last = t.messages[-1] if t.messages else None
    if last is not None and last.role == "assistant":
        return last
    return t._append(MessageView(id=f"{tool_call_id}:message", role="assistant"))


def args(t: Transcript, event: ToolCallArgsEvent) -> None:
    """A delta of a call's arguments."""
    call = t.tool_calls.get(event.tool_call_id)
    if call is not None:
        t._grow(call.id, call.args_parts, event.delta, "a tool call's arguments")
        t._touch(call.parent_message_id)
        if t._shared:  # an id two messages list (a snapshot's): the other one draws it too
            t._touch_call(call)
        if t.predictor.due(call.id, t._sizes[call.id]):  # S33: the state follows the streaming argument
            t.state = t.predictor.follow(call.id, call.args_text, t.state)


def end(t: Transcript, event: ToolCallEndEvent) -> None:
    """A call's arguments are complete."""
    call = t.tool_calls.get(event.tool_call_id)
    if call is not None:
        call.ended = True
        t._touch_call(call)
        if t.predictor.predicts(call.id):  # the whole argument, whatever was skipped while it streamed
            t.state = t.predictor.follow(call.id, call.args_text, t.state)


def result(t: Transcript, event: ToolCallResultEvent) -> None:
    """A call's result: a tool message after the call's message (a replayed one is updated in place)."""
    call = t.tool_calls.get(event.tool_call_id)
    content = text_of(event.content)
    if call is not None:
        call.result, call.awaiting, call.failed, call.ended = content, False, False, True
        t._touch_call(call)
    message = t._by_id.get(event.message_id)
    if message is not None and (message.role != "tool" or message.tool_call_id != event.tool_call_id):
        raise ProtocolViolation(f"TOOL_CALL_RESULT reuses the id of an earlier {message.role} message")
    if message is not None:  # replayed result: update in place
        message.parts[:] = [content]
        t._touch(message.id)
        return
    message = MessageView(id=event.message_id, role="tool", parts=[content], tool_call_id=event.tool_call_id)
    t._by_id[message.id] = message
    owner = t._by_id.get(call.parent_message_id) if call else None
    position = _result_position(t, owner)
    t._insert(position, message)
    # The result joins its call's message: a UI draws it inside the call's card only when both are in
    # one slice. A result for a call in the history (an earlier run's call, resumed; after a restore,
    # every call is) lands in the history, even right at the tail's start.
    if position < t.tail_start or (position == t.tail_start and owner is not None):
        t.tail_start += 1
        t._history_changed()
    else:
        t._tail_ids.add(message.id)
        t._tail_dirty = True


def _result_position(t: Transcript, owner: MessageView | None) -> int:
    """Right after the owning assistant message and the results already placed after it."""
    if owner is None:
        return len(t.messages)
    owned = set(owner.tool_call_ids)
    position = t._index_of(owner) + 1
    while position < len(t.messages):
        following = t.messages[position]
        if following.role != "tool" or following.tool_call_id not in owned:
            break
        position += 1
    return position


# -- the chat's marks ------------------------------------------------------------------------------


def set_awaiting(t: Transcript, tool_call_ids: Iterable[str]) -> None:
    """Mark the tool calls an open interrupt names (``awaiting_approval``); others are cleared."""
    wanted = {i for i in tool_call_ids if i in t.tool_calls}
    for call_id in t._awaiting ^ wanted:  # only the calls whose mark changes: O(marked)
        call = t.tool_calls[call_id]
        call.awaiting = call_id in wanted
        if call.awaiting:  # owed again (S15): an earlier failed attempt no longer counts
            call.failed = False
        t._touch_call(call)
    t._awaiting = wanted


def set_args(t: Transcript, tool_call_id: str, value: Any) -> None:
    """Replace a call's arguments (approved ``editedArgs``: producers do not re-stream them)."""
    call = t.tool_calls.get(tool_call_id)
    if call is not None:
        call.args_parts[:] = [json.dumps(value)]
        t._touch_call(call)


def set_rejected(t: Transcript, tool_call_id: str) -> None:
    """Mark a call whose approval the person denied or cancelled."""
    call = t.tool_calls.get(tool_call_id)
    if call is not None:
        call.rejected = True
        t._touch_call(call)
