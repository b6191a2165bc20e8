"""The reducer: AG-UI events folded into a transcript a chat can draw and send back.

Each event costs O(1) (text and argument deltas are appended to lists, joined on read; messages
are found by id, and by position through an index). ``MESSAGES_SNAPSHOT`` merges by id in time
linear in the snapshot and the transcript (it speaks for the whole message list). The transcript
also builds the next run's ``messages`` (assistant ``toolCalls`` included, activity messages never
sent back), which producers such as pydantic-ai need to resume a tool call: each message's AG-UI
model is cached and rebuilt only when the message changed, so :meth:`Transcript.to_messages`
costs one dict lookup per message of history plus one build per changed message.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from ag_ui.core import (
    ActivityDeltaEvent,
    ActivityMessage,
    ActivitySnapshotEvent,
    AssistantMessage,
    BaseEvent,
    CustomEvent,
    EventType,
    Message,
    MessagesSnapshotEvent,
    ReasoningEncryptedValueEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
)

from .errors import ProtocolViolation
from .json_patch import UNCHANGED, patched
from .message_views import MessageView, RunStatus, ToolCallStatus, ToolCallView
from .predict import PREDICT_STATE, Predictor
from .sanitize import short_text
from .snapshot_merge import merge
from .wire_messages import build_message, cacheable, text_of, wire_key

__all__ = ["MessageView", "RunStatus", "ToolCallStatus", "ToolCallView", "Transcript"]

log = logging.getLogger(__name__)

_E = EventType
#: A streamed text (a message, reasoning, a tool call's arguments) longer than this fails the run. A run
#: as a whole has no cap: a long agentic run may stream far more, in many messages and tool calls.
MAX_TEXT_CHARS = 16_000_000
MAX_PARTS = 4096  # streamed pieces held per text before they are joined


class Transcript:
    """Messages, tool calls, shared state and run status of one thread."""

    def __init__(self) -> None:
        """Start an empty transcript: no messages, no tool calls, status ``idle``."""
        self.messages: list[MessageView] = []
        self._by_id: dict[str, MessageView] = {}
        self.tool_calls: dict[str, ToolCallView] = {}
        self.state: Any = {}
        self.status: RunStatus = "idle"
        self.error: str | None = None
        self.thread_id: str | None = None
        self.run_id: str | None = None
        self.step: str | None = None
        self.last_step: str | None = None  # the run's last STEP_STARTED (who asks, when nothing else says)
        self._run_tool_calls: set[str] = set()
        self._awaiting: set[str] = set()  # tool call ids marked awaiting_approval
        self.predictor = Predictor()  # PredictState (S33-S35)
        # Change tracking for a UI: the tail is what the current run added (from ``mark_tail``),
        # the history everything before it. Appends land in the tail, so streaming touches only it.
        self.tail_start = 0
        self._tail_ids: set[str] = set()
        self._history_dirty = False
        self._tail_dirty = False
        self._init_indexes()

    def _init_indexes(self) -> None:
        """The derived indexes, rebuilt from ``messages`` (a new transcript, a pickle, a snapshot)."""
        self._pos: dict[str, int] = {m.id: i for i, m in enumerate(self.messages)}  # checked on use
        self._opened: list[MessageView] = [m for m in self.messages if m.streaming]  # all streaming ones
        # id -> (the view it was built from, its AG-UI message or None, the view's wire key): an
        # entry stands while its view does not change; every change to a message pops its entry
        self._wire: dict[str, tuple[MessageView, Message | None, tuple[Any, ...]]] = {}
        self._sizes: dict[str, int] = {}  # message or tool call id -> characters streamed into it (this run)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled state without the derived indexes (the message cache would double a pickle)."""
        state = self.__dict__.copy()
        for name in ("_pos", "_opened", "_wire", "_sizes"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore from :meth:`__getstate__` (or from a pickle older than the indexes) and rebuild them."""
        self.__dict__.update(state)
        self.__dict__.setdefault("predictor", Predictor())
        self.__dict__.setdefault("last_step", None)
        self._init_indexes()

    # -- reading ---------------------------------------------------------------------------------

    def message(self, message_id: str) -> MessageView | None:
        """The message with this id, or None."""
        return self._by_id.get(message_id)

    def run_tool_call_ids(self) -> list[str]:
        """The tool calls the current (or last) run made or replayed, in the order they started."""
        return [call_id for call_id in self.tool_calls if call_id in self._run_tool_calls]

    def mark_tail(self) -> None:
        """A run starts here: later messages form the tail; what is before is history."""
        if self.tail_start != len(self.messages):
            self._history_dirty = self._tail_dirty = True
        self.tail_start = len(self.messages)
        self._tail_ids = set()
        if self._opened:  # forget the messages that ended (amortised O(1) per message)
            self._opened = [m for m in self._opened if m.streaming]

    def take_changes(self) -> tuple[bool, bool]:
        """(history changed, tail changed) since the last call: what a UI must redraw."""
        changes = (self._history_dirty, self._tail_dirty)
        self._history_dirty = self._tail_dirty = False
        return changes

    def _touch(self, message_id: str) -> None:
        """The message changed: a UI redraws it, and its cached wire message is dropped."""
        self._wire.pop(message_id, None)
        if message_id in self._tail_ids:
            self._tail_dirty = True
        else:
            self._history_dirty = True

    def set_awaiting(self, tool_call_ids: Iterable[str]) -> None:
        """Mark the tool calls an open interrupt names (``awaiting_approval``); others are cleared."""
        wanted = {i for i in tool_call_ids if i in self.tool_calls}
        for call_id in self._awaiting ^ wanted:  # only the calls whose mark changes: O(marked)
            call = self.tool_calls[call_id]
            call.awaiting = call_id in wanted
            if call.awaiting:  # owed again (S15): an earlier failed attempt no longer counts
                call.failed = False
            self._touch(call.parent_message_id)
        self._awaiting = wanted

    # -- writing ---------------------------------------------------------------------------------

    def set_tool_call_args(self, tool_call_id: str, args: Any) -> None:
        """Replace a tool call's arguments (approved ``editedArgs``: producers do not re-stream them)."""
        call = self.tool_calls.get(tool_call_id)
        if call is not None:
            call.args_parts[:] = [json.dumps(args)]
            self._touch(call.parent_message_id)

    def settle_prediction(self, kept: bool) -> None:
        """The person answered ``confirm_changes``: keep the predicted state, or restore the one before it (S35)."""
        if self.predictor.holding:
            if kept:
                self.predictor.confirmed()
            else:
                self.state = self.predictor.rejected()

    def set_tool_call_rejected(self, tool_call_id: str) -> None:
        """Mark a tool call whose approval the person denied or cancelled."""
        call = self.tool_calls.get(tool_call_id)
        if call is not None:
            call.rejected = True
            self._touch(call.parent_message_id)

    def add_user_message(self, message_id: str, content: str, raw_content: list[Any] | None = None) -> MessageView:
        """Append the user's message (it opens the turn); returns its view.

        ``raw_content``: multimodal parts (text and files) sent in place of the text.
        """
        return self._append(MessageView(id=message_id, role="user", parts=[content], raw_content=raw_content))

    def fail(self, error: str) -> None:
        """The run failed (RUN_ERROR, transport error, invalid stream)."""
        self.status = "error"
        self.error = error
        for call_id in self._run_tool_calls:
            call = self.tool_calls.get(call_id)
            if call is not None and call.result is None and not call.awaiting:
                call.failed = True
                self._touch(call.parent_message_id)
        for message in self._opened:  # every streaming message is in it
            if message.streaming:
                message.streaming = False
                self._touch(message.id)
        self._opened = []
        self._run_tool_calls.clear()
        self.step = None

    def apply(self, event: BaseEvent) -> None:
        """Fold one event into the transcript; event types it does not track are ignored."""
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)

    def _append(self, message: MessageView) -> MessageView:
        self._pos[message.id] = len(self.messages)
        self.messages.append(message)
        self._by_id[message.id] = message
        self._tail_ids.add(message.id)
        self._tail_dirty = True
        return message

    def _ensure(self, message_id: str, role: str) -> MessageView:
        message = self._by_id.get(message_id)
        return message if message is not None else self._append(MessageView(id=message_id, role=role))

    def _claim(self, message_id: str, role: str, what: str) -> MessageView:
        """The message a streaming event writes into: a new one, or this turn's own of the same role.

        Raises:
            ProtocolViolation: the id names an earlier turn's message, or one of another role; a
                hostile or confused agent must not rewrite the history (a snapshot may replace it).
        """
        message = self._by_id.get(message_id)
        if message is None:
            return self._append(MessageView(id=message_id, role=role))
        if message.id not in self._tail_ids or message.role != role:
            raise ProtocolViolation(f"{what} reuses the id of an earlier {message.role} message")
        return message

    # run lifecycle

    def _run_started(self, event: RunStartedEvent) -> None:
        self.status, self.error, self.step, self.last_step = "running", None, None, None
        self.thread_id, self.run_id = event.thread_id, event.run_id
        self._run_tool_calls.clear()
        self._sizes = {}
        self.predictor.run_started()
        self.set_awaiting(())

    def _run_finished(self, event: RunFinishedEvent) -> None:
        outcome = getattr(event.outcome, "type", None)
        self.status = "cancelled" if outcome == "cancelled" else "finished"
        self.step = None

    def _run_error(self, event: RunErrorEvent) -> None:
        message = short_text(event.message, 240) or "the agent reported an error without a message"
        detail = f" ({short_text(event.code, 56)})" if event.code else ""
        self.fail(f"{message}{detail}")

    def _step_started(self, event: StepStartedEvent) -> None:
        self.step = self.last_step = event.step_name

    def _step_finished(self, event: StepFinishedEvent) -> None:
        if self.step == event.step_name:
            self.step = None

    # text and reasoning

    def _text_start(self, event: TextMessageStartEvent) -> None:
        message = self._claim(event.message_id, event.role or "assistant", "TEXT_MESSAGE_START")
        self._open(message)
        message.name = event.name or message.name
        self._touch(message.id)

    def _reasoning_start(self, event: ReasoningMessageStartEvent) -> None:
        self._open(self._claim(event.message_id, "reasoning", "REASONING_MESSAGE_START"))

    def _open(self, message: MessageView) -> None:
        if not message.streaming:
            message.streaming = True
            self._opened.append(message)

    def _content(self, event: TextMessageContentEvent | ReasoningMessageContentEvent) -> None:
        message = self._by_id.get(event.message_id)
        if message is not None and event.delta:
            self._grow(message.id, message.parts, event.delta, "a message")
            self._touch(message.id)

    def _grow(self, key: str, parts: list[str], delta: str, what: str) -> None:
        """Append a streamed delta: bounded in size (per text, not per run) and in pieces held."""
        size = self._sizes.get(key)
        if size is None:
            size = sum(len(p) for p in parts)
        size += len(delta)
        if size > MAX_TEXT_CHARS:
            raise ProtocolViolation(f"{what} from the agent is longer than {MAX_TEXT_CHARS:,} characters")
        self._sizes[key] = size
        parts.append(delta)
        if len(parts) >= MAX_PARTS:  # a million one-character deltas stay a few strings, not a million objects
            parts[:] = ["".join(parts)]

    def _end(self, event: TextMessageEndEvent | ReasoningMessageEndEvent) -> None:
        message = self._by_id.get(event.message_id)
        if message is not None:
            message.streaming = False
            self._touch(message.id)

    def _encrypted_value(self, event: ReasoningEncryptedValueEvent) -> None:
        target: ToolCallView | MessageView | None
        if event.subtype == "tool-call":
            target = self.tool_calls.get(event.entity_id)
        else:
            target = self._by_id.get(event.entity_id)
        if target is not None:
            target.encrypted_value = event.encrypted_value
            owner = target.parent_message_id if isinstance(target, ToolCallView) else target.id
            self._wire.pop(owner, None)  # sent back with the message: not drawn, so not a UI change

    # tool calls

    def _tool_call_start(self, event: ToolCallStartEvent) -> None:
        existing = self.tool_calls.get(event.tool_call_id)
        if existing is not None:  # replayed after HITL: no duplicate, arguments stream again
            existing.args_parts.clear()
            self._sizes.pop(existing.id, None)
            self.predictor.call_started(existing.id, existing.name)
            existing.ended = existing.failed = False
            self._touch(existing.parent_message_id)
            self._run_tool_calls.add(existing.id)
            return
        parent = self._tool_call_parent(event.parent_message_id, event.tool_call_id)
        call = ToolCallView(id=event.tool_call_id, name=event.tool_call_name, parent_message_id=parent.id)
        self.tool_calls[call.id] = call
        self.predictor.call_started(call.id, call.name)
        parent.tool_call_ids.append(call.id)
        self._run_tool_calls.add(call.id)
        self._touch(parent.id)

    def _tool_call_parent(self, parent_id: str | None, tool_call_id: str) -> MessageView:
        if parent_id:
            return self._claim(parent_id, "assistant", "TOOL_CALL_START's parentMessageId")
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant":
            return last
        return self._append(MessageView(id=f"{tool_call_id}:message", role="assistant"))

    def _tool_call_args(self, event: ToolCallArgsEvent) -> None:
        call = self.tool_calls.get(event.tool_call_id)
        if call is not None:
            self._grow(call.id, call.args_parts, event.delta, "a tool call's arguments")
            self._touch(call.parent_message_id)
            if self.predictor.due(call.id, self._sizes[call.id]):  # S33: the state follows the streaming argument
                self.state = self.predictor.follow(call.id, call.args_text, self.state)

    def _custom(self, event: CustomEvent) -> None:
        if event.name == PREDICT_STATE:  # S33: which tool arguments the state follows in this run
            self.predictor.announce(event.value)

    def _tool_call_end(self, event: ToolCallEndEvent) -> None:
        call = self.tool_calls.get(event.tool_call_id)
        if call is not None:
            call.ended = True
            self._touch(call.parent_message_id)
            if self.predictor.predicts(call.id):  # the whole argument, whatever was skipped while it streamed
                self.state = self.predictor.follow(call.id, call.args_text, self.state)

    def _tool_call_result(self, event: ToolCallResultEvent) -> None:
        call = self.tool_calls.get(event.tool_call_id)
        content = text_of(event.content)
        if call is not None:
            call.result, call.awaiting, call.failed, call.ended = content, False, False, True
            self._touch(call.parent_message_id)
        message = self._by_id.get(event.message_id)
        if message is not None and (message.role != "tool" or message.tool_call_id != event.tool_call_id):
            raise ProtocolViolation(f"TOOL_CALL_RESULT reuses the id of an earlier {message.role} message")
        if message is not None:  # replayed result: update in place
            message.parts[:] = [content]
            self._touch(message.id)
            return
        message = MessageView(id=event.message_id, role="tool", parts=[content], tool_call_id=event.tool_call_id)
        self._by_id[message.id] = message
        owner = self._by_id.get(call.parent_message_id) if call else None
        position = self._result_position(owner)
        self._insert(position, message)
        # The result joins its call's message: a UI draws it inside the call's card only when both are in
        # one slice. A result for a call in the history (an earlier run's call, resumed; after a restore,
        # every call is) lands in the history, even right at the tail's start.
        if position < self.tail_start or (position == self.tail_start and owner is not None):
            self.tail_start += 1
            self._history_dirty = True
        else:
            self._tail_ids.add(message.id)
            self._tail_dirty = True

    def _insert(self, position: int, message: MessageView) -> None:
        """Insert into ``messages``; the index moves the messages after it (O(1) at the end, the usual case)."""
        messages, index = self.messages, self._pos
        messages.insert(position, message)
        for i in range(position, len(messages)):
            index[messages[i].id] = i

    def _index_of(self, message: MessageView) -> int:
        """Position by identity: from the index, checked; a scan from the end if ids repeat."""
        messages = self.messages
        index = self._pos.get(message.id, -1)
        if 0 <= index < len(messages) and messages[index] is message:
            return index
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is message:
                return index
        raise ValueError(f"message {message.id} is not in the transcript")

    def _result_position(self, owner: MessageView | None) -> int:
        """Right after the owning assistant message and the results already placed after it."""
        if owner is None:
            return len(self.messages)
        owned = set(owner.tool_call_ids)
        position = self._index_of(owner) + 1
        while position < len(self.messages):
            following = self.messages[position]
            if following.role != "tool" or following.tool_call_id not in owned:
                break
            position += 1
        return position

    # state, snapshots, activity

    def _state_snapshot(self, event: StateSnapshotEvent) -> None:
        self.state = event.snapshot
        self.predictor.overridden()  # S34

    def _state_delta(self, event: StateDeltaEvent) -> None:
        state = patched(self.state, event.delta, "STATE_DELTA")
        if state is not UNCHANGED:
            self.state = state

    def _activity_snapshot(self, event: ActivitySnapshotEvent) -> None:
        message = self._ensure(event.message_id, "activity")
        if message.activity_content is None or event.replace is not False:
            message.activity_content = dict(event.content)
        message.activity_type = event.activity_type
        self._touch(message.id)

    def _activity_delta(self, event: ActivityDeltaEvent) -> None:
        message = self._by_id.get(event.message_id)
        if message is None or message.activity_content is None:
            log.warning("ACTIVITY_DELTA for unknown activity %.100r ignored", event.message_id)
            return
        content = patched(message.activity_content, event.patch, "ACTIVITY_DELTA")
        if content is not UNCHANGED:
            message.activity_content = content
            self._touch(message.id)

    def _messages_snapshot(self, event: MessagesSnapshotEvent) -> None:
        """Merge by id: existing order kept, snapshot versions swapped in, new ids at their snapshot place.

        A new message goes right after the known message before it in the snapshot (a tool result the
        producer renamed lands after its call, not after the answer that followed it: the next run's
        history must keep that order); new messages before every known one are appended, in order.
        Dict lookups only: linear in the snapshot plus the transcript (the snapshot speaks for the
        whole list). A message whose wire form did not change keeps its cached AG-UI model.
        """
        by_id: dict[str, MessageView] = {}  # a repeated id: one message, its last version, at its first place
        for view in (self._view_from_message(m) for m in event.messages):
            by_id[view.id] = view
        if len(by_id) < len(event.messages):
            log.warning("MESSAGES_SNAPSHOT repeats message ids; keeping the last version of each")
        merged = merge(self.messages, list(by_id.values()))
        history_ids = {m.id for m in self.messages[:self.tail_start]}
        self._replace_messages(merged)
        # the tail starts at the first message that was not history: this run's, or new in the snapshot
        self.tail_start = next((i for i, m in enumerate(merged) if m.id not in history_ids), len(merged))
        self._tail_ids = {m.id for m in merged[self.tail_start:]}
        self._history_dirty = self._tail_dirty = True

    def _replace_messages(self, merged: list[MessageView]) -> None:
        """``merged`` becomes the message list; cached models carry over where the wire key is the same."""
        old_wire = self._wire
        self.messages = merged
        self._by_id = {message.id: message for message in merged}
        self._init_indexes()
        wire = self._wire
        for view in merged:
            entry = old_wire.get(view.id)
            # the model is a function of the key: equal keys, equal models (whichever view it came from)
            if entry is not None and self._cacheable(view) and self._wire_key(view) == entry[2]:
                wire[view.id] = (view, entry[1], entry[2])

    def _view_from_message(self, message: Message) -> MessageView:
        fields = message.__dict__  # a field a role lacks is a miss here, not pydantic's raised AttributeError
        role = message.role
        content = fields.get("content")
        view = MessageView(id=message.id, role=role, parts=[text_of(content)] if content else [],
                           name=fields.get("name"), encrypted_value=fields.get("encrypted_value"))
        if content is not None and not isinstance(content, str) and role != "activity":
            view.raw_content = content
        if isinstance(message, AssistantMessage):
            for tool_call in message.tool_calls or []:
                call = self.tool_calls.get(tool_call.id)
                if call is None:  # new in this run's snapshot: the run made it (S27: it may wait for the chat)
                    call = self.tool_calls[tool_call.id] = ToolCallView(
                        id=tool_call.id, name=tool_call.function.name, parent_message_id=message.id)
                    self._run_tool_calls.add(tool_call.id)
                call.name, call.parent_message_id, call.ended = tool_call.function.name, message.id, True
                call.args_parts[:] = [tool_call.function.arguments]
                view.tool_call_ids.append(tool_call.id)
        elif isinstance(message, ToolMessage):
            view.tool_call_id, view.error = message.tool_call_id, message.error
            call = self.tool_calls.get(message.tool_call_id)
            if call is not None:
                call.result, call.awaiting = view.content, False
        elif isinstance(message, ActivityMessage):
            view.activity_type, view.activity_content, view.parts = message.activity_type, dict(message.content), []
        return view

    # -- the next run's messages -----------------------------------------------------------------

    def to_messages(self) -> list[Message]:
        """The history to send with the next run: no activity messages, no empty turns.

        A new list on every call, of AG-UI models cached per message: a message's model is built
        again when the message changes (a delta, a result, a snapshot's new version, …), never
        changed in place. The models are shared between calls: treat them as immutable.
        """
        wire = self._wire
        out: list[Message] = []
        for view in self.messages:
            entry = wire.get(view.id)
            converted = entry[1] if entry is not None and entry[0] is view else self._cache(view)
            if converted is not None:
                out.append(converted)
        return out

    def _to_message(self, view: MessageView) -> Message | None:
        """One message as :meth:`to_messages` sends it (None for activity and empty turns); cached."""
        entry = self._wire.get(view.id)
        return entry[1] if entry is not None and entry[0] is view else self._cache(view)

    def _to_messages_uncached(self) -> list[Message]:
        """:meth:`to_messages` built from scratch, without the cache (for tests and benchmarks)."""
        return [m for m in map(self._build_message, self.messages) if m is not None]

    def _cache(self, view: MessageView) -> Message | None:
        message = self._build_message(view)
        if self._cacheable(view):
            self._wire[view.id] = (view, message, self._wire_key(view))
        return message

    def _cacheable(self, view: MessageView) -> bool:
        return cacheable(view, self.tool_calls)

    def _wire_key(self, view: MessageView) -> tuple[Any, ...]:
        return wire_key(view, self.tool_calls)

    def _build_message(self, view: MessageView) -> Message | None:
        return build_message(view, self.tool_calls)


# Each handler takes the event class of its type (AG-UI's union is discriminated by ``type``).
_HANDLERS: dict[EventType, Callable[[Transcript, Any], None]] = {
    _E.RUN_STARTED: Transcript._run_started,
    _E.RUN_FINISHED: Transcript._run_finished,
    _E.RUN_ERROR: Transcript._run_error,
    _E.STEP_STARTED: Transcript._step_started,
    _E.STEP_FINISHED: Transcript._step_finished,
    _E.TEXT_MESSAGE_START: Transcript._text_start,
    _E.TEXT_MESSAGE_CONTENT: Transcript._content,
    _E.TEXT_MESSAGE_END: Transcript._end,
    _E.REASONING_MESSAGE_START: Transcript._reasoning_start,
    _E.REASONING_MESSAGE_CONTENT: Transcript._content,
    _E.REASONING_MESSAGE_END: Transcript._end,
    _E.REASONING_ENCRYPTED_VALUE: Transcript._encrypted_value,
    _E.TOOL_CALL_START: Transcript._tool_call_start,
    _E.TOOL_CALL_ARGS: Transcript._tool_call_args,
    _E.TOOL_CALL_END: Transcript._tool_call_end,
    _E.TOOL_CALL_RESULT: Transcript._tool_call_result,
    _E.CUSTOM: Transcript._custom,
    _E.STATE_SNAPSHOT: Transcript._state_snapshot,
    _E.STATE_DELTA: Transcript._state_delta,
    _E.MESSAGES_SNAPSHOT: Transcript._messages_snapshot,
    _E.ACTIVITY_SNAPSHOT: Transcript._activity_snapshot,
    _E.ACTIVITY_DELTA: Transcript._activity_delta,
}
