"""Does the reducer stay O(1) per event as a thread grows? (``Transcript.apply``; no network, no Reflex)

Builds a 200-run thread (per run: a user message, an answer streamed in 200 deltas, a tool call
streamed in 12 argument deltas, its result; see ``_thread.py``) and prints:

1. the cost per event of ``Transcript.apply`` in the last 10 runs vs the first 10 (ratio ~1 means
   O(1) per event), the same for the whole in-process pipeline (chunks + verify + reduce +
   interrupt tracker, i.e. ``AgentSession._apply``), and the per-event-type costs;
2. the cost of ``to_messages()`` (and of the whole next-run request body) at the start and the end:
   linear in the history by nature, paid once per run, not per event;
3. for contrast, a naive reducer that deep-copies the message list before applying each event (what
   ``@ag-ui/client``'s reducer does, with ``structuredClone``) and its end/start ratio.

Run: ``.venv/bin/python -m benchmarks.reducer_scaling`` (about 2 s).
"""

from __future__ import annotations

import copy
import gc
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import RUNS, ids, ms, typed_runs, us, user_text  # noqa: E402
from interrupt_chat.agui import AgentSession, ChunkExpander, Transcript, Verifier  # noqa: E402

REPEATS = 5  # whole-thread builds; each run's cost is the fastest of these
WINDOW = 10  # runs compared at the start and the end
NAIVE_RUNS = 2  # runs timed with the naive reducer at each end (it gets slow)


def per_run_costs(runs: list[list[Any]], make, apply) -> list[float]:
    """Seconds per event of each run (fastest of REPEATS builds of the whole thread)."""
    best = [float("inf")] * len(runs)
    for _ in range(REPEATS):
        target = make()
        for i, events in enumerate(runs):
            t0 = time.perf_counter()
            apply(target, i, events)
            best[i] = min(best[i], (time.perf_counter() - t0) / (len(events) + 1))
    return best


def apply_transcript(transcript: Transcript, i: int, events: list[Any]) -> None:
    transcript.add_user_message(ids(i)["user"], user_text(i))
    for event in events:
        transcript.apply(event)


def apply_pipeline(session: AgentSession, i: int, events: list[Any]) -> None:
    """What ``AgentSession.stream`` does per event once the transport has parsed it."""
    session.transcript.add_user_message(ids(i)["user"], user_text(i))
    chunks, verifier = ChunkExpander(), Verifier()
    for wire_event in events:
        for event in chunks.feed(wire_event):
            session._apply(verifier, event)
    verifier.end_of_stream()
    session.tracker.finalize()
    session._after_run()


class SuggestedTranscript(Transcript):
    """``Transcript`` with the two O(history) steps found by this benchmark made O(1) (a what-if,
    to size the suggested fix; interrupt_chat itself is not changed):

    - ``TOOL_CALL_RESULT``: ``_result_position`` finds the owner with ``self.messages.index(owner)``,
      a scan from the start comparing with the dataclass ``__eq__`` (a tuple of every field per
      message); the owner is nearly always one of the last messages, so scan back by identity;
    - ``RUN_STARTED`` (and ``AgentSession._after_run``): ``set_awaiting`` walks every tool call of
      the thread; only the calls marked awaiting (at most the open interrupts) need a look.
    """

    def __init__(self) -> None:
        super().__init__()
        self._awaiting_ids: set[str] = set()

    def set_awaiting(self, tool_call_ids: set[str] | list[str]) -> None:
        wanted = set(tool_call_ids)
        for call_id in self._awaiting_ids | wanted:  # only set_awaiting ever sets awaiting=True
            call = self.tool_calls.get(call_id)
            if call is not None and call.awaiting != (call.id in wanted):
                call.awaiting = call.id in wanted
                if call.awaiting:
                    call.failed = False
                self._changed.add(call.parent_message_id)
        self._awaiting_ids = wanted

    def _result_position(self, call: Any) -> int:
        owner = self._by_id.get(call.parent_message_id) if call else None
        if owner is None:
            return len(self.messages)
        messages = self.messages
        index = next((k for k in range(len(messages) - 1, -1, -1) if messages[k] is owner), None)
        if index is None:
            return len(messages)
        owned = set(owner.tool_call_ids)
        position = index + 1
        while position < len(messages) and messages[position].role == "tool" \
                and messages[position].tool_call_id in owned:
            position += 1
        return position


def by_type(runs: list[list[Any]], window: range, make=Transcript) -> tuple[dict[str, float], Transcript]:
    """Median cost of each event type over the runs in ``window`` (each event timed alone)."""
    samples: dict[str, list[float]] = defaultdict(list)
    transcript = make()
    timer = time.perf_counter
    for i, events in enumerate(runs):
        timed = i in window
        transcript.add_user_message(ids(i)["user"], user_text(i))
        for event in events:
            if timed:
                t0 = timer()
                transcript.apply(event)
                samples[event.type.value].append(timer() - t0)
            else:
                transcript.apply(event)
    return {k: statistics.median(v) for k, v in samples.items()}, transcript


class NaiveReducer:
    """A reducer in the style of ``@ag-ui/client``'s ``defaultApplyEvents``: plain message dicts,
    the list deep-copied before each event is applied, messages found by a scan (``messages.find``)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.copying = True

    def _find(self, messages: list[dict[str, Any]], message_id: str) -> dict[str, Any] | None:
        return next((m for m in messages if m["id"] == message_id), None)

    def _find_call(self, messages: list[dict[str, Any]], call_id: str) -> dict[str, Any] | None:
        for m in messages:
            for call in m.get("toolCalls", ()):
                if call["id"] == call_id:
                    return call
        return None

    def add_user(self, message_id: str, text: str) -> None:
        messages = copy.deepcopy(self.messages) if self.copying else self.messages
        messages.append({"id": message_id, "role": "user", "content": text})
        self.messages = messages

    def apply(self, event: Any) -> None:
        kind = event.type.value
        if kind in ("RUN_STARTED", "RUN_FINISHED"):
            return  # run status only: no copy of the messages
        messages = copy.deepcopy(self.messages) if self.copying else self.messages
        if kind == "TEXT_MESSAGE_START":
            messages.append({"id": event.message_id, "role": event.role, "content": ""})
        elif kind == "TEXT_MESSAGE_CONTENT":
            message = self._find(messages, event.message_id)
            message["content"] += event.delta
        elif kind == "TOOL_CALL_START":
            parent = self._find(messages, event.parent_message_id)
            parent.setdefault("toolCalls", []).append(
                {"id": event.tool_call_id, "type": "function",
                 "function": {"name": event.tool_call_name, "arguments": ""}})
        elif kind == "TOOL_CALL_ARGS":
            self._find_call(messages, event.tool_call_id)["function"]["arguments"] += event.delta
        elif kind == "TOOL_CALL_RESULT":
            messages.append({"id": event.message_id, "role": "tool", "toolCallId": event.tool_call_id,
                             "content": event.content})
        self.messages = messages


def naive_costs(runs: list[list[Any]]) -> tuple[float, float]:
    """Seconds per event over the first and the last NAIVE_RUNS runs (the middle is fast-forwarded)."""
    reducer = NaiveReducer()
    start = end = 0.0
    count_start = count_end = 0
    last = len(runs) - NAIVE_RUNS
    for i, events in enumerate(runs):
        timed = i < NAIVE_RUNS or i >= last
        reducer.copying = timed  # same final state either way; only the timed runs pay the copies
        t0 = time.perf_counter()
        reducer.add_user(ids(i)["user"], user_text(i))
        for event in events:
            reducer.apply(event)
        elapsed = time.perf_counter() - t0
        if i < NAIVE_RUNS:
            start, count_start = start + elapsed, count_start + len(events) + 1
        elif i >= last:
            end, count_end = end + elapsed, count_end + len(events) + 1
    return start / count_start, end / count_end


def window_mean(values: list[float], window: range) -> float:
    return statistics.mean(values[i] for i in window)


def main() -> None:
    began = time.perf_counter()
    runs = typed_runs(RUNS)
    per_run_events = len(runs[0]) + 1
    total = sum(len(r) + 1 for r in runs)
    first, last = range(WINDOW), range(RUNS - WINDOW, RUNS)
    print(f"thread: {RUNS} runs x {per_run_events} events (user message + {len(runs[0])} AG-UI events)"
          f" = {total} events")

    # 1. per event, start vs end --------------------------------------------------------------------
    transcript_costs = per_run_costs(runs, Transcript, apply_transcript)
    pipeline_costs = per_run_costs(runs, lambda: AgentSession("http://127.0.0.1:9/", thread_id="thread-bench"),
                                   apply_pipeline)
    print("\n1. cost per event, first vs last runs (fastest of %d builds, mean over %d runs)" % (REPEATS, WINDOW))
    rows = [("Transcript.apply", transcript_costs), ("chunks+verify+reduce+tracker", pipeline_costs)]
    for label, costs in rows:
        a, b = window_mean(costs, first), window_mean(costs, last)
        print(f"   {label:30s} start {us(a)}   end {us(b)}   end/start ratio {b / a:5.2f}")

    start_types, _ = by_type(runs, first)
    end_types, transcript = by_type(runs, last)
    fixed_start, _ = by_type(runs, first, SuggestedTranscript)
    fixed_end, fixed_transcript = by_type(runs, last, SuggestedTranscript)
    assert [m.id for m in fixed_transcript.messages] == [m.id for m in transcript.messages]
    print("   by event type (median, Transcript.apply; last column: SuggestedTranscript, see below):")
    for kind in start_types:
        a, b = start_types[kind], end_types[kind]
        fa, fb = fixed_start[kind], fixed_end[kind]
        print(f"     {kind:22s} start {us(a)}   end {us(b)}   ratio {b / a:5.2f}   (suggested fix: {fb / fa:5.2f})")
    fixed_costs = per_run_costs(runs, SuggestedTranscript, apply_transcript)
    a, b = window_mean(fixed_costs, first), window_mean(fixed_costs, last)
    print(f"   {'SuggestedTranscript.apply':30s} start {us(a)}   end {us(b)}   end/start ratio {b / a:5.2f}"
          "   (what-if: O(1) result placement and set_awaiting)")

    # 2. the next run's messages ----------------------------------------------------------------------
    small = Transcript()
    for i in range(WINDOW):
        apply_transcript(small, i, runs[i])
    print(f"\n2. to_messages() (once per run: the history sent with the next run)")
    for label, t in ((f"after {WINDOW} runs", small), (f"after {RUNS} runs", transcript)):
        n = len(t.messages)
        cost = min_time(t.to_messages, 20)
        print(f"   {label:16s} {n:4d} messages  {ms(cost)}  ({us(cost / n).strip()} per message)")
    session = AgentSession("http://127.0.0.1:9/", thread_id="thread-bench")
    session.transcript = transcript

    def request_body() -> bytes:
        run_input = session.build_input()
        body = run_input.model_dump(mode="json", by_alias=True, exclude_none=True)
        return json.dumps(body).encode()

    body_cost = min_time(request_body, 10)
    run_cost = sum(transcript_costs[i] * (len(runs[i]) + 1) for i in last) / WINDOW
    print(f"   whole request body at the end (build_input + model_dump + json): {ms(body_cost).strip()}"
          f" for {len(request_body()) / 1024:.0f} KiB;")
    print(f"   vs reducing one whole run at the end: {ms(run_cost).strip()}  "
          f"(ratio {body_cost / run_cost:.1f}, paid once per run)")

    # 3. the naive deep-copying reducer ----------------------------------------------------------------
    gc.collect()
    naive_start, naive_end = naive_costs(runs)
    ours_start, ours_end = window_mean(transcript_costs, first), window_mean(transcript_costs, last)
    print(f"\n3. naive reducer (deep copy of the message list per event; first/last {NAIVE_RUNS} runs)")
    print(f"   naive                          start {us(naive_start)}   end {us(naive_end)}"
          f"   end/start ratio {naive_end / naive_start:7.1f}")
    print(f"   ours (Transcript.apply)        start {us(ours_start)}   end {us(ours_end)}"
          f"   end/start ratio {ours_end / ours_start:7.2f}")
    print(f"   naive/ours per event at the end: {naive_end / ours_end:.0f}x")
    print(f"\n(total {time.perf_counter() - began:.1f} s)")


def min_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


if __name__ == "__main__":
    main()
