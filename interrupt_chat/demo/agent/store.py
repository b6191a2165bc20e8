"""In-memory state of the demo agent: per-thread open interrupts and the recorded inputs.

Everything lives in one process and is lost on restart (a demo, not a checkpointer).
Mutations never await, so a single event loop needs no lock.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import Interrupt, RunAgentInput

__all__ = [
    "MAX_RECORDS",
    "MAX_THREADS",
    "DemoStore",
    "OpenInterrupts",
    "PendingInterrupt",
    "ThreadState",
    "is_secret_property",
]


MAX_RECORDS = 1000  # inputs (and notes) kept: the last ones; a public demo must not grow without bound
MAX_THREADS = 10_000  # threads whose turn and open interrupts are kept (the oldest forgotten first)


@dataclass
class PendingInterrupt:
    """One open interrupt plus what the agent needs to continue after it.

    ``kind`` selects the continuation (``approval``, ``payment``, ``choice``, ``credential``,
    ``confirmation``); ``tool_args`` holds the original arguments of a tool-bound one.
    """

    interrupt: Interrupt
    kind: str
    tool_name: str | None = None
    tool_args: dict[str, Any] | None = None


@dataclass
class OpenInterrupts:
    """The interrupts of the most recent interrupted run on a thread."""

    run_id: str
    scenario: str
    pending: list[PendingInterrupt] = field(default_factory=list)
    #: The CUSTOM ``on_interrupt`` value if the run used the legacy channel (a JSON string or a str).
    legacy_value: Any = None

    @property
    def has_legacy(self) -> bool:
        """Whether the run raised a legacy ``on_interrupt``."""
        return self.legacy_value is not None

    @property
    def interrupts(self) -> list[Interrupt]:
        """The open standard interrupts, in the order they were raised."""
        return [p.interrupt for p in self.pending]

    def by_id(self) -> dict[str, PendingInterrupt]:
        """The open interrupts by interrupt id."""
        return {p.interrupt.id: p for p in self.pending}


@dataclass
class ThreadState:
    """One thread: how many runs it had, and its open interrupts (None when nothing is open)."""

    turn: int = 0
    open: OpenInterrupts | None = None


@dataclass
class Record:
    thread_id: str
    body: dict[str, Any]


@dataclass
class Note:
    thread_id: str
    run_id: str
    note: str


def is_secret_property(schema: dict[str, Any]) -> bool:
    """A JSON Schema property whose value must be masked (and never echoed)."""
    return schema.get("format") == "password" or schema.get("writeOnly") is True


class DemoStore:
    """Threads, recorded inputs and protocol notes of one demo agent app."""

    def __init__(self, max_records: int = MAX_RECORDS, max_threads: int = MAX_THREADS) -> None:
        """Start empty: no threads, no records, no notes; keep at most the last ``max_records`` of each."""
        self.threads: dict[str, ThreadState] = {}
        self._max_threads = max_threads
        self._records: deque[Record] = deque(maxlen=max_records)
        self._notes: deque[Note] = deque(maxlen=max_records)
        #: Run ids whose SSE stream is currently being produced.
        self.active_runs: set[str] = set()

    def thread(self, thread_id: str) -> ThreadState:
        """The state of ``thread_id``, created empty on first use (the least recently created goes past the cap)."""
        state = self.threads.get(thread_id)
        if state is None:
            while len(self.threads) >= self._max_threads:
                del self.threads[next(iter(self.threads))]
            state = self.threads[thread_id] = ThreadState()
        return state

    def clear(self) -> None:
        """Forget records, notes and every thread's state."""
        self.threads.clear()
        self._records.clear()
        self._notes.clear()

    # -- records ---------------------------------------------------------------------------

    def record(self, body: RunAgentInput) -> None:
        """Keep a JSON dump of ``body``; secret payload fields are replaced by ``<redacted:N>``."""
        dumped = body.model_dump(by_alias=True, exclude_none=True, mode="json")
        self._redact_secrets(body.thread_id, dumped)
        self._records.append(Record(body.thread_id, dumped))

    def records(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        """Copies of the recorded inputs, oldest first; only ``thread_id``'s when given."""
        return [copy.deepcopy(r.body) for r in self._records if thread_id in (None, r.thread_id)]

    def note(self, thread_id: str, run_id: str, note: str) -> None:
        """Record a protocol remark about a run's input (see ``GET /notes``)."""
        self._notes.append(Note(thread_id, run_id, note))

    def notes(self, thread_id: str | None = None) -> list[dict[str, str]]:
        """The protocol remarks as wire dicts, oldest first; only ``thread_id``'s when given."""
        return [
            {"threadId": n.thread_id, "runId": n.run_id, "note": n.note}
            for n in self._notes
            if thread_id in (None, n.thread_id)
        ]

    def _redact_secrets(self, thread_id: str, dumped: dict[str, Any]) -> None:
        open_set = self.thread(thread_id).open
        if open_set is None:
            return
        pending = open_set.by_id()
        for entry in dumped.get("resume") or []:
            item = pending.get(entry.get("interruptId"))
            payload = entry.get("payload")
            if item is None or not isinstance(payload, dict):
                continue
            properties = (item.interrupt.response_schema or {}).get("properties") or {}
            for name, prop in properties.items():
                if isinstance(prop, dict) and is_secret_property(prop) and name in payload:
                    payload[name] = _redacted(payload[name])


def _redacted(value: Any) -> str:
    return f"<redacted:{len(value)}>" if isinstance(value, str) else "<redacted>"
