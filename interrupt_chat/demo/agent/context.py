"""Per-run context handed to scenarios and resume handlers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ag_ui.core import BaseEvent, RunAgentInput, UserMessage

from .events import EventFactory
from .store import DemoStore, OpenInterrupts, PendingInterrupt, ThreadState

__all__ = ["DEFAULT_DELAY", "DEFAULT_EXPIRES_IN", "DemoConfig", "RunContext", "last_user_text"]

#: Seconds slept before each streamed delta (text or tool-call arguments).
DEFAULT_DELAY = 0.03
#: Lifetime in seconds of the ``expiring`` scenario's interrupt.
DEFAULT_EXPIRES_IN = 30.0


def last_user_text(body: RunAgentInput) -> str:
    """Text of the last user message (text parts joined), or ``""``."""
    for message in reversed(body.messages):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                return message.content
            return " ".join(getattr(part, "text", "") for part in message.content)
    return ""


@dataclass(frozen=True)
class DemoConfig:
    """Settings of one demo agent app: the pause before each delta, the ``expiring`` lifetime."""

    delay: float = DEFAULT_DELAY
    expires_in: float = DEFAULT_EXPIRES_IN


class RunContext:
    """One run: its input, its event factory, its thread's state and the app config."""

    def __init__(self, body: RunAgentInput, store: DemoStore, config: DemoConfig) -> None:
        """Bind the run's input to the app's store and config; events are stamped with its ids."""
        self.body = body
        self.store = store
        self.config = config
        self.ev = EventFactory(body.thread_id, body.run_id)

    @property
    def thread(self) -> ThreadState:
        """The state of the run's thread (created on first use)."""
        return self.store.thread(self.body.thread_id)

    def snapshot(self, scenario: str) -> BaseEvent:
        """STATE_SNAPSHOT ``{"scenario": ..., "turn": ...}``."""
        return self.ev.state_snapshot({"scenario": scenario, "turn": self.thread.turn})

    def interrupt(
        self, scenario: str, pending: Sequence[PendingInterrupt] = (), *, legacy_value: Any = None
    ) -> list[BaseEvent]:
        """Open the interrupts on this thread and return the run's closing events.

        Legacy: CUSTOM ``on_interrupt`` then RUN_FINISHED (no outcome unless ``pending`` is
        also given, as with ag-ui-langgraph's ``emit_interrupt_outcome=True``).
        """
        self.thread.open = OpenInterrupts(
            run_id=self.body.run_id, scenario=scenario, pending=list(pending), legacy_value=legacy_value
        )
        events: list[BaseEvent] = []
        if legacy_value is not None:
            events.append(self.ev.custom("on_interrupt", legacy_value))
        events.append(self.ev.run_finished([p.interrupt for p in pending], legacy=legacy_value is not None))
        return events
