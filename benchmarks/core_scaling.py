"""Is the protocol core flat? A 200-run thread, its history per run, and ``@ag-ui/client`` for scale.

No network, no Reflex. Two threads of 200 runs (``_thread.py``: per run a user message, an answer
streamed in 200 deltas, a tool call streamed in 12 argument deltas, its result):

- **plain**: the runs as they are (44,000 AG-UI events, 600 messages at the end);
- **snapshot-heavy**: every run ends, before ``RUN_FINISHED``, with a ``MESSAGES_SNAPSHOT`` of the
  whole history, as LangGraph's AG-UI adapter does (44,200 events; the last snapshot holds 600
  messages, 300 KB).

Prints:

1. the cost per event over the last 10 % of runs vs the first 10 % (fastest of 3 builds per run),
   for ``Transcript.apply`` and for the in-process pipeline (``send``'s claim and tail mark, chunks +
   verify + reduce + interrupt tracker per event, the end of the run), **excluding** the history
   each run sends (section 2); goal: end/start <= 1.5. On the snapshot-heavy thread the snapshot
   event itself is linear in the history by nature: it is reported per message it carries;
2. that history, once per run: ``Transcript.to_messages()`` (cached: the call ``build_input`` makes
   after each run) vs ``_to_messages_uncached()`` (every model built again, what it did before) at
   the start and the end, and the whole request body for scale (dumped whole, and as it is sent: written
   from each message's JSON text, kept by the transcript);
3. events per second, on threads of 100 runs (``--compare-runs``), through ``@ag-ui/client`` 1.0.0
   itself (installed from the npm registry into ``benchmarks/.node/``, gitignored; driven by
   ``agui_client_driver.mjs`` under node, or bun) vs ours, on the same recorded events written to
   a temporary JSON file: per run, the JS side calls ``agent.addMessage(user)`` and ``runAgent()``
   (its input with a ``structuredClone`` of the history, zod validation, chunk transform, verify,
   ``defaultApplyEvents``); ours calls ``AgentSession.send()`` on an in-memory client that
   validates each wire dict (``parse_event``, as the transport does after ``json.loads``):
   ``build_input`` (``to_messages``), chunks, verify, reduce, tracker. The JS side first replays
   20 runs untimed (JIT warm-up). Two passes per side, alternating between the sides; each run's
   time is the fastest of its passes. Goal: ours >= 5x the client's events/s on the
   snapshot-heavy thread. Without node/bun or the npm registry it says so and compares with the
   naive deep-copying reducer instead.

Run: ``.venv/bin/python -m benchmarks.core_scaling`` (about a minute, most of it @ag-ui/client;
``--compare-runs 200`` compares on the 200-run threads: about three minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import (
    RUNS,
    THREAD_ID,
    MemoryRun,
    ids,
    ms,
    run_events,
    start_run,
    tool_args,
    tool_result,
    us,
    user_text,
)
from benchmarks.reducer_scaling import NaiveReducer, apply_pipeline, apply_transcript
from interrupt_chat.agui import AgentSession, ChunkExpander, Transcript, Verifier, parse_event
from interrupt_chat.agui.request_body import encode

ROOT = Path(__file__).resolve().parents[1]
NODE_DIR = Path(__file__).resolve().parent / ".node"  # gitignored
CLIENT_VERSION = "1.0.0"
REPEATS = 3  # builds per run for section 1
WINDOW = RUNS // 10  # the first and the last 10 % of runs
HISTORY_REPEATS = 3  # thread replays for section 2
COMPARE_RUNS = 100  # section 3's threads (--compare-runs); the client's cost per run grows with the history
COMPARE_PASSES = 2  # per side, section 3 (the client needs ~7 s a pass at 100 runs, ~30 s at 200)
GOAL_FLAT, GOAL_FASTER = 1.5, 5.0


# -- the two threads -----------------------------------------------------------------------------------

def history_of(i: int) -> list[dict[str, Any]]:
    """The wire messages run ``i`` adds: user, answer (with its tool call), tool result."""
    n = ids(i)
    answer = "".join(e["delta"] for e in run_events(i) if e["type"] == "TEXT_MESSAGE_CONTENT")
    call = {"id": n["call"], "type": "function", "function": {"name": "lookup_order", "arguments": tool_args(i)}}
    return [{"id": n["user"], "role": "user", "content": user_text(i)},
            {"id": n["answer"], "role": "assistant", "content": answer, "toolCalls": [call]},
            {"id": n["result"], "role": "tool", "toolCallId": n["call"], "content": tool_result(i)}]


def wire_runs(snapshots: bool, count: int = RUNS) -> list[list[dict[str, Any]]]:
    """Each run's wire events; with ``snapshots`` a full MESSAGES_SNAPSHOT before RUN_FINISHED."""
    runs, history = [], []
    for i in range(count):
        events = run_events(i)
        if snapshots:
            history += history_of(i)
            events = [*events[:-1], {"type": "MESSAGES_SNAPSHOT", "messages": list(history)}, events[-1]]
        runs.append(events)
    return runs


def window_mean(values: list[float], window: range) -> float:
    """The mean of ``values`` over the runs in ``window``."""
    return statistics.mean(values[i] for i in window)


# -- 1. per event --------------------------------------------------------------------------------------------

def per_event_costs(runs: list[list[Any]], make, apply, skip_snapshots: bool = False) -> list[float]:
    """Seconds per event of each run (fastest of REPEATS builds); optionally without the snapshot event."""
    best = [float("inf")] * len(runs)
    for _ in range(REPEATS):
        target = make()
        for i, events in enumerate(runs):
            if skip_snapshots:
                snap = next(k for k, e in enumerate(events) if e.type.value == "MESSAGES_SNAPSHOT")
                before, after = events[:snap], events[snap:]
                t0 = time.perf_counter()
                apply(target, i, before, finish=False)
                elapsed = time.perf_counter() - t0
                apply_rest(target, after)  # the snapshot (untimed) and RUN_FINISHED + the run's end (timed)
                best[i] = min(best[i], (elapsed + target.rest_time) / (len(events)))
            else:
                t0 = time.perf_counter()
                apply(target, i, events)
                best[i] = min(best[i], (time.perf_counter() - t0) / (len(events) + 1))
    return best


class Pipeline(AgentSession):
    """``AgentSession`` with the pipeline steps of ``reducer_scaling.apply_pipeline``, split around the snapshot."""

    rest_time = 0.0


def pipeline_apply(session: Pipeline, i: int, events: list[Any], finish: bool = True) -> None:
    """One run as ``apply_pipeline``; with ``finish=False`` it stops before the end (``apply_rest`` ends it)."""
    if finish:
        apply_pipeline(session, i, events)
        return
    session._claim()
    start_run(session.transcript, i)
    session._claimed = False
    session.error = None
    session.transcript.status = "running"
    session.chunks, session.verifier = ChunkExpander(), Verifier()
    for event in events:
        for expanded in session.chunks.feed(event):
            session._apply(session.verifier, expanded)


def apply_rest(session: Pipeline, events: list[Any]) -> None:
    """The snapshot untimed, then RUN_FINISHED and the end of the run, timed into ``rest_time``."""
    snapshot, rest = events[0], events[1:]
    for expanded in session.chunks.feed(snapshot):
        session._apply(session.verifier, expanded)
    t0 = time.perf_counter()
    for event in rest:
        for expanded in session.chunks.feed(event):
            session._apply(session.verifier, expanded)
    session.verifier.end_of_stream()
    session.tracker.finalize()
    session._after_run()
    session.rest_time = time.perf_counter() - t0


def snapshot_costs(runs: list[list[Any]]) -> list[float]:
    """Seconds per carried message of each run's MESSAGES_SNAPSHOT in ``Transcript.apply`` (fastest of REPEATS)."""
    best = [float("inf")] * len(runs)
    for _ in range(REPEATS):
        transcript = Transcript()
        for i, events in enumerate(runs):
            start_run(transcript, i)
            for event in events:
                if event.type.value == "MESSAGES_SNAPSHOT":
                    t0 = time.perf_counter()
                    transcript.apply(event)
                    best[i] = min(best[i], (time.perf_counter() - t0) / len(event.messages))
                else:
                    transcript.apply(event)
    return best


def section_per_event(plain: list[list[Any]], heavy: list[list[Any]]) -> bool:
    """Section 1; True when every end/start ratio is within the goal."""
    first, last = range(WINDOW), range(RUNS - WINDOW, RUNS)
    print(f"\n1. cost per event, first {WINDOW} vs last {WINDOW} runs (fastest of {REPEATS} builds; "
          "the history sent per run excluded: section 2)")
    ok = True
    rows = [("plain", "Transcript.apply", per_event_costs(plain, Transcript, apply_transcript)),
            ("plain", "pipeline", per_event_costs(plain, lambda: Pipeline("http://127.0.0.1:9/",
                                                                            thread_id=THREAD_ID), pipeline_apply)),
            ("snapshot-heavy", "pipeline, snapshot excluded",
             per_event_costs(heavy, lambda: Pipeline("http://127.0.0.1:9/", thread_id=THREAD_ID), pipeline_apply,
                             skip_snapshots=True))]
    for thread, label, costs in rows:
        a, b = window_mean(costs, first), window_mean(costs, last)
        ok = ok and b / a <= GOAL_FLAT
        print(f"   {thread:15s} {label:28s} start {us(a)}   end {us(b)}   end/start {b / a:5.2f}"
              f"   {'ok' if b / a <= GOAL_FLAT else 'OVER'} (goal <= {GOAL_FLAT})")
    snaps = snapshot_costs(heavy)
    a, b = window_mean(snaps, first), window_mean(snaps, last)
    print(f"   snapshot-heavy MESSAGES_SNAPSHOT per carried message: start {us(a)}   end {us(b)}"
          f"   end/start {b / a:5.2f}  (the event is linear in the history it carries)")
    return ok


# -- 2. the history, once per run -------------------------------------------------------------------------------

def history_costs(runs: list[list[Any]]) -> tuple[list[float], list[float]]:
    """Per run: ``to_messages()`` right after the run (cached) and ``_to_messages_uncached()`` (fastest of repeats)."""
    cached, uncached = [float("inf")] * len(runs), [float("inf")] * len(runs)
    for _ in range(HISTORY_REPEATS):
        transcript = Transcript()
        for i, events in enumerate(runs):
            apply_transcript(transcript, i, events)
            t0 = time.perf_counter()
            fresh = transcript._to_messages_uncached()  # does not touch the cache
            t1 = time.perf_counter()
            sent = transcript.to_messages()  # what build_input pays after this run
            t2 = time.perf_counter()
            uncached[i], cached[i] = min(uncached[i], t1 - t0), min(cached[i], t2 - t1)
            if i in (0, len(runs) - 1):
                assert sent == fresh
    return cached, uncached


def section_history(plain: list[list[Any]], heavy: list[list[Any]]) -> None:
    """Section 2."""
    first, last = range(WINDOW), range(RUNS - WINDOW, RUNS)
    print(f"\n2. the history each run sends (to_messages, once per run; mean over the first/last {WINDOW} runs)")
    for thread, runs in (("plain", plain), ("snapshot-heavy", heavy)):
        cached, uncached = history_costs(runs)
        c0, c1, u0, u1 = (window_mean(v, w) for v, w in ((cached, first), (cached, last),
                                                          (uncached, first), (uncached, last)))
        print(f"   {thread:15s} cached   start {ms(c0)}  end {ms(c1)}  end/start {c1 / c0:5.1f}")
        print(f"   {thread:15s} uncached start {ms(u0)}  end {ms(u1)}  end/start {u1 / u0:5.1f}"
              f"   uncached/cached at the end {u1 / c1:5.1f}x")
    session = AgentSession("http://127.0.0.1:9/", thread_id=THREAD_ID)
    for i, events in enumerate(plain):
        apply_transcript(session.transcript, i, events)
    session.transcript.to_messages()

    def body() -> bytes:
        run_input = session.build_input()
        return json.dumps(run_input.model_dump(mode="json", by_alias=True, exclude_none=True)).encode()

    def kept() -> bytes:  # what AgentClient sends: each message's JSON text kept by the transcript
        return encode(session.build_input(), session.transcript.message_json)

    best, written = min(_timed(body) for _ in range(10)), min(_timed(kept) for _ in range(10))
    print(f"   for scale, the whole request body at the end (build_input + model_dump + json.dumps): {ms(best).strip()}"
          f" for {len(body()) / 1024:.0f} KiB (the cached to_messages is part of it); written from the messages'"
          f" kept JSON texts, as sent (build_input + request_body.encode): {ms(written).strip()}")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# -- 3. vs @ag-ui/client ---------------------------------------------------------------------------------------

class _DictRun(MemoryRun):
    """An ``AgentRun`` stand-in that validates each wire dict as it yields it (as the transport does)."""

    async def _iterate(self):
        for event in self._events:
            yield parse_event(event)


class _DictClient:
    url = "memory://bench"

    def __init__(self, runs: list[list[dict[str, Any]]]) -> None:
        self._runs = iter(runs)

    def run(self, run_input: Any, **_: Any) -> _DictRun:
        return _DictRun(next(self._runs))


def ours_pass(runs: list[list[dict[str, Any]]]) -> list[float]:
    """Seconds of each run through ``AgentSession.send()`` (build_input included), one pass."""
    times: list[float] = []

    async def thread() -> None:
        session = AgentSession("http://127.0.0.1:9/", thread_id=THREAD_ID)
        session.client = _DictClient(runs)  # type: ignore[assignment]
        for i in range(len(runs)):
            t0 = time.perf_counter()
            async for _ in session.send(user_text(i), message_id=ids(i)["user"]):
                pass
            times.append(time.perf_counter() - t0)
        assert session.error is None, session.error
        assert len(session.transcript.messages) == 3 * len(runs)

    asyncio.run(thread())
    return times


def ours_sse_pass(url: str, count: int) -> list[float]:
    """Seconds of each run through ``AgentSession.send()`` against the SSE replay server: the transport too."""
    times: list[float] = []

    async def thread() -> None:
        session = AgentSession(url, thread_id=THREAD_ID)
        for i in range(count):
            t0 = time.perf_counter()
            async for _ in session.send(user_text(i), message_id=ids(i)["user"]):
                pass
            times.append(time.perf_counter() - t0)
        assert session.error is None, session.error
        assert len(session.transcript.messages) == 3 * count

    asyncio.run(thread())
    return times


@contextlib.contextmanager
def sse_server(data_path: Path) -> Iterator[str]:
    """``benchmarks/_sse_replay.py`` in its own process on a free loopback port; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "benchmarks._sse_replay", str(data_path), str(port)], cwd=ROOT)
    try:
        for _ in range(300):
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(10)


def js_runtime() -> list[str] | None:
    """The command that runs JavaScript here: node, else bun (PATH, then the repository's .tools)."""
    for name in ("node", "bun"):
        found = shutil.which(name)
        if found:
            return [found]
    local = ROOT / ".tools" / "node_modules" / ".bin" / "bun"
    return [str(local)] if local.exists() else None


def install_client() -> str | None:
    """Install @ag-ui/client into benchmarks/.node/ (npm, else bun) if it is not there; None when it is ready."""
    installed = NODE_DIR / "node_modules" / "@ag-ui" / "client" / "package.json"
    if installed.exists() and json.loads(installed.read_text())["version"] == CLIENT_VERSION:
        return None
    NODE_DIR.mkdir(exist_ok=True)
    (NODE_DIR / "package.json").write_text(json.dumps(
        {"private": True, "description": "benchmarks/core_scaling.py: @ag-ui/client for comparison (gitignored)",
         "dependencies": {"@ag-ui/client": CLIENT_VERSION}}, indent=2))
    npm, bun = shutil.which("npm"), shutil.which("bun") or str(ROOT / ".tools" / "node_modules" / ".bin" / "bun")
    command = ([npm, "install", "--no-fund", "--no-audit"] if npm else [bun, "install"])
    print(f"   installing @ag-ui/client@{CLIENT_VERSION} into {NODE_DIR.relative_to(ROOT)} ({Path(command[0]).name}) …")
    try:
        done = subprocess.run(command, cwd=NODE_DIR, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{command[0]} failed: {exc}"
    if done.returncode != 0 or not installed.exists():
        return f"{Path(command[0]).name} install failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return None


def js_pass(runtime: list[str], data_path: Path) -> dict[str, Any]:
    """One pass of the JS driver over the runs in ``data_path``; its JSON report."""
    shutil.copy(Path(__file__).with_name("agui_client_driver.mjs"), NODE_DIR / "driver.mjs")
    done = subprocess.run([*runtime, str(NODE_DIR / "driver.mjs"), str(data_path)], cwd=NODE_DIR,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the driver failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def naive_pass(runs: list[list[dict[str, Any]]]) -> list[float]:
    """The fallback: the naive deep-copying reducer of ``reducer_scaling`` on validated events."""
    reducer, times = NaiveReducer(), []
    for i, events in enumerate(runs):
        t0 = time.perf_counter()
        reducer.add_user(ids(i)["user"], user_text(i))
        for event in events:
            parsed = parse_event(event)
            if parsed.type.value == "MESSAGES_SNAPSHOT":
                reducer.messages = [m.model_dump(by_alias=True, exclude_none=True) for m in parsed.messages]
            else:
                reducer.apply(parsed)
        times.append(time.perf_counter() - t0)
    return times


def compare(thread: str, runs: list[list[dict[str, Any]]], runtime: list[str] | None, sse: bool = False) -> float:
    """Events/s of ours vs the client's (or the naive reducer's) on ``runs``; returns the ratio.

    With ``sse``, both sides read the runs from ``_sse_replay`` over loopback HTTP (their transports timed);
    needs the client.
    """
    events = sum(len(r) for r in runs)
    ours, theirs = [float("inf")] * len(runs), [float("inf")] * len(runs)
    label, detail = "naive deep-copy reducer (fallback)", ""
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        data_path = Path(tmp) / "runs.json"
        data = {"threadId": THREAD_ID, "repeats": 1, "warmup": WINDOW,
                "runs": [{"user": {"id": ids(i)["user"], "content": user_text(i)}, "events": r}
                         for i, r in enumerate(runs)]}
        data_path.write_text(json.dumps(data))
        if sse:
            data["url"] = stack.enter_context(sse_server(data_path))
            data_path.write_text(json.dumps(data))
        for _ in range(COMPARE_PASSES):  # alternate the sides, so that a busy machine slows both
            if runtime is not None:
                result = js_pass(runtime, data_path)
                assert result["messages"] == 3 * len(runs), result["messages"]
                theirs = [min(a, b / 1e3) for a, b in zip(theirs, result["runMs"][0], strict=True)]
                label, detail = f"@ag-ui/client {result['client']}", f" on {result['runtime']}"
            else:
                theirs = [min(a, b) for a, b in zip(theirs, naive_pass(runs), strict=True)]
            gc.collect()
            mine = ours_sse_pass(data["url"], len(runs)) if sse else ours_pass(runs)
            ours = [min(a, b) for a, b in zip(ours, mine, strict=True)]
    window = max(1, len(runs) // 10)
    first, last = range(window), range(len(runs) - window, len(runs))
    ours_rate, theirs_rate = events / sum(ours), events / sum(theirs)
    print(f"   {thread} ({events} events, {len(runs)} runs): {label}{detail}:"
          f" {theirs_rate:9,.0f} ev/s;"
          f" ours {ours_rate:9,.0f} ev/s  -> ours/theirs {ours_rate / theirs_rate:6.1f}x")
    per_event = {name: [t / len(r) for t, r in zip(times, runs, strict=True)] for name, times in
                 (("theirs", theirs), ("ours", ours))}
    for name, costs in per_event.items():
        a, b = window_mean(costs, first), window_mean(costs, last)
        print(f"      {name:6s} per event, first {window} runs {us(a)}, last {window} {us(b)} (end/start {b / a:5.1f})")
    return ours_rate / theirs_rate


def section_compare(count: int) -> bool:
    """Section 3 on ``count``-run threads; True when the snapshot-heavy goal is met."""
    plain, heavy = wire_runs(False, count), wire_runs(True, count)
    print(f"\n3. events per second, from decoded JSON to the reduced thread (+ each run's input), on {count}-run"
          f" threads; each run's time is the fastest of {COMPARE_PASSES} passes, alternating between the sides")
    runtime = js_runtime()
    problem = "neither node nor bun is installed" if runtime is None else install_client()
    if problem:
        print(f"   !! @ag-ui/client cannot run here ({problem}):"
              " comparing with the naive deep-copying reducer of reducer_scaling instead")
        runtime = None
    ratio = compare("snapshot-heavy", heavy, runtime)
    verdict = "ok" if ratio >= GOAL_FASTER else "MISSED"
    print(f"      goal: ours >= {GOAL_FASTER:.0f}x on snapshot-heavy threads: {verdict}")
    compare("plain", plain, runtime)
    if runtime is not None:
        print("\n4. the same with the SSE transport on both sides: each run POSTed to a loopback server in its own"
              " process (benchmarks/_sse_replay.py) that streams the recorded events; ours AgentClient (httpx,"
              " httpx-sse, our decode), theirs HttpAgent (fetch, its SSE parser, JSON.parse)")
        compare("snapshot-heavy over SSE", heavy, runtime, sse=True)
        compare("plain over SSE", plain, runtime, sse=True)
    return ratio >= GOAL_FASTER


def main() -> None:
    """Sections 1-3, then the goals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-runs", type=int, default=COMPARE_RUNS, help="runs of section 3's threads")
    options = parser.parse_args()
    os.environ.setdefault("INTERRUPT_CHAT_THREAD_STORE", "off")
    began = time.perf_counter()
    plain_wire, heavy_wire = wire_runs(False), wire_runs(True)
    plain = [[parse_event(e) for e in r] for r in plain_wire]
    heavy = [[parse_event(e) for e in r] for r in heavy_wire]
    print(f"threads: plain {RUNS} runs x {len(plain[0])} events; snapshot-heavy {RUNS} runs x {len(heavy[0])} events"
          f" (the last snapshot carries {len(heavy_wire[-1][-2]['messages'])} messages,"
          f" {len(json.dumps(heavy_wire[-1][-2])) / 1024:.0f} KiB)")
    flat = section_per_event(plain, heavy)
    section_history(plain, heavy)
    del plain, heavy, plain_wire, heavy_wire
    gc.collect()
    faster = section_compare(options.compare_runs)
    print(f"\ngoals: flat per event {'met' if flat else 'NOT met'}; >= {GOAL_FASTER:.0f}x @ag-ui/client on"
          f" snapshot-heavy threads {'met' if faster else 'NOT met'}   (total {time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
