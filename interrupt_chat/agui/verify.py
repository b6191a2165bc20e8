"""Ordering rules of a run's event stream, after ``@ag-ui/client``'s ``verify`` stage.

A violation raises :class:`ProtocolViolation`; the caller fails the run with its message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ag_ui.core import BaseEvent, EventType, StepFinishedEvent, StepStartedEvent

from .errors import ProtocolViolation

__all__ = ["ProtocolViolation", "Verifier"]

_E = EventType


class Verifier:
    """Checks one stream, event by event. A new ``RUN_STARTED`` resets per-run tracking."""

    def __init__(self) -> None:
        """Start before the first event: nothing open."""
        self._phase = "new"  # new | active | finished | errored
        self._messages: set[str] = set()
        self._tool_calls: set[str] = set()
        self._reasoning: set[str] = set()
        self._steps: set[str] = set()

    def check(self, event: BaseEvent) -> None:
        """Check one event against the run's phase and what is open.

        Raises:
            ProtocolViolation: the event is out of order.
        """
        kind = event.type
        phase = self._phase
        if phase == "errored" and kind != _E.RUN_STARTED:
            raise ProtocolViolation(f"{kind.value} after RUN_ERROR: only a new RUN_STARTED may follow")
        if phase == "finished" and kind not in (_E.RUN_STARTED, _E.RUN_ERROR):
            raise ProtocolViolation(f"{kind.value} after RUN_FINISHED: only RUN_STARTED or RUN_ERROR may follow")
        if phase == "new" and kind not in (_E.RUN_STARTED, _E.RUN_ERROR):
            raise ProtocolViolation(f"the first event must be RUN_STARTED or RUN_ERROR, got {kind.value}")
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)

    def end_of_stream(self) -> None:
        """The stream ended: it must have carried a run, and that run must be closed."""
        if self._phase == "new":
            raise ProtocolViolation("the agent closed the stream without any event")
        if self._phase == "active":
            raise ProtocolViolation("the agent closed the stream before RUN_FINISHED")

    def _run_started(self, event: BaseEvent) -> None:
        if self._phase == "active":
            raise ProtocolViolation("RUN_STARTED while a run is active: finish it first")
        self._phase = "active"
        for open_ids in (self._messages, self._tool_calls, self._reasoning, self._steps):
            open_ids.clear()

    def _run_finished(self, event: BaseEvent) -> None:
        for label, open_ids in (("text message", self._messages), ("tool call", self._tool_calls),
                                ("reasoning message", self._reasoning), ("step", self._steps)):
            if open_ids:
                raise ProtocolViolation(f"RUN_FINISHED while {label} {', '.join(sorted(open_ids))} is still open")
        self._phase = "finished"

    def _run_error(self, event: BaseEvent) -> None:
        self._phase = "errored"

    def _opens(self, open_ids: set[str], item: str, label: str) -> None:
        if item in open_ids:
            raise ProtocolViolation(f"{label}_START for {item}, which is already open")
        open_ids.add(item)

    def _continues(self, open_ids: set[str], item: str, label: str, suffix: str) -> None:
        if item not in open_ids:
            raise ProtocolViolation(f"{label}_{suffix} for {item}, which is not open")
        if suffix == "END":
            open_ids.discard(item)

    def _step_started(self, event: StepStartedEvent) -> None:
        self._opens(self._steps, event.step_name, "STEP")

    def _step_finished(self, event: StepFinishedEvent) -> None:
        if event.step_name not in self._steps:
            raise ProtocolViolation(f"STEP_FINISHED for {event.step_name}, which was not started")
        self._steps.discard(event.step_name)


def _on(ids: str, label: str, suffix: str) -> Callable[[Verifier, BaseEvent], None]:
    def check(verifier: Verifier, event: BaseEvent) -> None:
        key = "message_id" if ids != "_tool_calls" else "tool_call_id"
        open_ids = getattr(verifier, ids)
        if suffix == "START":
            verifier._opens(open_ids, getattr(event, key), label)
        else:
            verifier._continues(open_ids, getattr(event, key), label, suffix)
    return check


# Each handler takes the event class of its type (AG-UI's union is discriminated by ``type``).
_HANDLERS: dict[EventType, Callable[[Verifier, Any], None]] = {
    _E.RUN_STARTED: Verifier._run_started,
    _E.RUN_FINISHED: Verifier._run_finished,
    _E.RUN_ERROR: Verifier._run_error,
    _E.STEP_STARTED: Verifier._step_started,
    _E.STEP_FINISHED: Verifier._step_finished,
    _E.TEXT_MESSAGE_START: _on("_messages", "TEXT_MESSAGE", "START"),
    _E.TEXT_MESSAGE_CONTENT: _on("_messages", "TEXT_MESSAGE", "CONTENT"),
    _E.TEXT_MESSAGE_END: _on("_messages", "TEXT_MESSAGE", "END"),
    _E.TOOL_CALL_START: _on("_tool_calls", "TOOL_CALL", "START"),
    _E.TOOL_CALL_ARGS: _on("_tool_calls", "TOOL_CALL", "ARGS"),
    _E.TOOL_CALL_END: _on("_tool_calls", "TOOL_CALL", "END"),
    _E.REASONING_MESSAGE_START: _on("_reasoning", "REASONING_MESSAGE", "START"),
    _E.REASONING_MESSAGE_CONTENT: _on("_reasoning", "REASONING_MESSAGE", "CONTENT"),
    _E.REASONING_MESSAGE_END: _on("_reasoning", "REASONING_MESSAGE", "END"),
}
