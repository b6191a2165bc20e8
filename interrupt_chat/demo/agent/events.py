"""Event builder: every protocol shape the demo agent sends comes from ``ag_ui.core`` models.

``EventFactory`` is bound to one run (thread id + run id) and stamps every event with a
millisecond timestamp. Streamed shapes (text messages, tool calls) are returned as lists
of events so scenarios can ``yield from`` them; the HTTP layer paces the deltas.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    CustomEvent,
    EventType,
    Interrupt,
    Message,
    MessagesSnapshotEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
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
)

__all__ = [
    "DELTA_EVENT_TYPES",
    "EventFactory",
    "new_id",
    "split_args",
    "split_words",
]

#: Event types that carry a streamed delta; the HTTP layer sleeps before each of them.
DELTA_EVENT_TYPES = frozenset({EventType.TEXT_MESSAGE_CONTENT, EventType.TOOL_CALL_ARGS})

_WORD = re.compile(r"\s*\S+\s*|\s+")

_Event = TypeVar("_Event", bound=BaseEvent)


def new_id(prefix: str) -> str:
    """A short random id such as ``msg-3f2a9c1b0d4e``."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def split_words(text: str) -> list[str]:
    """Split ``text`` into word-sized deltas (whitespace kept, never an empty delta)."""
    return _WORD.findall(text)


def split_args(args_json: str, size: int = 12) -> list[str]:
    """Split a JSON argument string into fixed-size deltas."""
    return [args_json[i : i + size] for i in range(0, len(args_json), size)]


class EventFactory:
    """Builds the events of one run (``thread_id`` / ``run_id``)."""

    def __init__(self, thread_id: str, run_id: str, clock: Callable[[], float] = time.time) -> None:
        """Bind the factory to a run; ``clock`` (seconds) stamps the events."""
        self.thread_id = thread_id
        self.run_id = run_id
        self._clock = clock

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _make(self, model: type[_Event], **fields: Any) -> _Event:
        return model(timestamp=self._now_ms(), **fields)

    # -- lifecycle -----------------------------------------------------------------------

    def run_started(self, parent_run_id: str | None = None) -> RunStartedEvent:
        """Open the run (``parentRunId`` set on a resume)."""
        return self._make(
            RunStartedEvent,
            thread_id=self.thread_id,
            run_id=self.run_id,
            parent_run_id=parent_run_id,
            protocol_version=PROTOCOL_VERSION,
        )

    def run_finished(self, interrupts: Sequence[Interrupt] = (), *, legacy: bool = False) -> RunFinishedEvent:
        """Close the run: interrupt outcome if ``interrupts``, else success.

        ``legacy=True`` omits the outcome entirely, as LangGraph-style producers do.
        """
        outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome | None
        if interrupts:
            outcome = RunFinishedInterruptOutcome(interrupts=list(interrupts))
        elif legacy:
            outcome = None
        else:
            outcome = RunFinishedSuccessOutcome()
        return self._make(RunFinishedEvent, thread_id=self.thread_id, run_id=self.run_id, outcome=outcome)

    def run_error(self, message: str, code: str) -> RunErrorEvent:
        """End the run with an error ``code`` (e.g. ``PARTIAL_RESUME``) and a message."""
        return self._make(RunErrorEvent, message=message, code=code)

    def step_started(self, name: str) -> StepStartedEvent:
        """Open the step ``name``."""
        return self._make(StepStartedEvent, step_name=name)

    def step_finished(self, name: str) -> StepFinishedEvent:
        """Close the step ``name``."""
        return self._make(StepFinishedEvent, step_name=name)

    # -- content -------------------------------------------------------------------------

    def text_message(self, text: str, message_id: str | None = None) -> list[BaseEvent]:
        """TEXT_MESSAGE_START, one CONTENT per word, TEXT_MESSAGE_END."""
        message_id = message_id or new_id("msg")
        return [
            self._make(TextMessageStartEvent, message_id=message_id, role="assistant"),
            *(self._make(TextMessageContentEvent, message_id=message_id, delta=d) for d in split_words(text)),
            self._make(TextMessageEndEvent, message_id=message_id),
        ]

    def tool_call(
        self, tool_call_id: str, name: str, args: dict[str, Any], parent_message_id: str | None, *, words: bool = False
    ) -> list[BaseEvent]:
        """TOOL_CALL_START, the JSON arguments as several ARGS deltas (``words``: one per word), TOOL_CALL_END."""
        return [
            self._make(
                ToolCallStartEvent,
                tool_call_id=tool_call_id,
                tool_call_name=name,
                parent_message_id=parent_message_id,
            ),
            *(
                self._make(ToolCallArgsEvent, tool_call_id=tool_call_id, delta=d)
                for d in (split_words if words else split_args)(json.dumps(args, ensure_ascii=False))
            ),
            self._make(ToolCallEndEvent, tool_call_id=tool_call_id),
        ]

    def tool_result(self, tool_call_id: str, content: str) -> ToolCallResultEvent:
        """The result of a tool call, as a new tool message."""
        return self._make(
            ToolCallResultEvent, message_id=new_id("tool"), tool_call_id=tool_call_id, content=content, role="tool"
        )

    def reasoning(self, text: str, message_id: str | None = None) -> list[BaseEvent]:
        """AG-UI 1.0 reasoning: REASONING_START, a reasoning message streamed word by word, REASONING_END."""
        message_id = message_id or new_id("reasoning")
        return [
            self._make(ReasoningStartEvent, message_id=message_id),
            self._make(ReasoningMessageStartEvent, message_id=message_id, role="reasoning"),
            *(self._make(ReasoningMessageContentEvent, message_id=message_id, delta=d) for d in split_words(text)),
            self._make(ReasoningMessageEndEvent, message_id=message_id),
            self._make(ReasoningEndEvent, message_id=message_id),
        ]

    def messages_snapshot(self, messages: Sequence[Message]) -> MessagesSnapshotEvent:
        """The whole message list, as some producers send a tool call and its result (no streaming)."""
        return self._make(MessagesSnapshotEvent, messages=list(messages))

    def state_snapshot(self, snapshot: dict[str, Any]) -> StateSnapshotEvent:
        """Replace the shared state with ``snapshot``."""
        return self._make(StateSnapshotEvent, snapshot=snapshot)

    def state_delta(self, ops: list[dict[str, Any]]) -> StateDeltaEvent:
        """Patch the shared state with JSON Patch ``ops`` (RFC 6902)."""
        return self._make(StateDeltaEvent, delta=ops)

    def custom(self, name: str, value: Any) -> CustomEvent:
        """A CUSTOM event (the legacy channel's ``on_interrupt``)."""
        return self._make(CustomEvent, name=name, value=value)
