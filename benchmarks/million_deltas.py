"""A run of one million one-character deltas: it completes, whole, in bounded memory and linear time (issue 26 §6).

A uvicorn server on 127.0.0.1 (in a thread of this process) streams one run: RUN_STARTED, one text message of N
one-character ``TEXT_MESSAGE_CONTENT`` deltas (with a UUID message id, as producers send them), RUN_FINISHED, generated as it is sent (the server holds no copy).
The client is the whole core pipeline, ``AgentSession.send`` iterated (transport, parse, chunks, verify, reduce).
The same run is measured at N = 10,000 (the baseline) and N = 1,000,000, in this run:

- time per delta at each size, and their ratio (1.0: linear);
- the process's peak resident memory above what it held before the run, sampled every 20 ms, and its ratio;
- the answer's length (it must be N) and the run's bytes on the wire.

Before issue 26 a run stopped at 64 MiB of event data: the 1,000,000-delta run is larger (printed) and failed.

Run: ``.venv/bin/python -m benchmarks.million_deltas`` (about 40 s).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from interrupt_chat.agui import AgentClient, AgentSession  # noqa: E402
from tests.unit.agents import serve_in_thread  # noqa: E402

SIZES = (10_000, 1_000_000)
MESSAGE_ID = "msg-9b2f6c1e-4d7a-4e0b-8f3c-2a1d5e6f7a8b"  # a producer's UUID: each delta is ~100 bytes on the wire
PER_WRITE = 2048  # events per HTTP chunk


def _line(event: dict) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


def _app() -> Starlette:
    async def run(request: Request) -> StreamingResponse:
        body = await request.json()
        count = int(request.query_params["n"])
        thread, run_id = body["threadId"], body["runId"]

        async def events() -> AsyncIterator[bytes]:
            yield _line({"type": "RUN_STARTED", "threadId": thread, "runId": run_id})
            yield _line({"type": "TEXT_MESSAGE_START", "messageId": MESSAGE_ID, "role": "assistant"})
            delta = _line({"type": "TEXT_MESSAGE_CONTENT", "messageId": MESSAGE_ID, "delta": "x"})
            left = count
            while left:
                batch = min(left, PER_WRITE)
                yield delta * batch
                left -= batch
                await asyncio.sleep(0)
            yield _line({"type": "TEXT_MESSAGE_END", "messageId": MESSAGE_ID})
            yield _line({"type": "RUN_FINISHED", "threadId": thread, "runId": run_id})

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/", run, methods=["POST"])])


class _Peak:
    """The process's peak resident memory while it runs (sampled)."""

    def __init__(self) -> None:
        self.process, self.peak, self._stop = psutil.Process(), 0, threading.Event()
        self.base = self.process.memory_info().rss

    def __enter__(self) -> _Peak:
        def sample() -> None:
            while not self._stop.wait(0.02):
                self.peak = max(self.peak, self.process.memory_info().rss)
        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def above(self) -> int:
        return max(0, self.peak - self.base)


async def _measure(base: str, count: int) -> tuple[float, int, int, str | None]:
    session = AgentSession(AgentClient(f"{base}/?n={count}"))
    with _Peak() as peak:
        started = time.perf_counter()
        async for _ in session.send("go"):
            pass
        elapsed = time.perf_counter() - started
    answer = session.transcript.messages[-1].content if session.transcript.messages else ""
    return elapsed, peak.above, len(answer), session.error


def main() -> None:
    with serve_in_thread(_app()) as base:
        results = {}
        for count in SIZES:
            elapsed, memory, length, error = asyncio.run(_measure(base, count))
            wire = count * len(_line({"type": "TEXT_MESSAGE_CONTENT", "messageId": MESSAGE_ID, "delta": "x"}))
            results[count] = (elapsed, memory)
            print(f"{count:>9,} deltas: {elapsed:6.2f} s, {elapsed / count * 1e6:5.2f} µs a delta, peak memory "
                  f"+{memory / 2**20:6.1f} MB, answer {length:,} characters"
                  f"{' (whole)' if length == count else ' (NOT whole)'}, {wire / 2**20:.0f} MB on the wire"
                  f"{', error: ' + error if error else ''}")
    (small_t, small_m), (big_t, big_m) = results[SIZES[0]], results[SIZES[1]]
    print(f"time per delta, 1,000,000 vs 10,000: {(big_t / SIZES[1]) / (small_t / SIZES[0]):.2f}x (1.0 = linear)")
    print(f"peak memory, 1,000,000 vs 10,000 deltas: {big_m / max(small_m, 1):.1f}x for 100x the deltas "
          f"({big_m / 2**20:.1f} MB: the answer itself is {SIZES[1] / 2**20:.1f} MB)")


if __name__ == "__main__":
    main()
