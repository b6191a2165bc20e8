"""Does the reducer stay O(1) per event as a thread grows? (``Transcript.apply``; no network, no Reflex)

Builds a 200-run thread (per run: a user message, an answer streamed in 200 deltas, a tool call
streamed in 12 argument deltas, its result; see ``_thread.py``). Every run starts the way
``AgentSession.send`` starts it: ``Transcript.mark_tail()``, then the user message. Prints:

1. the cost per event of ``Transcript.apply`` in the last 10 runs vs the first 10 (ratio ~1 means
   O(1) per event), the same for the whole in-process pipeline (``send``'s claim and tail mark,
   chunks + verify + reduce + interrupt tracker as ``AgentSession.stream`` does per event, and its
   end of run), and the per-event-type costs; then a human-in-the-loop pair (a run interrupted on
   its tool call, the resume run started as ``AgentSession.submit`` does) at both ends: the resume's
   ``RUN_STARTED`` clears the awaiting mark and its ``TOOL_CALL_RESULT`` is placed after its owner,
   both on a message that is history by then;
2. the cost of ``to_messages()`` (from its per-message cache, and built from scratch), of the whole
   next-run request body, and of a whole run through
   the real ``AgentSession.send()`` + ``stream()`` on an in-memory transport, at the start and the
   end: the request body is linear in the history by nature, paid once per run, not per event;
3. for contrast, a naive reducer that deep-copies the message list before applying each event (what
   ``@ag-ui/client``'s reducer does, with ``structuredClone``) and its end/start ratio.

Run: ``.venv/bin/python -m benchmarks.reducer_scaling`` (about 3 s).
"""

from __future__ import annotations

import asyncio
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

from benchmarks._thread import (RUNS, THREAD_ID, MemoryClient, best_of, ids, interrupt_id,  # noqa: E402
                                interrupted_run_events, ms, resume_run_events, start_run, typed_runs, us,
                                user_text)
from interrupt_chat.agui import AgentSession, ChunkExpander, Transcript, Verifier, parse_event  # noqa: E402

REPEATS = 5  # whole-thread builds; each run's cost is the fastest of these
WINDOW = 10  # runs compared at the start and the end
NAIVE_RUNS = 2  # runs timed with the naive reducer at each end (it gets slow)
SEND_REPEATS = 3  # whole-thread builds through AgentSession.send() + stream()
HITL_REPEATS = 200  # interrupted + resumed pairs timed at each end


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
    start_run(transcript, i)  # mark_tail + the user message, as AgentSession.send
    for event in events:
        transcript.apply(event)


def apply_pipeline(session: AgentSession, i: int, events: list[Any]) -> None:
    """``AgentSession.send`` (claim, ``mark_tail``, user message; its ``build_input`` is section 2)
    and what ``AgentSession.stream`` does per event once the transport has parsed it, and at the end."""
    session._claim()
    start_run(session.transcript, i)
    session._claimed = False  # stream() starts
    session.error = None
    session.transcript.status = "running"
    chunks, verifier = ChunkExpander(), Verifier()
    for wire_event in events:
        for event in chunks.feed(wire_event):
            session._apply(verifier, event)
    verifier.end_of_stream()
    session.tracker.finalize()
    session._after_run()


def send_costs(runs: list[list[Any]]) -> list[float]:
    """Seconds per whole run through the real ``AgentSession.send()`` + ``stream()`` (fastest of
    SEND_REPEATS builds): ``build_input`` (``to_messages`` of the history), then the events."""
    best = [float("inf")] * len(runs)

    async def build() -> None:
        session = AgentSession("http://127.0.0.1:9/", thread_id=THREAD_ID)
        session.client = MemoryClient(runs)
        for i in range(len(runs)):
            t0 = time.perf_counter()
            async for _ in session.send(user_text(i), message_id=ids(i)["user"]):
                pass
            best[i] = min(best[i], time.perf_counter() - t0)
        assert session.error is None and len(session.transcript.messages) == 3 * len(runs)

    for _ in range(SEND_REPEATS):
        asyncio.run(build())
    return best


def hitl_costs(history: list[list[Any]], index: int) -> dict[str, float]:
    """Median cost of the resume run's RUN_STARTED (clears the awaiting mark of the interrupted
    call, whose message is history now) and TOOL_CALL_RESULT (placed right after its owner),
    after ``len(history)`` runs: the pair (interrupted run ``index``, its resume) replayed
    HITL_REPEATS times on copies of the same transcript."""
    session = AgentSession("http://127.0.0.1:9/", thread_id=THREAD_ID)
    for i, events in enumerate(history):
        apply_pipeline(session, i, events)
    interrupted = [parse_event(e) for e in interrupted_run_events(index)]
    resumed = [parse_event(e) for e in resume_run_events(index)]
    apply_pipeline(session, index, interrupted)
    assert session.tracker.pending is not None and session.tracker.pending.ids == [interrupt_id(index)]
    call = session.transcript.tool_calls[ids(index)["call"]]
    assert call.status == "awaiting_approval"
    samples: dict[str, list[float]] = defaultdict(list)
    timer = time.perf_counter
    base = session.transcript
    for _ in range(HITL_REPEATS):
        transcript = copy.copy(base)  # shallow: fresh list/dict/sets, shared (unchanged) views
        transcript.messages, transcript._by_id = list(base.messages), dict(base._by_id)
        transcript.tool_calls = {k: copy.copy(v) for k, v in base.tool_calls.items()}
        transcript._awaiting, transcript._tail_ids = set(base._awaiting), set(base._tail_ids)
        transcript._run_tool_calls = set(base._run_tool_calls)
        transcript.mark_tail()  # AgentSession.submit: the resume run's messages start here
        transcript.take_changes()  # driver.publish(full=True, starting=True) at the submit
        for event in resumed[:2]:  # RUN_STARTED, TOOL_CALL_RESULT
            t0 = timer()
            transcript.apply(event)
            samples[event.type.value].append(timer() - t0)
        result = transcript.message(ids(index)["result"])
        owner = transcript.message(ids(index)["answer"])
        assert transcript.messages.index(result) == transcript.messages.index(owner) + 1
        # the interrupted run is history once the resume run starts: both events change its
        # assistant message (awaiting mark cleared, call complete); the result opens the new tail
        assert transcript.tail_start == len(transcript.messages) - 1 and transcript.take_changes() == (True, True)
    return {k: statistics.median(v) for k, v in samples.items()}


def by_type(runs: list[list[Any]], window: range, make=Transcript) -> tuple[dict[str, float], Transcript]:
    """Median cost of each event type over the runs in ``window`` (each event timed alone)."""
    samples: dict[str, list[float]] = defaultdict(list)
    transcript = make()
    timer = time.perf_counter
    for i, events in enumerate(runs):
        timed = i in window
        start_run(transcript, i)
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
    assert transcript.tail_start == len(transcript.messages) - 3  # the last run's tail: user, answer, result
    print("   by event type (median, Transcript.apply):")
    for kind in start_types:
        a, b = start_types[kind], end_types[kind]
        print(f"     {kind:22s} start {us(a)}   end {us(b)}   end/start ratio {b / a:5.2f}")
    print("   human in the loop: the resume run after a run interrupted on its tool call (submit -> mark_tail)")
    small_hitl, large_hitl = hitl_costs(runs[:WINDOW], WINDOW), hitl_costs(runs[:RUNS - 1], RUNS - 1)
    for kind in small_hitl:
        a, b = small_hitl[kind], large_hitl[kind]
        print(f"     resume {kind:16s} after {WINDOW:3d} runs {us(a)}   after {RUNS} runs {us(b)}"
              f"   end/start ratio {b / a:5.2f}")

    # 2. the next run's messages ----------------------------------------------------------------------
    small = Transcript()
    for i in range(WINDOW):
        apply_transcript(small, i, runs[i])
    print(f"\n2. to_messages() (once per run: the history sent with the next run)")
    for label, t in ((f"after {WINDOW} runs", small), (f"after {RUNS} runs", transcript)):
        n = len(t.messages)
        cost = best_of(t.to_messages, 20)  # nothing changed since the last call: every model from the cache
        uncached = best_of(t._to_messages_uncached, 20)  # every model built again (what it did before the cache)
        print(f"   {label:16s} {n:4d} messages  cached {ms(cost)}  ({us(cost / n).strip()} per message);"
              f"  uncached {ms(uncached)}  ({us(uncached / n).strip()} per message)")
    session = AgentSession("http://127.0.0.1:9/", thread_id="thread-bench")
    session.transcript = transcript

    def request_body() -> bytes:
        run_input = session.build_input()
        body = run_input.model_dump(mode="json", by_alias=True, exclude_none=True)
        return json.dumps(body).encode()

    body_cost = best_of(request_body, 10)
    run_cost = sum(transcript_costs[i] * (len(runs[i]) + 1) for i in last) / WINDOW
    print(f"   whole request body at the end (build_input + model_dump + json): {ms(body_cost).strip()}"
          f" for {len(request_body()) / 1024:.0f} KiB;")
    print(f"   vs reducing one whole run at the end: {ms(run_cost).strip()}  "
          f"(ratio {body_cost / run_cost:.1f}, paid once per run)")
    sends = send_costs(runs)
    a, b = window_mean(sends, first), window_mean(sends, last)
    print(f"   a whole run through AgentSession.send() + stream() (in-memory transport, fastest of {SEND_REPEATS}):"
          f" start {ms(a).strip()}, end {ms(b).strip()} (ratio {b / a:.1f}: the request body's to_messages)")

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




if __name__ == "__main__":
    main()
