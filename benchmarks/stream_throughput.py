"""Events per second through the client pipeline vs raw httpx-sse, over a real loopback server.

A uvicorn server (``tests.unit.agents.serve_in_thread``, 127.0.0.1, ephemeral port, in a thread of
this process) replays one pre-rendered run of ~20k events (RUN_STARTED, an answer of 20,000 text
deltas, a tool call, its result, RUN_FINISHED). The same bytes are read four ways:

- ``raw``: ``httpx_sse.aconnect_sse(...).aiter_sse()``, counting events (the floor);
- ``raw+parse``: the same, plus ``json.loads`` and ``parse_event`` (pydantic validation);
- ``transport``: ``AgentClient.run(...)`` (our SSE framing, decode, the reader task and its queue);
- ``session``: ``AgentSession.stream(...)`` (transport + chunks + verify + reduce + interrupts).

Two server modes: ``batched`` (64 events per write: the client's cost dominates) and
``per-event`` (one write per event, as a streaming agent does; more HTTP chunks to parse). The
server runs in the same process, so it shares the GIL with the client: absolute rates are lower
than across processes, for every tier alike. Each figure is the best of REPEATS passes.

Run: ``.venv/bin/python -m benchmarks.stream_throughput`` (about 15 s).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from ag_ui.core import PROTOCOL_VERSION, RunAgentInput  # noqa: E402
from httpx_sse import aconnect_sse  # noqa: E402

from benchmarks._thread import THREAD_ID, run_events  # noqa: E402
from interrupt_chat.agui import AgentClient, AgentSession, parse_event  # noqa: E402
from tests.unit.agents import serve_in_thread  # noqa: E402

DELTAS = 20_000
REPEATS = 5
BATCH = 64
RUN_ID = "run-bench"


class Replay:
    """Raw ASGI app: drains the request, then writes the pre-rendered SSE frames."""

    def __init__(self, frames: list[bytes]) -> None:
        self.modes = {"/batched": [b"".join(frames[k:k + BATCH]) for k in range(0, len(frames), BATCH)],
                      "/per-event": frames}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        chunks = self.modes[scope["path"]]
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def run_input() -> RunAgentInput:
    return RunAgentInput(thread_id=THREAD_ID, run_id=RUN_ID, protocol_version=PROTOCOL_VERSION, state={},
                         messages=[], tools=[], context=[], forwarded_props={})


async def raw(url: str, parse: bool) -> int:
    body = AgentClient(url).run(run_input())._body
    count = 0
    async with httpx.AsyncClient(timeout=30) as http:
        async with aconnect_sse(http, "POST", url, json=body, headers={"Accept": "text/event-stream"}) as source:
            async for sse in source.aiter_sse():
                if parse:
                    parse_event(json.loads(sse.data))
                count += 1
    return count


async def transport(url: str) -> int:
    count = 0
    async for _ in AgentClient(url, read_timeout=30).run(run_input()):
        count += 1
    return count


async def session(url: str) -> int:
    chat = AgentSession(AgentClient(url, read_timeout=30), thread_id=THREAD_ID)
    count = 0
    async for _ in chat.stream(run_input()):
        count += 1
    assert chat.error is None and chat.transcript.status == "finished", chat.error
    assert len(chat.transcript.messages[0].content) > DELTAS  # the answer really was reduced
    return count


TIERS = {
    "raw": lambda url: raw(url, parse=False),
    "raw+parse": lambda url: raw(url, parse=True),
    "transport": transport,
    "session": session,
}


async def measure(base: str, expected: int) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for mode in ("batched", "per-event"):
        url = f"{base}/{mode}"
        best = {name: float("inf") for name in TIERS}
        for _ in range(REPEATS):  # interleaved, so drift affects every tier alike
            for name, tier in TIERS.items():
                t0 = time.perf_counter()
                count = await tier(url)
                best[name] = min(best[name], time.perf_counter() - t0)
                assert count == expected, (name, mode, count, expected)
        results[mode] = best
    return results


def main() -> None:
    began = time.perf_counter()
    events = run_events(0, deltas=DELTAS, arg_deltas=12, run_id=RUN_ID)
    frames = [f"data: {json.dumps(e, separators=(',', ':'))}\n\n".encode() for e in events]
    size = sum(map(len, frames))
    print(f"stream: {len(events)} events, {size / 1e6:.2f} MB of SSE, best of {REPEATS} passes per tier")
    with serve_in_thread(Replay(frames)) as base:
        results = asyncio.run(measure(base, len(events)))
    for mode, best in results.items():
        print(f"\n{mode} ({'%d events per write' % BATCH if mode == 'batched' else 'one write per event'}):")
        floor = best["raw"]
        for name, seconds in best.items():
            print(f"   {name:10s} {len(events) / seconds:9,.0f} events/s   {seconds * 1e6 / len(events):6.1f} us/event"
                  f"   time ratio vs raw {seconds / floor:5.2f}")
        print(f"   client pipeline overhead (session / raw): {best['session'] / floor:.2f}x;"
              f" of which pydantic parse (raw+parse / raw): {best['raw+parse'] / floor:.2f}x")
    decode_what_if(frames)
    print(f"\n(total {time.perf_counter() - began:.1f} s)")


def decode_what_if(frames: list[bytes]) -> None:
    """The transport decodes each ``data`` with ``json.loads`` + ``parse_event`` (pydantic
    ``validate_python``); pydantic can validate the JSON text directly. In-process, no network."""
    from interrupt_chat.agui.events import EVENT_ADAPTER

    datas = [frame[len(b"data: "):].decode().strip() for frame in frames]
    timer = time.perf_counter

    def best(fn) -> float:
        fastest = float("inf")
        for _ in range(REPEATS):
            t0 = timer()
            for data in datas:
                fn(data)
            fastest = min(fastest, timer() - t0)
        return fastest / len(datas)

    current = best(lambda data: parse_event(json.loads(data)))
    direct = best(EVENT_ADAPTER.validate_json)
    print(f"\ndecode per event (in-process): json.loads + parse_event {current * 1e6:.2f} us;"
          f" EVENT_ADAPTER.validate_json {direct * 1e6:.2f} us (ratio {current / direct:.1f}x;"
          " a fast path would need parse_event's fallback for unknown types/outcomes)")


if __name__ == "__main__":
    main()
