"""What the Reflex layer pushes while a run streams: how often, how late, how many bytes, what it pickles.

No browser and no server. Everything runs the real send path: ``ChatState._send_text`` (what the
composer's submit runs: ``AgentSession.send`` -> ``mark_tail`` + the user message, the first
``driver.publish`` with ``starting=True``, then ``driver.drive``) and, for a resume, the real
``answers.answer`` (what the card's resolve runs: ``AgentSession.submit``, which keeps the
turn's tail, the publish, ``driver.drive``),
on a real Reflex state tree. The agent is a scripted in-memory transport that yields pre-parsed events at
given times; ``AgentSession.stream`` applies them (``session.running`` is true throughout, as in
the app). A push is one ``async with state`` block whose delta is not empty: its size is
``root.get_delta()`` serialised with Reflex's ``json_dumps``, i.e. what goes over the websocket.

1. **Push rate and latency.** On a virtual clock (an event loop whose time jumps to the next timer
   instead of sleeping; ``interrupt_chat.driver.time.monotonic`` is pointed at it for the run, so
   ``driver.drive``'s throttle (``driver._Throttle``), its trailing-push timer and the agent's pacing
   share one deterministic clock): pushes per second vs deltas per second, how long an event waits
   until a push shows it, and the trailing push after a pause (a stalled model, a slow tool). Then
   the real ``driver.drive`` once on the real clock, to cross-check the trailing push.
2. **Bytes per push** at the end of a long thread (199 runs of history, then run 200 at 100
   deltas/s): a standard run, a run whose tool call streams long arguments, and a human-in-the-loop
   pair (run 200 interrupted on its tool call, then the resume run through ``answers.answer``).
   The real ``driver.publish`` vs a naive baseline that reassigns the whole conversation at every
   push (same ``driver.drive`` schedule).
3. **Pickle and thread store** at the end of the thread: the chat's ``AgentSession``, the chat
   substate (what a Redis/disk state manager pickles) and ``ThreadStore.save`` (what
   ``persistence.save`` does at the end of every run when the thread store is on, its default),
   into a temporary file.

Run: ``.venv/bin/python -m benchmarks.push_throttle`` (about 8 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import pickle
import statistics
import sys
import tempfile
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import (ROOT, RUNS, THREAD_ID, MemoryRun, best_of, ids, interrupt_id, interrupted_run_events,  # noqa: E402
                                ms, resume_run_events, run_events, start_run, typed_runs, user_text)

os.environ["INTERRUPT_CHAT_DB_URL"] = "off"  # no SQLite file in the repository (part 3 uses a temp one)
os.chdir(ROOT)  # Reflex reads rxconfig.py from the working directory

import reflex as rx  # noqa: E402
from reflex_base.constants.state import FIELD_MARKER  # noqa: E402
from reflex_base.utils import format as rx_format  # noqa: E402

from interrupt_chat import answers, driver, registry  # noqa: E402
from interrupt_chat.agui import AgentSession, ChunkExpander, Verifier, parse_event  # noqa: E402
from interrupt_chat.driver import FLUSH_NOW, PUSH_INTERVAL, PUSHES_PER_SECOND  # noqa: E402
from benchmarks._pickle_store import ThreadStore  # noqa: E402  (the old pickle store: the baseline)
from interrupt_chat.views import message_rows  # noqa: E402

REAL_PUBLISH = driver.publish  # the real one (``recording`` patches the module attribute)

RATES = (10, 30, 100, 300, 1000, 5000)  # deltas per second
PAUSE = 3.0  # seconds of silence in the pause scenarios
REPLAY_RATE = 100  # deltas/s for part 2
DELTA_TYPES = ("TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS")


# -- a virtual clock --------------------------------------------------------------------------------

class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock jumps: when it would sleep until the next timer, it moves its time
    there instead. Nothing here does I/O, so a wait with nothing scheduled is a deadlock."""

    def __init__(self) -> None:
        super().__init__()
        self._virtual = 0.0
        select = self._selector.select

        def jump(timeout: float | None = None) -> Any:
            if timeout is None and not self._ready:
                raise RuntimeError("virtual clock: nothing is scheduled (deadlock)")
            if timeout:
                self._virtual += timeout
            return select(0)

        self._selector.select = jump

    def time(self) -> float:
        return self._virtual


@contextlib.contextmanager
def virtual_clock():
    """A VirtualLoop, with ``driver.drive``'s ``time.monotonic`` reading it (restored on exit)."""
    loop = VirtualLoop()
    real_time = driver.time
    driver.time = types.SimpleNamespace(monotonic=loop.time)
    try:
        yield loop
    finally:
        driver.time = real_time
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


# -- a scripted agent -------------------------------------------------------------------------------

class ScriptedRun(MemoryRun):
    """An ``AgentRun`` stand-in: sleeps ``gap`` then yields each event; records when each arrives."""

    def __init__(self, events: list[Any], gaps: list[float], arrivals: list[tuple[float, str]]) -> None:
        super().__init__(events)
        self.gaps, self.arrivals = gaps, arrivals

    async def _iterate(self):
        loop = asyncio.get_running_loop()
        for event, gap in zip(self._events, self.gaps):
            if gap:
                await asyncio.sleep(gap)
            self.arrivals.append((loop.time(), event.type.value))
            yield event


class ScriptedClient:
    """An ``AgentClient`` stand-in: ``run()`` plays the next scripted run."""

    url = "memory://scripted"  # the chat refuses to send without a configured agent URL

    def __init__(self) -> None:
        self.script: list[tuple[list[Any], list[float]]] = []
        self.arrivals: list[tuple[float, str]] = []

    def run(self, run_input: Any) -> ScriptedRun:
        events, gaps = self.script.pop(0)
        return ScriptedRun(events, gaps, self.arrivals)


def paced(events: list[Any], rate: float, pause: float = 0.0, pause_before: int | None = None) -> list[float]:
    """Gaps: one event every 1/rate s (the first at once); ``pause`` s more before event ``pause_before``."""
    gaps = [0.0] + [1.0 / rate] * (len(events) - 1)
    if pause_before is not None:
        gaps[pause_before] += pause
    return gaps


# -- the chat and its pushes ------------------------------------------------------------------------

@dataclass
class Push:
    at: float  # clock time of the push
    arrived: int  # events that had arrived by then
    kind: str  # send | resume | immediate | interval | trailing | end | other
    bytes: int
    seconds: float  # CPU inside the block, plus serialising the delta
    history: bool  # the delta carries the `messages` var (the history)


class Chat:
    """The benchmark's chat: its own ChatState subclass on a real state tree, with every push recorded."""

    def __init__(self) -> None:
        self.cls = registry.new_chat_state("benchmark", agent_url="http://127.0.0.1:9/", configs=[])
        self.root = rx.State(_reflex_internal_init=True)
        self.chat = self.root.get_substate(self.cls.get_full_name().split("."))
        self.config = self.root.get_substate(self.cls.default_config.get_full_name().split("."))
        self.client = ScriptedClient()
        self.pushes: list[Push] = []
        self.clock = time.monotonic
        self._label = "other"
        self._starting = "send"  # the kind of a publish with starting=True: "resume" inside resolve()
        self._entered = 0.0

    # a thread -------------------------------------------------------------------------------------

    def new_thread(self, history: list[list[Any]] = (), publish=None) -> AgentSession:
        """A fresh thread holding ``history`` (each run started as ``send`` does), published (with
        ``publish``, default ``driver.publish``) and delivered as at the end of its last run."""
        session = AgentSession("http://127.0.0.1:9/", thread_id=THREAD_ID)
        session.client = self.client
        for i, events in enumerate(history):
            start_run(session.transcript, i)
            chunks, verifier = ChunkExpander(), Verifier()
            for event in events:
                for expanded in chunks.feed(event):
                    session._apply(verifier, expanded)
            session.tracker.finalize()
            session._after_run()
        self.chat._sessions, self.chat.thread_id = {THREAD_ID: session}, THREAD_ID
        self.chat.messages, self.chat.live = [], []
        (publish or REAL_PUBLISH)(self.chat, session, full=True)
        self.root.get_delta()
        self.root._clean()
        self.client.arrivals.clear()
        self.pushes.clear()
        gc.collect()  # not inside a timed push
        return session

    # recording --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def recording(self, publish=None):
        """Record every push (``async with state`` on the chat or its slot config); optionally with
        ``publish`` in place of ``driver.publish``. The benchmark's own classes and ``driver.publish``
        (the module attribute, which ``state`` and ``driver`` both call), restored on exit."""
        classes = (self.cls, self.cls.default_config)
        saved = [(c, c.__dict__.get("__aenter__"), c.__dict__.get("__aexit__")) for c in classes]
        original_publish = driver.publish
        chat = self

        async def enter(state: Any) -> Any:
            chat._entered = time.perf_counter()
            return state

        async def leave(state: Any, *exc_info: Any) -> None:
            chat._record()

        def labelled(state: Any, session: AgentSession, *, full: bool = False, starting: bool = False) -> None:
            chat._label = chat._kind(full, starting)
            (publish or original_publish)(state, session, full=full, starting=starting)

        for cls in classes:
            cls.__aenter__, cls.__aexit__ = enter, leave
        driver.publish = labelled
        try:
            yield self
        finally:
            driver.publish = original_publish
            for cls, aenter, aexit in saved:
                for name, value in (("__aenter__", aenter), ("__aexit__", aexit)):
                    if value is None:
                        delattr(cls, name)
                    else:
                        setattr(cls, name, value)

    def _kind(self, full: bool, starting: bool) -> str:
        arrivals = self.client.arrivals
        if starting:  # _send_text's publish, or _answer's (submit keeps the tail: tell them apart by caller)
            return self._starting
        if full:
            return "end"
        if not arrivals:
            return "other"
        at, kind = arrivals[-1]
        if self.clock() > at:
            return "trailing"  # nothing new since the last change: the timer's push
        return "immediate" if kind in {k.value for k in FLUSH_NOW} else "interval"

    def _record(self) -> None:
        delta = self.root.get_delta()
        if delta:
            size = len(rx_format.json_dumps(delta).encode())
            seconds = time.perf_counter() - self._entered
            sent = {name.split(FIELD_MARKER)[0] for vars_ in delta.values() for name in vars_}
            self.pushes.append(Push(self.clock(), len(self.client.arrivals), self._label, size, seconds,
                                    "messages" in sent))
        self.root._clean()
        self._label = "other"

    # running ------------------------------------------------------------------------------------------

    async def send(self, text: str, events: list[Any], gaps: list[float]) -> None:
        self.client.script.append((events, gaps))
        await self.chat._send_text(text)
        assert not self.client.script, "the scripted run was not played"

    async def resolve(self, payload: Any, interrupt: str, events: list[Any], gaps: list[float]) -> None:
        self.client.script.append((events, gaps))
        self._starting = "resume"
        try:
            await answers.answer(self.config, "resolve", payload, interrupt)
        finally:
            self._starting = "send"
        assert not self.client.script, "the resume run was not played"


def run_on_virtual_clock(chat: Chat, main) -> None:
    with virtual_clock() as loop:
        chat.clock = loop.time
        try:
            loop.run_until_complete(main())
        finally:
            chat.clock = time.monotonic


def staleness(chat: Chat) -> list[float]:
    """Per event: clock seconds from its arrival to the first push that showed it."""
    out, pushes, p = [], chat.pushes, 0
    for index, (at, _) in enumerate(chat.client.arrivals):
        while p < len(pushes) and pushes[p].arrived <= index:
            p += 1
        out.append(pushes[p].at - at if p < len(pushes) else float("inf"))
    return out


# -- part 1 -------------------------------------------------------------------------------------------

def part1(chat: Chat) -> None:
    print(f"1. push rate (the real driver.drive on a virtual clock: at most {PUSHES_PER_SECOND}/s,"
          f" PUSH_INTERVAL={PUSH_INTERVAL * 1e3:.0f} ms, a trailing push one tick after an unpushed change;"
          f" pushed at once: {', '.join(sorted(k.value for k in FLUSH_NOW))})")
    long_run = [parse_event(e) for e in run_events(0, deltas=2000, arg_deltas=12)]
    deltas = sum(e.type.value in DELTA_TYPES for e in long_run)
    print(f"   one run of {len(long_run)} events ({deltas} deltas), evenly spaced, on a fresh thread;"
          f" pushes counted from the send to the end of the run, both included:")
    print("   (trailing = pushed by driver.drive's timer, nothing having arrived for a tick; when events land on"
          " tick boundaries the timer and the next event race: one push per tick either way)")
    print(f"   {'deltas/s':>9s} {'pushes':>7s} {'immediate':>10s} {'trailing':>9s} {'pushes/s while answering':>25s}"
          f" {'deltas/push':>12s} {'max wait':>9s}")
    for rate in RATES:
        chat.new_thread()
        with chat.recording():
            run_on_virtual_clock(chat, lambda: chat.send(user_text(0), long_run, paced(long_run, rate)))
        pushes, stale, arrivals = chat.pushes, staleness(chat), chat.client.arrivals
        text = [at for at, kind in arrivals if kind == "TEXT_MESSAGE_CONTENT"]
        answering = [p for p in pushes if text[0] <= p.at <= text[-1]]
        count = lambda kind: sum(p.kind == kind for p in pushes)  # noqa: E731
        print(f"   {rate:9d} {len(pushes):7d} {count('immediate'):10d} {count('trailing'):9d}"
              f" {len(answering) / (text[-1] - text[0]):25.1f} {deltas / len(pushes):12.1f}"
              f" {max(stale) * 1e3:7.0f}ms")

    run = [parse_event(e) for e in run_events(0)]
    kinds = [e.type.value for e in run]
    text = [k for k, kind in enumerate(kinds) if kind == "TEXT_MESSAGE_CONTENT"]
    scenarios = ((f"a {PAUSE:.0f} s stall in the middle of the answer (after delta {len(text) // 2})",
                  text[len(text) // 2]),
                 (f"a {PAUSE:.0f} s pause before TOOL_CALL_START (a slow tool)", kinds.index("TOOL_CALL_START")))
    print(f"   a standard run at 100 deltas/s with a pause (wait = clock time from an event's arrival to the"
          f" first push that shows it):")
    for title, before in scenarios:
        chat.new_thread()
        with chat.recording():
            run_on_virtual_clock(chat, lambda: chat.send(user_text(0), run, paced(run, 100, PAUSE, before)))
        stale = staleness(chat)
        late = sum(s >= PAUSE for s in stale)
        print(f"     {title}: the last event before it ({kinds[before - 1]}) waited {stale[before - 1] * 1e3:.0f} ms;"
              f" max wait in the run {max(stale) * 1e3:.0f} ms; events shown only after the pause: {late}")
    real_clock_check(chat)


def real_clock_check(chat: Chat, deltas: int = 40, rate: float = 100.0, pause: float = 1.0) -> None:
    """The real ``driver.drive`` on the real clock (a real event loop): ``deltas`` deltas at ``rate``/s, then
    ``pause`` s of silence before the answer's END (a stalled model). How long did the last delta
    before the silence wait for a push?"""
    events = [parse_event(e) for e in run_events(0, deltas=deltas)]
    end = [e.type.value for e in events].index("TEXT_MESSAGE_END")
    gaps = paced(events, rate, pause, end)
    chat.new_thread()
    with chat.recording():
        asyncio.run(chat.send(user_text(0), events, gaps))
    wait = staleness(chat)[end - 1]  # the last delta before the silence
    print(f"   real clock, real driver.drive ({deltas} deltas at {rate:.0f}/s,"
          f" then {pause:.1f} s of silence before END):"
          f" {len(chat.pushes)} pushes; the last delta was shown {wait * 1e3:.0f} ms after it arrived")


# -- part 2 -------------------------------------------------------------------------------------------

def naive_publish(self: Any, session: AgentSession, *, full: bool = False, starting: bool = False) -> None:
    """NAIVE BASELINE: the whole conversation reassigned to `messages` at every push (what a
    straightforward Reflex chat does), `live` left empty. The status vars and the thread list are the
    real ``driver.publish``'s (called first; its `messages`/`live` are then overwritten)."""
    REAL_PUBLISH(self, session, full=full, starting=starting)
    transcript = session.transcript
    self.messages = message_rows(transcript.messages, transcript)
    self.live = []


def check_shown(chat: Chat, session: AgentSession) -> None:
    """Between runs the page shows `messages` then `live`: every row of the thread, in order."""
    transcript = session.transcript
    shown = [row.id for row in [*chat.chat.messages, *chat.chat.live]]
    expected = [row.id for row in message_rows(transcript.messages, transcript)]
    assert shown == expected, "the page would not show the thread"


def describe(pushes: list[Push], messages_bytes: int, indent: str = "       ") -> int:
    total = sum(p.bytes for p in pushes)
    streaming = [p for p in pushes if p.kind in ("immediate", "interval", "trailing")]
    small = [p for p in pushes if not p.history]
    full = [p for p in pushes if p.history]
    print(f"{indent}{len(pushes)} pushes, {total:,} bytes in all; largest streaming push"
          f" {max(p.bytes for p in streaming):,} bytes")
    if small:
        mean = statistics.mean(p.bytes for p in small)
        print(f"{indent}without the history {len(small):3d}   mean {mean:9,.0f} bytes"
              f"   {ms(statistics.median(p.seconds for p in small))} CPU each"
              f"   (the whole list is {messages_bytes / mean:,.0f}x this)")
    if full:
        where = ", ".join(f"{k} x{n}" for k, n in _count(p.kind for p in full).items())
        print(f"{indent}with the history    {len(full):3d}   mean {statistics.mean(p.bytes for p in full):9,.0f}"
              f" bytes   {ms(statistics.median(p.seconds for p in full))} CPU each   (at: {where})")
    print(f"{indent}CPU of the send push (AgentSession.send incl. build_input, first publish):"
          f" {ms(sum(p.seconds for p in pushes if p.kind in ('send', 'resume')))}")
    return total


def part2_and_3(chat: Chat) -> None:
    began = time.perf_counter()
    history = typed_runs(RUNS - 1)
    session = chat.new_thread(history)
    messages_bytes = len(rx_format.json_dumps(chat.chat.messages).encode())
    print(f"\n2. bytes per push at the end of a long thread: {RUNS - 1} runs of history, then run {RUNS} at"
          f" {REPLAY_RATE} deltas/s through _send_text (history built in {time.perf_counter() - began:.1f} s)")
    print(f"   the whole message list (`messages` var, {len(chat.chat.messages)} rows): {messages_bytes:,} bytes of JSON")
    i = RUNS - 1
    scenarios = (("standard run (200 text deltas, 12 argument deltas)", run_events(i, arg_deltas=12)),
                 ("a run whose tool call streams 200 argument deltas", run_events(i, arg_deltas=200)))
    for title, wire in scenarios:
        events = [parse_event(e) for e in wire]
        print(f"   {title}:")
        totals = []
        for label, publish in (("current driver.publish", None),
                               ("naive baseline: whole list at every push", naive_publish)):
            chat.new_thread(history, publish)
            check_shown(chat, chat.chat._session())
            with chat.recording(publish):
                run_on_virtual_clock(chat, lambda: chat.send(user_text(i), events, paced(events, REPLAY_RATE)))
            assert chat.chat.status == "idle" and len(chat.chat.messages) + len(chat.chat.live) == 3 * RUNS
            check_shown(chat, chat.chat._session())
            print(f"     {label}:")
            totals.append(describe(chat.pushes, messages_bytes))
        print(f"     -> bytes per run: {totals[0]:,} (naive / current: {totals[1] / totals[0]:.0f}x)")

    print(f"   human in the loop: run {RUNS} interrupted on its tool call, then the resume run"
          f" (answers.answer -> AgentSession.submit): its result, then a 200-delta answer:")
    interrupted = [parse_event(e) for e in interrupted_run_events(i)]
    resumed = [parse_event(e) for e in resume_run_events(i)]
    pair_totals = []
    for label, publish in (("current driver.publish", None), ("naive baseline", naive_publish)):
        session = chat.new_thread(history, publish)
        with chat.recording(publish):
            run_on_virtual_clock(chat, lambda: chat.send(user_text(i), interrupted, paced(interrupted, REPLAY_RATE)))
            assert chat.chat.status == "interrupted" and chat.config.active, chat.chat.status
            first = list(chat.pushes)
            chat.pushes.clear()
            chat.client.arrivals.clear()
            run_on_virtual_clock(chat, lambda: chat.resolve({"approved": True}, interrupt_id(i), resumed,
                                                            paced(resumed, REPLAY_RATE)))
        assert chat.chat.status == "idle" and session.transcript.tool_calls[ids(i)["call"]].result
        check_shown(chat, session)
        print(f"     {label}: the interrupted run")
        total = describe(first, messages_bytes)
        print(f"     {label}: the resume run")
        pair_totals.append(total + describe(chat.pushes, messages_bytes))
    print(f"     -> bytes for the pair: current {pair_totals[0]:,}; naive {pair_totals[1]:,}")

    print(f"\n3. pickling at the end of the thread ({len(session.transcript.messages)} messages)")
    t_session = best_of(lambda: pickle.dumps(session), 5)
    n_session = len(pickle.dumps(session))
    t_chat = best_of(chat.chat._serialize, 5)
    n_chat = len(chat.chat._serialize())
    print(f"   pickle.dumps(AgentSession)             {ms(t_session)}   {n_session / 1024:7.0f} KiB")
    print(f"   ChatState._serialize() (the substate)  {ms(t_chat)}   {n_chat / 1024:7.0f} KiB"
          f"   (every thread of the tab, in _sessions, + the vars)")
    with tempfile.TemporaryDirectory() as folder:
        store = ThreadStore(Path(folder) / "threads.db")
        try:
            t_store = best_of(lambda: store.save("bench-token|chat", chat.chat._sessions, THREAD_ID), 5)
        finally:
            store.close()
    print(f"   ThreadStore.save (pickle + SQLite)     {ms(t_store)}   (persistence.save: at the end of every run"
          f" when the store is on)")
    print(f"   note: Reflex pickles a touched substate when the lock is released. With Redis that is every"
          f" push: up to {PUSHES_PER_SECOND}/s x {t_chat * 1e3:.1f} ms = {PUSHES_PER_SECOND * t_chat * 100:.0f}%"
          f" of a core per streaming tab at this length, growing with the thread. The default disk manager"
          f" (0.10) debounces writes (2 s); the memory manager never pickles.")


def _count(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts




def main() -> None:
    began = time.perf_counter()
    chat = Chat()
    part1(chat)
    part2_and_3(chat)
    print(f"\n(total {time.perf_counter() - began:.1f} s)")


if __name__ == "__main__":
    main()
