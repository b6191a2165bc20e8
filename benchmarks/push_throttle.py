"""What the Reflex layer pushes while a run streams: how often, how late, how many bytes, what it pickles.

No browser and no server. Everything runs the real send path: ``ChatState._send_text`` (what the
composer's submit runs: ``AgentSession.send`` -> ``mark_tail`` + the user message, the first
``driver.publish`` with ``starting=True``, then ``driver.drive``) and, for a resume, the real
``answers.answer`` (what the card's resolve runs: ``AgentSession.submit``, which keeps the
turn's tail, the publish, ``driver.drive``),
on a real Reflex state tree. The agent is a scripted in-memory transport that yields pre-parsed events at
given times; ``AgentSession.stream`` applies them (``session.running`` is true throughout, as in
the app). The runs happen inside a Reflex ``EventContext`` whose ``emit_event`` is the page's: the
``_call_script`` events that carry streamed text (docs/decisions/0011: a streaming text is frozen in
the ``live`` var, the rest goes as chunks) are recorded and applied as ``tests/unit/page.py`` applies
them. A push is one ``async with state`` block whose delta is not empty and/or the chunk event emitted
right after it: its size is ``StateUpdate(delta=...)`` plus ``StateUpdate(events=[...])`` serialised
with Reflex's ``json_dumps``, i.e. what goes over the websocket. An event is *shown* when the page
shows it: a streamed delta when the page's text (the var's prefix plus the chunks applied) reaches
it, any other event when a publish that read it has been pushed.

1. **Push rate and latency.** On a virtual clock (an event loop whose time jumps to the next timer
   instead of sleeping; ``driver.drive``'s throttle (``driver._Throttle``) reads the loop's clock, so
   the throttle, its trailing-push timer and the agent's pacing share one deterministic clock):
   pushes per second vs deltas per second, bytes per streamed character, how long an event waits
   until the page shows it, and the push after a pause (a stalled model, a slow tool). Then the real
   ``driver.drive`` once on the real clock, to cross-check the push after a pause.
2. **Bytes per push** at the end of a long thread (199 runs of history, then run 200 at 100
   deltas/s): a standard run, a run whose tool call streams long arguments, and a human-in-the-loop
   pair (run 200 interrupted on its tool call, then the resume run through ``answers.answer``).
   The real ``driver.publish`` (and its chunks) vs a naive baseline that reassigns the whole
   conversation at every push and sends no chunks (same ``driver.drive`` schedule).
3. **Pickle and thread store** at the end of the thread: the chat's ``AgentSession``, the chat
   substate (what a Redis/disk state manager pickles) and ``ThreadStore.save`` (what
   ``persistence.save`` does at the end of every run when the thread store is on, its default),
   into a temporary file.

Run: ``.venv/bin/python -m benchmarks.push_throttle`` (about 15 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import (
    ROOT,
    RUNS,
    THREAD_ID,
    MemoryRun,
    best_of,
    ids,
    interrupt_id,
    interrupted_run_events,
    ms,
    resume_run_events,
    run_events,
    start_run,
    typed_runs,
    user_text,
)

os.environ["INTERRUPT_CHAT_DB_URL"] = "off"  # no SQLite file in the repository (part 3 uses a temp one)
os.chdir(ROOT)  # Reflex reads rxconfig.py from the working directory

import reflex as rx  # noqa: E402
from reflex.istate.manager.memory import StateManagerMemory  # noqa: E402
from reflex.state import StateUpdate  # noqa: E402
from reflex_base.constants.state import FIELD_MARKER  # noqa: E402
from reflex_base.event import Event  # noqa: E402
from reflex_base.event.context import EventContext  # noqa: E402
from reflex_base.utils import format as rx_format  # noqa: E402

from benchmarks._pickle_store import ThreadStore  # noqa: E402  (the old pickle store: the baseline)
from interrupt_chat.tab import answers, driver
from interrupt_chat.assembly import registry  # noqa: E402
from interrupt_chat.agui import AgentSession, ChunkExpander, Verifier, events, parse_event  # noqa: E402
from interrupt_chat.model.history import HistoryDelta  # noqa: E402
from interrupt_chat.tab.live import live_of  # noqa: E402
from interrupt_chat.tab.paging import history_rows  # noqa: E402
from interrupt_chat.tab.driver import ENVELOPE_BYTES, FLUSH_NOW, PUSH_INTERVAL, PUSHES_PER_SECOND, STREAM_IDLE, STREAM_RATIO
from interrupt_chat.model.views import MessageRow, message_rows  # noqa: E402
from tests.unit.page import PREFIX, SUFFIX, Page  # noqa: E402  (what a tab does with the chunks)

REAL_PUBLISH = driver.publish  # the real one (``recording`` patches the module attribute)

RATES = (3, 4, 10, 30, 100, 300, 1000, 5000)  # deltas per second (1/STREAM_IDLE is 3.3)
PAUSE = 3.0  # seconds of silence in the pause scenarios
REPLAY_RATE = 100  # deltas/s for part 2
DELTA_TYPES = frozenset(t.value for t in events.DELTA_TYPES)  # by wire name (the scripts compare .type.value)


# -- a virtual clock --------------------------------------------------------------------------------

class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock jumps to the next timer instead of sleeping.

    Nothing here does I/O, so a wait with nothing scheduled is a deadlock.
    """

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
    """A VirtualLoop (``driver.drive``'s throttle reads the loop's clock)."""
    loop = VirtualLoop()
    try:
        yield loop
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


# -- a scripted agent -------------------------------------------------------------------------------

@dataclass
class Arrival:
    """An event the scripted agent yielded."""

    at: float  # clock time
    kind: str  # the event type
    text: tuple[str, int] | None  # a streamed delta: (its message or tool call, that text's length with it)


class ScriptedRun(MemoryRun):
    """An ``AgentRun`` stand-in: sleeps ``gap`` then yields each event; records when each arrives."""

    def __init__(self, events: list[Any], gaps: list[float], arrivals: list[Arrival]) -> None:
        super().__init__(events)
        self.gaps, self.arrivals = gaps, arrivals

    async def _iterate(self):
        loop = asyncio.get_running_loop()
        lengths: dict[str, int] = {}
        for event, gap in zip(self._events, self.gaps, strict=True):
            if gap:
                await asyncio.sleep(gap)
            text = None
            if event.type.value in DELTA_TYPES:
                owner = getattr(event, "message_id", None) or event.tool_call_id
                lengths[owner] = lengths.get(owner, 0) + len(event.delta)
                text = (owner, lengths[owner])
            self.arrivals.append(Arrival(loop.time(), event.type.value, text))
            yield event


class ScriptedClient:
    """An ``AgentClient`` stand-in: ``run()`` plays the next scripted run."""

    url = "memory://scripted"  # the chat refuses to send without a configured agent URL

    def __init__(self) -> None:
        self.script: list[tuple[list[Any], list[float]]] = []
        self.arrivals: list[Arrival] = []

    def run(self, run_input: Any, **_: Any) -> ScriptedRun:
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
    bytes: int  # the var delta's update plus the chunk event's
    seconds: float  # CPU inside the block, plus serialising the delta and the chunk event
    history: bool  # the delta carries the `history` var (rows of the history)
    chunk_bytes: int = 0  # of ``bytes``: the chunk event's update (0: no chunks)
    chunk_chars: int = 0  # streamed characters in the chunks


class Chat:
    """The benchmark's chat: its own ChatState subclass on a real state tree, every push recorded.

    ``page`` is the tab it pushes to (``tests.unit.page.Page``: the var prefixes with the chunks applied).
    """

    def __init__(self) -> None:
        self.cls = registry.new_chat_state("benchmark", agent_url="http://127.0.0.1:9/", configs=[])
        self.root = rx.State(_reflex_internal_init=True)
        self.chat = self.root.get_substate(self.cls.get_full_name().split("."))
        self.config = self.root.get_substate(self.cls.default_config.get_full_name().split("."))
        self.client = ScriptedClient()
        self.page = Page()
        self.pushes: list[Push] = []
        self.shown: dict[int, float] = {}  # arrival index -> clock time the page first showed that event
        self.clock = time.monotonic
        self._label = "other"
        self._starting = "send"  # the kind of a publish with starting=True: "resume" inside resolve()
        self._entered = 0.0
        self._chunks = True  # False: the naive baseline, which sends no chunks
        self._read = 0  # arrivals the last publish read
        self._marked = 0  # arrivals before this one: their structural events are marked shown
        self._scanned = 0  # arrivals before this one: their deltas are in _unshown (or shown)
        self._unshown: list[int] = []  # streamed deltas the page does not show yet
        self._block: Push | None = None  # the push of the block just left: the chunks emitted next join it
        self._block_label = "other"

    # a thread -------------------------------------------------------------------------------------

    def new_thread(self, history: list[list[Any]] = (), publish=None) -> AgentSession:
        """A fresh thread holding ``history`` (each run started as ``send`` does), on a fresh page.

        Published with ``publish`` (default ``driver.publish``) and delivered as at the end of its last run.
        """
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
        self.chat.history, self.chat._history_feed, live_of(self.chat).live = HistoryDelta(), None, []
        self.chat._frozen, self.chat._resync = {}, False  # the scenarios reuse ids: nothing frozen from the last
        asyncio.run((publish or REAL_PUBLISH)(self.chat, session, full=True))
        self.root.get_delta()
        self.page = Page()
        self.page.history(self.chat)  # the page holds the thread's newest page
        self.root._clean()
        self.clear_run()
        gc.collect()  # not inside a timed push
        return session

    def clear_run(self) -> None:
        """Forget the pushes and arrivals recorded so far (the page keeps what it has)."""
        self.client.arrivals.clear()
        self.pushes.clear()
        self.shown.clear()
        self._unshown.clear()
        self._read = self._marked = self._scanned = 0
        self._block = None

    # recording --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def recording(self, publish=None, chunks: bool = True):
        """Record every push: ``async with state`` on the chat or its slot config, and the chunks after it.

        The runs happen inside an ``EventContext`` whose ``emit_event`` is the page's; optionally
        with ``publish`` in place of ``driver.publish``; ``chunks=False`` drops the chunk events (sent
        nowhere). The benchmark's own classes and ``driver.publish`` (the module attribute, which
        ``state`` and ``driver`` both call), restored on exit.
        """
        classes = (self.cls, self.cls.default_config)
        saved = [(c, c.__dict__.get("__aenter__"), c.__dict__.get("__aexit__")) for c in classes]
        original_publish = driver.publish
        chat = self

        async def enter(state: Any) -> Any:
            chat._entered = time.perf_counter()
            chat._block = None
            return state

        async def leave(state: Any, *exc_info: Any) -> None:
            chat._record()

        async def labelled(state: Any, session: AgentSession, **kwargs: Any) -> None:
            chat._label = chat._kind(kwargs.get("full", False), kwargs.get("starting", False))
            chat._read = len(chat.client.arrivals)  # what this publish shows
            await (publish or original_publish)(state, session, **kwargs)

        async def enqueue(*_: Any) -> None:
            return None

        context = EventContext(token="bench-token", state_manager=StateManagerMemory(), enqueue_impl=enqueue,
                               emit_event_impl=self._emitted)
        for cls in classes:
            cls.__aenter__, cls.__aexit__ = enter, leave
        driver.publish = labelled
        self._chunks = chunks
        token = EventContext.set(context)
        try:
            yield self
        finally:
            EventContext.reset(token)
            self._chunks = True
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
        last = arrivals[-1]
        if self.clock() > last.at:
            return "trailing"  # nothing new since the last change: the timer's push
        return "immediate" if last.kind in {k.value for k in FLUSH_NOW} else "interval"

    def _record(self) -> None:
        """A block was left: its var delta is a push if not empty; the page now shows what it read."""
        delta = self.root.get_delta()
        push = None
        if delta:
            size = len(rx_format.json_dumps(StateUpdate(delta=delta)).encode())
            seconds = time.perf_counter() - self._entered
            sent = {name.split(FIELD_MARKER)[0] for vars_ in delta.values() for name in vars_}
            push = Push(self.clock(), len(self.client.arrivals), self._label, size, seconds, "history" in sent)
            self.pushes.append(push)
        self.page.history(self.chat)  # the page applies the history's delta, if any (history_rows.js)
        self.root._clean()
        self._block, self._block_label, self._label = push, self._label, "other"
        now, arrivals = self.clock(), self.client.arrivals
        for index in range(self._marked, self._read):  # a publish read them: the vars show them (now or before)
            if arrivals[index].text is None:
                self.shown.setdefault(index, now)
        self._marked = max(self._marked, self._read)
        self._observe()

    async def _emitted(self, token: str, *events: Event) -> None:
        """``EventContext.emit_event``: the chunk event, after the block whose publish made it."""
        if not self._chunks:
            return
        began = time.perf_counter()
        size = len(rx_format.json_dumps(StateUpdate(events=list(events))).encode())
        chars = sum(len(text) for event in events
                    for _, _, text, *_ in json.loads(event.payload["javascript_code"][len(PREFIX):-len(SUFFIX)]))
        push = self._block
        if push is None:  # the block's delta was empty: the chunks alone are the push
            push = Push(self.clock(), len(self.client.arrivals), self._block_label, 0, 0.0, False)
            self.pushes.append(push)
            self._block = push
        push.bytes += size
        push.chunk_bytes += size
        push.chunk_chars += chars
        push.seconds += time.perf_counter() - began
        await self.page.emit(token, *events)
        self._observe()

    def _observe(self) -> None:
        """Mark the streamed deltas whose text the page now shows (its var prefix + the chunks applied)."""
        arrivals = self.client.arrivals
        self._unshown += [i for i in range(self._scanned, len(arrivals)) if arrivals[i].text is not None]
        self._scanned = len(arrivals)
        if not self._unshown:
            return
        texts = self._page_texts({arrivals[i].text[0] for i in self._unshown})
        now, left = self.clock(), []
        for index in self._unshown:
            owner, length = arrivals[index].text
            shown, whole = texts.get(owner, (0, False))
            if whole or shown >= length:
                self.shown[index] = now
            else:
                left.append(index)
        self._unshown = left

    def _page_texts(self, owners: set[str]) -> dict[str, tuple[int, bool]]:
        """Message or tool-call id -> (length of the text the page shows, the var carries it whole)."""
        out: dict[str, tuple[int, bool]] = {}
        for row in [*reversed(live_of(self.chat).live), *reversed(history_rows(self.chat._session()))]:
            if row.id in owners:
                out[row.id] = (len(self.page.text(row.stream, row.content)), False)
            for call in row.tool_calls:
                if call.id in owners:  # finished arguments are drawn whole, as formatted JSON
                    out[call.id] = (len(self.page.text(call.stream, call.args)), not call.streaming and not call.stream)
            if len(out) == len(owners):
                break
        return out

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
    """Per event: clock seconds from its arrival until the page showed it (inf: never)."""
    return [chat.shown.get(index, float("inf")) - arrival.at for index, arrival in enumerate(chat.client.arrivals)]


def check_page(chat: Chat, session: AgentSession) -> None:
    """Between runs the page shows the thread's newest rows, in order, with their whole text and arguments.

    That is the history's rows the page holds (its newest page, or all of it for the naive
    baseline) then `live`, with the chunks applied: the end of every row of the thread.
    """
    transcript = session.transcript

    def texts(rows: list[MessageRow]) -> list[Any]:
        return [(row.id, row.content, [(call.id, call.args) for call in row.tool_calls]) for row in rows]

    shown = [chat.page.show(row) for row in [*chat.page.history(chat.chat), *live_of(chat.chat).live]]
    every = message_rows(transcript.messages, transcript)
    assert shown and texts(shown) == texts(every[len(every) - len(shown):]), "the page would not show the thread"


# -- part 1 -------------------------------------------------------------------------------------------

def part1(chat: Chat) -> None:
    print(f"1. push rate (the real driver.drive on a virtual clock: at most {PUSHES_PER_SECOND}/s,"
          f" PUSH_INTERVAL={PUSH_INTERVAL * 1e3:.0f} ms; streamed text alone once the text waiting is worth its"
          f" envelope (ENVELOPE_BYTES={ENVELOPE_BYTES}, STREAM_RATIO={STREAM_RATIO}), the first text of a message"
          f" at once, what waits after a pause of STREAM_IDLE={STREAM_IDLE * 1e3:.0f} ms;"
          f" pushed at once: {', '.join(sorted(k.value for k in FLUSH_NOW))})")
    long_run = [parse_event(e) for e in run_events(0, deltas=2000, arg_deltas=12)]
    deltas = sum(e.type.value in DELTA_TYPES for e in long_run)
    chars = sum(len(e.delta) for e in long_run if e.type.value in DELTA_TYPES)
    print(f"   one run of {len(long_run)} events ({deltas} deltas, {chars:,} streamed characters), evenly spaced,"
          f" on a fresh thread; pushes counted from the send to the end of the run, both included:")
    print("   (chunks = pushes carrying a chunk event; trailing = pushed by driver.drive's timer, nothing having"
          " arrived since; wait = clock time from an event's arrival until the page shows it)")
    print(f"   {'deltas/s':>9s} {'pushes':>7s} {'chunks':>7s} {'immediate':>10s} {'trailing':>9s}"
          f" {'pushes/s answering':>19s} {'deltas/push':>12s} {'bytes':>9s} {'bytes/char':>11s}"
          f" {'max wait: delta':>16s} {'other':>7s}")
    envelopes = []
    for rate in RATES:
        session = chat.new_thread()
        with chat.recording():
            run_on_virtual_clock(chat, lambda rate=rate: chat.send(user_text(0), long_run, paced(long_run, rate)))
        check_page(chat, session)
        pushes, stale, arrivals = chat.pushes, staleness(chat), chat.client.arrivals
        text = [a.at for a in arrivals if a.kind == "TEXT_MESSAGE_CONTENT"]
        answering = [p for p in pushes if text[0] <= p.at <= text[-1]]
        total = sum(p.bytes for p in pushes)
        delta_wait = max(s for s, a in zip(stale, arrivals, strict=True) if a.text is not None)
        other_wait = max(s for s, a in zip(stale, arrivals, strict=True) if a.text is None)
        envelopes += [p.chunk_bytes - p.chunk_chars for p in pushes if p.chunk_bytes and p.bytes == p.chunk_bytes]
        print(f"   {rate:9d} {len(pushes):7d} {sum(p.chunk_bytes > 0 for p in pushes):7d}"
              f" {sum(p.kind == 'immediate' for p in pushes):10d} {sum(p.kind == 'trailing' for p in pushes):9d}"
              f" {len(answering) / (text[-1] - text[0]):19.1f} {deltas / len(pushes):12.1f} {total:9,d}"
              f" {total / chars:11.2f} {delta_wait * 1e3:14.0f}ms {other_wait * 1e3:5.0f}ms")
    print(f"   a push of chunks alone costs {statistics.mean(envelopes):.0f} bytes beyond its text"
          f" ({min(envelopes)}-{max(envelopes)}; driver.ENVELOPE_BYTES = {ENVELOPE_BYTES})")

    run = [parse_event(e) for e in run_events(0)]
    kinds = [e.type.value for e in run]
    text = [k for k, kind in enumerate(kinds) if kind == "TEXT_MESSAGE_CONTENT"]
    scenarios = ((f"a {PAUSE:.0f} s stall in the middle of the answer (after delta {len(text) // 2})",
                  text[len(text) // 2]),
                 (f"a {PAUSE:.0f} s pause before TOOL_CALL_START (a slow tool)", kinds.index("TOOL_CALL_START")))
    print("   a standard run at 100 deltas/s with a pause:")
    for title, before in scenarios:
        session = chat.new_thread()
        with chat.recording():
            run_on_virtual_clock(chat, lambda before=before: chat.send(user_text(0), run,
                                                                      paced(run, 100, PAUSE, before)))
        check_page(chat, session)
        stale = staleness(chat)
        late = sum(s >= PAUSE for s in stale)
        print(f"     {title}: the last event before it ({kinds[before - 1]}) waited {stale[before - 1] * 1e3:.0f} ms;"
              f" max wait in the run {max(stale) * 1e3:.0f} ms; events shown only after the pause: {late}")
    real_clock_check(chat)


def real_clock_check(chat: Chat, deltas: int = 40, rate: float = 100.0, pause: float = 1.0) -> None:
    """The real ``driver.drive`` on the real clock (a real event loop), with a stalled model.

    ``deltas`` deltas at ``rate``/s, then ``pause`` s of silence before the answer's END. How long
    did the last delta before the silence wait until the page showed it?
    """
    events = [parse_event(e) for e in run_events(0, deltas=deltas)]
    end = [e.type.value for e in events].index("TEXT_MESSAGE_END")
    gaps = paced(events, rate, pause, end)
    session = chat.new_thread()
    with chat.recording():
        asyncio.run(chat.send(user_text(0), events, gaps))
    check_page(chat, session)
    wait = staleness(chat)[end - 1]  # the last delta before the silence
    print(f"   real clock, real driver.drive ({deltas} deltas at {rate:.0f}/s,"
          f" then {pause:.1f} s of silence before END):"
          f" {len(chat.pushes)} pushes; the last delta was shown {wait * 1e3:.0f} ms after it arrived")


# -- part 2 -------------------------------------------------------------------------------------------

async def naive_publish(self: Any, session: AgentSession, **kwargs: Any) -> None:
    """NAIVE BASELINE: the whole conversation reassigned to `history` at every push (a reset of every row).

    That is what a straightforward Reflex chat does: `live` left empty, no chunks
    (``Chat.recording(chunks=False)``). The status vars and the thread list are the real
    ``driver.publish``'s (called first, with whatever keywords it gets; its `history`/`live` are
    then overwritten).
    """
    await REAL_PUBLISH(self, session, **kwargs)
    transcript = session.transcript
    self.history = HistoryDelta(seq=self.history.seq + 1, rows=message_rows(transcript.messages, transcript))
    live_of(self).live = []


def describe(pushes: list[Push], messages_bytes: int, indent: str = "       ") -> int:
    total = sum(p.bytes for p in pushes)
    streaming = [p for p in pushes if p.kind in ("immediate", "interval", "trailing")]
    small = [p for p in pushes if not p.history]
    full = [p for p in pushes if p.history]
    chunked = [p for p in pushes if p.chunk_bytes]
    print(f"{indent}{len(pushes)} pushes, {total:,} bytes in all; largest streaming push"
          f" {max(p.bytes for p in streaming):,} bytes")
    if chunked:
        print(f"{indent}carrying chunks     {len(chunked):3d}   ({sum(p.bytes == p.chunk_bytes for p in chunked)}"
              f" of them chunks alone): {sum(p.chunk_bytes for p in chunked):,} bytes of chunk events for"
              f" {sum(p.chunk_chars for p in chunked):,} streamed characters")
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
    messages_bytes = len(rx_format.json_dumps(history_rows(session)).encode())
    print(f"\n2. bytes per push at the end of a long thread: {RUNS - 1} runs of history, then run {RUNS} at"
          f" {REPLAY_RATE} deltas/s through _send_text (history built in {time.perf_counter() - began:.1f} s)")
    print(f"   the whole history ({len(history_rows(session))} rows):"
          f" {messages_bytes:,} bytes of JSON")
    i = RUNS - 1
    scenarios = (("standard run (200 text deltas, 12 argument deltas)", run_events(i, arg_deltas=12)),
                 ("a run whose tool call streams 200 argument deltas", run_events(i, arg_deltas=200)))
    for title, wire in scenarios:
        events = [parse_event(e) for e in wire]
        print(f"   {title}:")
        totals = []
        for label, publish in (("current driver.publish", None),
                               ("naive baseline: whole list at every push", naive_publish)):
            session = chat.new_thread(history, publish)
            check_page(chat, session)
            with chat.recording(publish, chunks=publish is None):
                run_on_virtual_clock(chat, lambda events=events: chat.send(user_text(i), events,
                                                                          paced(events, REPLAY_RATE)))
            assert chat.chat.status == "idle", chat.chat.status
            check_page(chat, session)
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
        with chat.recording(publish, chunks=publish is None):
            run_on_virtual_clock(chat, lambda: chat.send(user_text(i), interrupted, paced(interrupted, REPLAY_RATE)))
            assert chat.chat.status == "interrupted" and chat.config.active, chat.chat.status
            check_page(chat, session)
            first = list(chat.pushes)
            chat.clear_run()
            run_on_virtual_clock(chat, lambda: chat.resolve({"approved": True}, interrupt_id(i), resumed,
                                                            paced(resumed, REPLAY_RATE)))
        assert chat.chat.status == "idle" and session.transcript.tool_calls[ids(i)["call"]].result
        check_page(chat, session)
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
    shown = chat.new_thread(typed_runs(RUNS - 1))  # as a tab holds it after showing the thread (the real publish)
    held = len(pickle.dumps((chat.chat.history, chat.chat._history_feed)))
    whole = len(pickle.dumps(history_rows(shown)))
    print(f"   the history in the tab's state: {held / 1024:.0f} KiB (the last delta, here the newest page, and a"
          f" fingerprint per row; decision 22) against {whole / 1024:.0f} KiB for the whole list of rows the"
          f" `messages` var held before ({whole / held:.0f}x less)")
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
