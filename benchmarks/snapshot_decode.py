"""A thread's ``MESSAGES_SNAPSHOT`` from its JSON text to the transcript: decoded straight from the text (issue 27).

Producers such as LangGraph's AG-UI adapter end every run with a snapshot of the whole thread, so its cost
is paid once per run and grows with the thread. The snapshot-heavy thread of ``core_scaling`` (per run a
user message, an answer with a tool call, its result) is cut after 20, 100 and 200 runs (60 to 600
messages, up to 300 KB); for each snapshot, in this run:

- **before**: what ``transport._decode`` did until now: ``json.loads``, the depth walk
  (``sanitize.too_deep``), then ``parse_event`` (pydantic validates the dicts);
- **now**: ``transport._decode`` as it is: ``parse_snapshot_json`` reads the text straight into the
  models (``TypeAdapter.validate_json``), then checks the snapshot is plain (no unknown fields, no
  activity content) so no depth walk is needed;
- **merge**: ``Transcript.apply`` of the snapshot onto the thread as the client holds it (the same
  messages: what a run's final snapshot does), per message; before: with the message views built as
  until now (``getattr`` for fields a role may lack: pydantic raises and catches an AttributeError for
  each miss), now: from the model's ``__dict__``.

Each figure is the fastest of 15 repetitions, in microseconds per message; the ratio before/now is printed
per size, and the merge's cost per message at 600 over 60 messages (1.0: linear).

Run: ``.venv/bin/python -m benchmarks.snapshot_decode`` (about 10 s).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ag_ui.core import ActivityMessage, AssistantMessage, ToolMessage

from benchmarks.core_scaling import history_of
from interrupt_chat.agui import transport
from interrupt_chat.agui.events import parse_event
from interrupt_chat.agui.message_views import MessageView, ToolCallView
from interrupt_chat.agui.sanitize import too_deep
from interrupt_chat.agui.transcript import Transcript
from interrupt_chat.agui.wire_messages import text_of

RUNS = (20, 100, 200)
REPEATS = 15


def snapshot_text(runs: int) -> str:
    """The snapshot of the first ``runs`` runs' messages, as its JSON text."""
    messages = [m for i in range(runs) for m in history_of(i)]
    return json.dumps({"type": "MESSAGES_SNAPSHOT", "messages": messages})


def before(data: str):
    """The general path: dicts, the depth walk, then validation."""
    obj = json.loads(data)
    assert not too_deep(obj)
    return parse_event(obj)


def now(data: str):
    """The transport's decode as it is."""
    return transport._decode(data, transport.SurrogateRepair())


class BeforeTranscript(Transcript):
    """The transcript with its message views built as before (``getattr`` per optional field)."""

    def _view_from_message(self, message):  # the previous code, whole
        role = message.role
        content = getattr(message, "content", None)
        view = MessageView(id=message.id, role=role, parts=[text_of(content)] if content else [],
                           name=getattr(message, "name", None),
                           encrypted_value=getattr(message, "encrypted_value", None))
        if content is not None and not isinstance(content, str) and role != "activity":
            view.raw_content = content
        if isinstance(message, AssistantMessage):
            for tool_call in message.tool_calls or []:
                call = self.tool_calls.get(tool_call.id)
                if call is None:
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


def fastest(fn, *args) -> float:
    """The fastest of :data:`REPEATS` calls, in seconds."""
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Print the table."""
    print(f"{'messages':>8} {'KB':>6} {'decode µs/msg: before':>22} {'now':>6} {'ratio':>6}"
          f" {'merge µs/msg: before':>21} {'now':>6} {'ratio':>6}")
    merges = []
    for runs in RUNS:
        data = snapshot_text(runs)
        event = now(data)
        assert event is not None and event == before(data), "the fast path must read the same event"
        count = len(event.messages)
        transcript, baseline = Transcript(), BeforeTranscript()
        transcript.apply(event)
        baseline.apply(event)
        old, new = fastest(before, data) / count, fastest(now, data) / count
        old_merge, merge = fastest(baseline.apply, event) / count, fastest(transcript.apply, event) / count
        merges.append(merge)
        print(f"{count:>8} {len(data) / 1024:>6.0f} {old * 1e6:>22.2f} {new * 1e6:>6.2f} {old / new:>5.2f}x"
              f" {old_merge * 1e6:>21.2f} {merge * 1e6:>6.2f} {old_merge / merge:>5.2f}x")
    print(f"merge per message, {len(history_of(0)) * RUNS[-1]} vs {len(history_of(0)) * RUNS[0]} messages:"
          f" {merges[-1] / merges[0]:.2f}x (1.0: linear)")


if __name__ == "__main__":
    main()
