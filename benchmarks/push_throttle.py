"""What the Reflex layer pushes while a run streams: how often, how many bytes, and the pickle cost.

No browser and no server. Three parts:

1. **Push rate.** ``_drive`` (interrupt_chat/state.py) pushes when an event is in ``_FLUSH_NOW`` or
   ``_PUSH_INTERVAL`` has passed since the last push. That decision is replayed on a virtual clock
   (events evenly spaced at a given delta rate) with the real ``_FLUSH_NOW`` / ``_PUSH_INTERVAL``:
   pushes per second vs deltas per second, and how long an event waits until a push shows it,
   also with a pause after the answer (a slow tool). Then the real ``_drive`` is run once on a
   real clock to cross-check that pause.
2. **Bytes per push** at the end of a long thread (199 runs of history, run 200 replayed at 100
   deltas/s), with the real ``ChatState._publish`` on a real Reflex state tree: ``get_delta()``
   serialised with Reflex's ``json_dumps``, i.e. what goes over the websocket. Pushes that carry
   only ``live`` vs pushes that resend the whole ``messages`` list; and, as a what-if for the
   suggested fix, the same replay with the run's own messages kept in ``live`` (``TailPublish``).
3. **Pickle** of the chat's ``AgentSession`` (and of the chat substate, which holds every thread's
   session in ``_sessions``) at the end of the thread: what the state manager pickles.

Run: ``.venv/bin/python -m benchmarks.push_throttle`` (about 3 s).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import pickle
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import ROOT, RUNS, THREAD_ID, ids, ms, run_events, typed_runs, user_text  # noqa: E402

os.chdir(ROOT)  # Reflex reads rxconfig.py from the working directory

import reflex as rx  # noqa: E402
from reflex_base.constants.state import FIELD_MARKER  # noqa: E402
from reflex_base.utils import format as rx_format  # noqa: E402

from interrupt_chat import state as chat_state  # noqa: E402
from interrupt_chat.agui import AgentClient, AgentSession, ChunkExpander, Verifier, parse_event  # noqa: E402
from interrupt_chat.state import _FLUSH_NOW, _PUSH_INTERVAL, PUSHES_PER_SECOND  # noqa: E402

RATES = (10, 30, 100, 300, 1000, 5000)  # deltas per second
PAUSE = 3.0  # seconds between the answer's end and the tool call, in the "slow tool" scenario
REPLAY_RATE = 100  # deltas/s for part 2
DECISION = "if event.type in _FLUSH_NOW or now - last_push >= _PUSH_INTERVAL"


def should_push(kind: Any, now: int, last_push: int | None) -> bool:
    """``_drive``'s decision (see DECISION). Times are integer nanoseconds on the virtual clock, so
    that 5 x 10 ms is exactly 50 ms (float steps would drift under the interval)."""
    return kind in _FLUSH_NOW or last_push is None or (now - last_push) / 1e9 >= _PUSH_INTERVAL


def timeline(events: list[Any], rate: float, pause_after_answer: float = 0.0) -> list[int]:
    """Arrival times (ns): one event every 1/rate s; optionally a pause before TOOL_CALL_START."""
    step, pause = round(1e9 / rate), round(pause_after_answer * 1e9)
    times, now = [], 0
    for event in events:
        if pause and event.type.value == "TOOL_CALL_START":
            now += pause
        times.append(now)
        now += step
    return times


@dataclass
class Replay:
    pushes: list[int] = field(default_factory=list)  # index of the event each push happened at
    flushes: int = 0
    stale: list[float] = field(default_factory=list)  # per event: seconds until a push showed it


def replay(events: list[Any], times: list[int]) -> Replay:
    out, last_push, unpushed = Replay(), None, []
    for index, (event, now) in enumerate(zip(events, times)):
        unpushed.append(now)
        if should_push(event.type, now, last_push):
            out.pushes.append(index)
            out.flushes += event.type in _FLUSH_NOW
            out.stale += [(now - arrived) / 1e9 for arrived in unpushed]
            unpushed, last_push = [], now
    out.stale += [float("inf")] * len(unpushed)  # never shown by a push inside the run
    return out


def part1() -> None:
    print(f"1. push rate (_drive's throttle: at most {PUSHES_PER_SECOND}/s,"
          f" _PUSH_INTERVAL={_PUSH_INTERVAL * 1e3:.0f} ms;"
          f" pushed at once: {', '.join(sorted(k.value for k in _FLUSH_NOW))})")
    if DECISION not in inspect.getsource(chat_state._drive):
        print("   WARNING: _drive's push decision changed; this replay may no longer match it")
    long_run = [parse_event(e) for e in run_events(0, deltas=2000, arg_deltas=12)]
    text = [k for k, e in enumerate(long_run) if e.type.value == "TEXT_MESSAGE_CONTENT"]
    deltas = sum(e.type.value in ("TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS") for e in long_run)
    print(f"   one run of {len(long_run)} events ({deltas} deltas: {len(text)} text, the rest tool arguments),"
          f" evenly spaced:")
    print(f"   {'deltas/s':>9s} {'pushes':>7s} {'immediate':>10s} {'pushes/s while the answer streams':>34s}"
          f" {'deltas/push':>12s} {'max wait':>9s}")
    for rate in RATES:
        times = timeline(long_run, rate)
        result = replay(long_run, times)
        in_answer = [k for k in result.pushes if text[0] <= k <= text[-1]]
        answer_seconds = (times[text[-1]] - times[text[0]]) / 1e9
        print(f"   {rate:9d} {len(result.pushes):7d} {result.flushes:10d} {len(in_answer) / answer_seconds:34.1f}"
              f" {deltas / len(result.pushes):12.1f} {max(result.stale) * 1e3:7.0f}ms")
    run = [parse_event(e) for e in run_events(0)]
    times = timeline(run, 100, pause_after_answer=PAUSE)
    result = replay(run, times)
    worst = max(range(len(run)), key=lambda k: result.stale[k])
    late = [run[k].type.value for k in range(len(run)) if result.stale[k] >= PAUSE]
    print(f"   a standard run at 100 deltas/s with a {PAUSE:.0f} s pause before TOOL_CALL_START (a slow tool):")
    print(f"     max wait {result.stale[worst]:.2f} s (event {worst}, {run[worst].type.value}); events shown only"
          f" after the pause: {len(late)} ({', '.join(sorted(set(late)))})")
    print("     -> no trailing push: the last deltas of the answer and its END (the 'streaming' cursor)"
          " wait for the next event")
    real_drive_check()


def real_drive_check(deltas: int = 40, rate: float = 100.0, pause: float = 1.0) -> None:
    """Cross-check on the real ``_drive`` (real clock, real state tree; ``async with`` is a no-op
    outside the state manager): an answer of ``deltas`` deltas at ``rate``/s, its END right after the
    last delta (as agents send it), then ``pause`` s of silence before the tool call. Prints how long
    the finished answer (all its text, no longer streaming) took to reach a push."""
    root, chat = chat_tree()
    chat_cls = type(chat)
    session = AgentSession(AgentClient("http://127.0.0.1:9/"), thread_id=THREAD_ID)
    chat._sessions, chat.thread_id = {session.thread_id: session}, session.thread_id
    events = [parse_event(e) for e in run_events(0, deltas=deltas)]
    answer_id = ids(0)["answer"]
    ended: list[float] = []  # when TEXT_MESSAGE_END was applied
    shown: list[tuple[float, bool]] = []  # (publish time, the answer was finished in it)

    async def stream():  # what AgentSession.stream yields: events already applied
        verifier = Verifier()
        session._run = _Running()
        try:
            for event in events:
                kind = event.type.value
                await asyncio.sleep(pause if kind == "TOOL_CALL_START" else 0 if kind == "TEXT_MESSAGE_END"
                                    else 1.0 / rate)
                session._apply(verifier, event)
                if kind == "TEXT_MESSAGE_END":
                    ended.append(time.perf_counter())
                yield event
        finally:
            session._run = None

    original = chat_cls._publish

    def recording(self: Any, session: AgentSession, **kwargs: Any) -> None:
        original(self, session, **kwargs)
        message = session.transcript.message(answer_id)
        shown.append((time.perf_counter(), message is not None and not message.streaming))

    chat_cls._publish = recording  # this benchmark's own class (new_chat_state), restored below
    try:
        asyncio.run(chat_state._drive(chat, chat_cls, session, stream()))
    finally:
        chat_cls._publish = original
    first_finished = next(t for t, finished in shown if finished)
    print(f"   the real _drive ({deltas} deltas at {rate:.0f}/s, END, then {pause:.1f} s of silence): {len(shown)}"
          f" publishes; the finished answer was shown {first_finished - ended[0]:.2f} s after its END arrived")


# -- part 2: bytes ----------------------------------------------------------------------------------

class _Running:
    """Stands in for the HTTP run while replaying (``session.running`` is True, as in ``_drive``)."""

    def cancel(self) -> None:  # pragma: no cover - never called
        pass


def chat_tree() -> tuple[rx.State, Any]:
    chat_cls = chat_state.new_chat_state("benchmark", agent_url="http://127.0.0.1:9/", configs=[])
    root = rx.State(_reflex_internal_init=True)  # what the state manager does for a new tab
    return root, root.get_substate(chat_cls.get_full_name().split("."))


def sent(root: rx.State) -> tuple[dict[str, Any], int]:
    """The delta a push sends, and its size in bytes (UTF-8 JSON, as Reflex serialises it)."""
    delta = root.get_delta()
    size = len(rx_format.json_dumps(delta).encode())
    root._clean()
    return delta, size


@dataclass
class Push:
    event: str  # the event at which it was pushed; "send" / "end" for _send_text / _drive's finally
    bytes: int
    seconds: float
    history: bool  # the delta carries the whole ``messages`` list


class CurrentPublish:
    """What interrupt_chat does today: ``ChatState._publish`` as ``_send_text`` and ``_drive`` call it."""

    label = "current _publish"

    def send(self, chat: Any, session: AgentSession) -> None:
        chat._publish(session, full=True, starting=True)

    def push(self, chat: Any, session: AgentSession) -> None:
        chat._publish(session)

    def end(self, chat: Any, session: AgentSession) -> None:
        chat._publish(session, full=True)


class TailPublish(CurrentPublish):
    """WHAT-IF, to size a suggested fix (interrupt_chat is not changed): during a run, ``live`` holds
    the rows of the run's own messages (from its user message on) and ``messages`` stays as it was,
    unless an older message changes (not in this scenario; a real fix must also rebuild on
    MESSAGES_SNAPSHOT or set_awaiting of an older call). The end of the run merges, as today."""

    label = "what-if: run tail in `live`"

    def __init__(self) -> None:
        self.start = 0

    def send(self, chat: Any, session: AgentSession) -> None:
        self.start = len(session.transcript.messages) - 1  # the user message just added
        self.push(chat, session, starting=True)

    def push(self, chat: Any, session: AgentSession, starting: bool = False) -> None:
        transcript = session.transcript
        _, changed = transcript.take_changes()
        head = transcript.messages[:self.start]
        if any(m.id in changed for m in head):
            chat.messages = [row for m in head if (row := chat_state._row(m, transcript))]
        chat.live = [row for m in transcript.messages[self.start:] if (row := chat_state._row(m, transcript))]
        pending = session.tracker.pending  # the rest as ChatState._publish
        chat.status = ("running" if session.running or starting else "error" if session.error
                       else "interrupted" if pending is not None else "idle")
        chat.error = session.error or ""
        chat.step = transcript.step or ""
        chat.locked = pending is not None


def replay_publish(root: rx.State, chat: Any, session: AgentSession, publisher: CurrentPublish, i: int,
                   events: list[Any], rate: float) -> list[Push]:
    """Run ``i`` published as ``ChatState._send_text`` + ``_drive`` do, on a virtual clock."""
    pushes: list[Push] = []

    def push(step: Any, event: str) -> None:
        t0 = time.perf_counter()
        step(chat, session)
        delta, size = sent(root)
        elapsed = time.perf_counter() - t0
        vars_sent = next(iter(delta.values()), {})
        history = any(k.split(FIELD_MARKER)[0] == "messages" for k in vars_sent)
        pushes.append(Push(event, size, elapsed, history))

    session.transcript.add_user_message(ids(i)["user"], user_text(i))
    session._run = _Running()
    push(publisher.send, "send")
    chunks, verifier, last_push = ChunkExpander(), Verifier(), None
    for event, now in zip(events, timeline(events, rate)):
        for expanded in chunks.feed(event):
            session._apply(verifier, expanded)
        if should_push(event.type, now, last_push):
            push(publisher.push, event.type.value)
            last_push = now
    session._run = None
    session.tracker.finalize()
    session._after_run()
    push(publisher.end, "end")
    return pushes


def long_thread(runs: list[list[Any]]) -> tuple[rx.State, Any, AgentSession]:
    """A chat tab whose thread holds ``runs``, published and delivered (nothing dirty)."""
    root, chat = chat_tree()
    session = AgentSession(AgentClient("http://127.0.0.1:9/"), thread_id=THREAD_ID)
    for i, events in enumerate(runs):
        session.transcript.add_user_message(ids(i)["user"], user_text(i))
        for event in events:
            session.transcript.apply(event)
    chat._sessions = {session.thread_id: session}
    chat.thread_id = session.thread_id
    chat._publish(session, full=True)
    sent(root)
    return root, chat, session


def part2_and_3() -> None:
    began = time.perf_counter()
    history = typed_runs(RUNS - 1)
    root, chat, session = long_thread(history)
    messages_bytes = len(rx_format.json_dumps(chat.messages).encode())
    print(f"\n2. bytes per push at the end of a long thread: {RUNS - 1} runs of history, then run {RUNS} replayed"
          f" at {REPLAY_RATE} deltas/s (built in {time.perf_counter() - began:.1f} s)")
    print(f"   the whole message list (`messages` var, {len(chat.messages)} rows): {messages_bytes:,} bytes of JSON")
    scenarios = (("standard run (200 text deltas, 12 argument deltas)", dict(arg_deltas=12)),
                 ("a run whose tool call streams 200 argument deltas", dict(arg_deltas=200)))
    for title, shape in scenarios:
        events = [parse_event(e) for e in run_events(RUNS - 1, **shape)]
        print(f"   {title}:")
        totals = {}
        for publisher in (CurrentPublish(), TailPublish()):
            if publisher.__class__ is not CurrentPublish or title != scenarios[0][0]:
                root, chat, session = long_thread(history)  # the same starting point for each replay
            pushes = replay_publish(root, chat, session, publisher, RUNS - 1, events, REPLAY_RATE)
            live = [p for p in pushes if not p.history]
            full = [p for p in pushes if p.history]
            totals[publisher.label] = total = sum(p.bytes for p in pushes)
            print(f"     {publisher.label}: {len(pushes)} pushes, {total:,} bytes in all,"
                  f" largest streaming push {max(p.bytes for p in pushes if p.event not in ('send', 'end')):,} bytes")
            live_bytes = statistics.mean(p.bytes for p in live)
            print(f"       without the history {len(live):3d}   mean {live_bytes:9,.0f} bytes"
                  f"   {ms(statistics.median(p.seconds for p in live))} CPU each"
                  f"   (whole list / this = {messages_bytes / live_bytes:,.0f}x)")
            if full:
                where = ", ".join(f"{k} x{n}" for k, n in _count(p.event for p in full).items())
                print(f"       with the history    {len(full):3d}   mean {statistics.mean(p.bytes for p in full):9,.0f}"
                      f" bytes   {ms(statistics.median(p.seconds for p in full))} CPU each   (at: {where})")
        current, tail = totals.values()
        print(f"     -> bytes per run, current / what-if: {current / tail:.1f}x")

    print(f"\n3. pickling at the end of the thread ({len(session.transcript.messages)} messages)")
    t_session = _best(lambda: pickle.dumps(session), 5)
    n_session = len(pickle.dumps(session))
    t_chat = _best(chat._serialize, 5)
    n_chat = len(chat._serialize())
    print(f"   pickle.dumps(AgentSession)             {ms(t_session)}   {n_session / 1024:7.0f} KiB")
    print(f"   ChatState._serialize() (the substate)  {ms(t_chat)}   {n_chat / 1024:7.0f} KiB"
          f"   (every thread of the tab, in _sessions, + the vars)")
    print(f"   note: Reflex pickles a touched substate when the lock is released. With Redis that is every"
          f" push: up to {PUSHES_PER_SECOND}/s x {t_chat * 1e3:.1f} ms = {PUSHES_PER_SECOND * t_chat * 100:.0f}%"
          f" of a core per streaming tab at this length, growing with the thread. The default disk manager"
          f" (0.10) debounces writes (2 s); the memory manager never pickles.")


def _count(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    began = time.perf_counter()
    part1()
    part2_and_3()
    print(f"\n(total {time.perf_counter() - began:.1f} s)")


if __name__ == "__main__":
    main()
