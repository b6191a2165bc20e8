"""The transcript's data: messages and tool calls with their indexes, what changed, the next run's messages.

Every job (:mod:`.messages`, :mod:`.reasoning`, :mod:`.tool_calls`, :mod:`.shared_state`, :mod:`.run`)
writes through the few methods here: a message appended or claimed by a streaming event, a delta
grown within its bounds, a change recorded (:meth:`Transcript._touch`: a UI redraws the message, its
cached AG-UI model is dropped). :meth:`Transcript.apply` folds one event with the handler
:mod:`.fold` lists for its type.
"""

from __future__ import annotations

import itertools
import secrets
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ag_ui.core import BaseEvent, Message

from ..errors import ProtocolViolation
from ..message_views import MessageView, RunStatus, ToolCallView
from ..predict import Predictor
from ..request_body import message_json
from ..wire_messages import build_message, cacheable, wire_key
from . import fold, run, shared_state, tool_calls

#: A streamed text (a message, reasoning, a tool call's arguments) longer than this fails the run. A run
#: as a whole has no cap: a long agentic run may stream far more, in many messages and tool calls.
MAX_TEXT_CHARS = 16_000_000
MAX_PARTS = 4096  # streamed pieces held per text before they are joined

# The table bound here by assignment, not imported by name: CPython 3.11 compiles a method call on a
# name a module imports (``HANDLERS.get(...)`` after ``from .fold import HANDLERS``) without its
# method-call fast path, which cost every event ~75 ns (10 % of Transcript.apply).
_HANDLERS = fold.HANDLERS

# Names a transcript's history within a process and across processes (a new name after a pickle, a
# snapshot's new message list): with its count of changes it says the history's rows are as they were.
_PROCESS = secrets.token_hex(8)
_DERIVED = ("_pos", "_opened", "_wire", "_sizes", "_listing", "_shared", "_repeated", "_memo", "_history_name",
            "_history_changes")
_NAMES = itertools.count(1)


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
        # id -> (the view it was built from, its AG-UI message or None, the view's wire key, the
        # message's JSON text once a run wrote it): an entry stands while its view does not change;
        # every change to a message pops its entry
        self._wire: dict[str, tuple[MessageView, Message | None, tuple[Any, ...], str | None]] = {}
        self._sizes: dict[str, int] = {}  # message or tool call id -> characters streamed into it (this run)
        # call id -> the messages that list it: one, its parent, unless a snapshot gave the id to two (_shared)
        self._listing: dict[str, list[str]] = {}
        for message in self.messages:
            for call_id in message.tool_call_ids:
                self._listing.setdefault(call_id, []).append(message.id)
        self._shared = {call_id for call_id, listing in self._listing.items() if len(listing) > 1
                        or (call_id in self.tool_calls and listing[0] != self.tool_calls[call_id].parent_message_id)}
        counted = Counter(m.id for m in self.messages)  # ids two messages share (a user message sent with a used id)
        self._repeated = {message_id for message_id, n in counted.items() if n > 1}
        self._memo: dict[str, tuple[MessageView, object, Any]] = {}  # id -> a UI's (view, key, value): remember()
        self._history_name = f"{_PROCESS}-{next(_NAMES)}"  # never pickled: a copy's history is another's
        self._history_changes = 0

    def __getstate__(self) -> dict[str, Any]:
        """Pickled state without the derived indexes (the message cache would double a pickle)."""
        state = self.__dict__.copy()
        for name in _DERIVED:
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

    @property
    def history_mark(self) -> tuple[str, int]:
        """Equal to an earlier mark of this transcript only if nothing of its history changed since.

        A UI that drew the history when the mark was this one has nothing to redraw (this object's
        own: a copy, an unpickled one, or a snapshot's new list has a new mark).
        """
        return self._history_name, self._history_changes

    def remembered(self, view: MessageView, key: object) -> Any:
        """What :meth:`remember` kept for this message at ``key``; None if nothing, or if it changed since."""
        entry = self._memo.get(view.id)
        return entry[2] if entry is not None and entry[0] is view and entry[1] == key else None

    def remember(self, view: MessageView, key: object, value: Any) -> None:
        """Keep a UI's value for a message (its row's digest) until the message, or a tool call on it, changes.

        ``key`` holds whatever else the value depends on (the rows: which results are drawn in the cards).
        Only the history's messages are kept: the tail's change with every delta.
        """
        if view.id not in self._tail_ids:
            self._memo[view.id] = (view, key, value)

    def keep_remembered(self, older: Transcript) -> None:
        """Carry over what :meth:`remember` kept in ``older`` (this thread's copy before a read from the store).

        Only for the history's messages that are the same here: an equal view whose tool calls are
        equal too (a comparison, far cheaper than what was remembered: a row made and digested).
        """
        memo, calls, old_calls = older._memo, self.tool_calls, older.tool_calls
        for view in self.messages[:self.tail_start]:
            entry = memo.get(view.id)
            if entry is None or view.id in self._repeated or entry[0] != view:
                continue
            if all(calls.get(call_id) == old_calls.get(call_id) for call_id in view.tool_call_ids):
                self._memo[view.id] = (view, entry[1], entry[2])

    def mark_tail(self) -> None:
        """A run starts here: later messages form the tail; what is before is history."""
        if self.tail_start != len(self.messages):
            self._history_changed()
            self._tail_dirty = True
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
            if not self._repeated or message_id not in self._repeated:
                return
        self._memo.pop(message_id, None)  # (only the history's messages are remembered)
        self._history_changed()

    def _touch_call(self, call: ToolCallView) -> None:
        """A tool call changed: every message that draws it is touched (its parent, and any other that lists it)."""
        self._touch(call.parent_message_id)
        if self._shared and call.id in self._shared:
            for message_id in self._listing.get(call.id, ()):
                if message_id != call.parent_message_id:
                    self._touch(message_id)

    def _list_call(self, message: MessageView, call_id: str) -> None:
        """``message`` lists the call (a new one: its parent)."""
        message.tool_call_ids.append(call_id)
        listing = self._listing.setdefault(call_id, [])
        listing.append(message.id)
        if len(listing) > 1:
            self._shared.add(call_id)

    def _history_changed(self) -> None:
        """Something of the history changed (a message, its place, the tail's start): every change goes here."""
        self._history_dirty = True
        self._history_changes += 1

    # -- writing: the chat's own changes (each job's module holds the how) ------------------------

    def set_awaiting(self, tool_call_ids: Iterable[str]) -> None:
        """Mark the tool calls an open interrupt names (``awaiting_approval``); others are cleared."""
        tool_calls.set_awaiting(self, tool_call_ids)

    def set_tool_call_args(self, tool_call_id: str, args: Any) -> None:
        """Replace a tool call's arguments (approved ``editedArgs``: producers do not re-stream them)."""
        tool_calls.set_args(self, tool_call_id, args)

    def settle_prediction(self, kept: bool) -> None:
        """The person answered ``confirm_changes``: keep the predicted state, or restore the one before it (S35)."""
        shared_state.settle_prediction(self, kept)

    def set_tool_call_rejected(self, tool_call_id: str) -> None:
        """Mark a tool call whose approval the person denied or cancelled."""
        tool_calls.set_rejected(self, tool_call_id)

    def add_user_message(self, message_id: str, content: str, raw_content: list[Any] | None = None) -> MessageView:
        """Append the user's message (it opens the turn); returns its view.

        ``raw_content``: multimodal parts (text and files) sent in place of the text.
        """
        return self._append(MessageView(id=message_id, role="user", parts=[content], raw_content=raw_content))

    def fail(self, error: str) -> None:
        """The run failed (RUN_ERROR, transport error, invalid stream)."""
        run.fail(self, error)

    def apply(self, event: BaseEvent) -> None:
        """Fold one event into the transcript; event types it does not track are ignored."""
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)

    # -- writing: what every job goes through --------------------------------------------------

    def _append(self, message: MessageView) -> MessageView:
        if message.id in self._by_id:
            self._repeated.add(message.id)
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

    def _open(self, message: MessageView) -> None:
        if not message.streaming:
            message.streaming = True
            self._opened.append(message)
            self._touch(message.id)  # a UI draws it as streaming

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

    def message_json(self, message: Message) -> str | None:
        """The JSON text of a model :meth:`to_messages` gave, kept with it; None for any other model.

        The request body writes the history from these (:mod:`..request_body`): a message's text is
        dumped once, when a run first sends it, and dropped with its model when the message changes.
        """
        entry = self._wire.get(message.id)
        if entry is None or entry[1] is not message:
            return None
        text = entry[3]
        if text is None:
            text = message_json(message)
            self._wire[message.id] = (entry[0], message, entry[2], text)
        return text

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
            self._wire[view.id] = (view, message, self._wire_key(view), None)
        return message

    def _cacheable(self, view: MessageView) -> bool:
        return cacheable(view, self.tool_calls)

    def _wire_key(self, view: MessageView) -> tuple[Any, ...]:
        return wire_key(view, self.tool_calls)

    def _build_message(self, view: MessageView) -> Message | None:
        return build_message(view, self.tool_calls)
