"""Events per second through the client pipeline vs raw httpx-sse, over a real loopback server.

A uvicorn server (``tests.unit.agents.serve_in_thread``, 127.0.0.1, ephemeral port, in a thread of
this process) replays one pre-rendered run of ~20k events (RUN_STARTED, an answer of 20,000 text
deltas, a tool call, its result, RUN_FINISHED). The same bytes are read five ways:

- ``raw``: ``httpx_sse.aconnect_sse(...).aiter_sse()``, counting events (the floor);
- ``raw+parse``: the same, plus ``json.loads`` and ``parse_event`` (pydantic validation);
- ``transport``: ``AgentClient.run(...)`` (httpx-sse framing behind a size guard, decode, read in the consumer's task);
- ``session``: ``AgentSession.send(...)`` iterated (claim, ``mark_tail``, the user message, then
  ``stream``: transport batches + chunks + joined deltas + verify + reduce + interrupts);
- ``drive``: the chat's whole send path, ``ChatState._send_text`` on a real Reflex state tree (no
  browser, no state manager: ``async with state`` is a no-op): ``session.send``, the first
  ``driver.publish``, then ``driver.drive`` (a plain ``async for`` through ``driver._Throttle``: at
  most 20 publishes a second of the run's own messages, one timer per tick for the trailing push,
  the final publish).

Two server modes: ``batched`` (64 events per write: the client's cost dominates) and
``per-event`` (one write per event, as a streaming agent does; more HTTP chunks to parse). Every
tier reports time per wire event; from ``session`` on, deltas read together are applied as one
(``interrupt_chat.agui.coalesce``), so those tiers gain most when the client reads behind the agent. The
server runs in the same process, so it shares the GIL with the client: absolute rates are lower
than across processes, for every tier alike. Each figure is the best of REPEATS passes.

Then, in-process (no network), the cost ``driver.drive`` adds per event: the same run from an in-memory
transport through ``session.send`` alone vs through ``ChatState._send_text``.

Run: ``.venv/bin/python -m benchmarks.stream_throughput`` (about 27 s).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from ag_ui.core import PROTOCOL_VERSION, RunAgentInput  # noqa: E402
from httpx_sse import aconnect_sse  # noqa: E402

from benchmarks._thread import ROOT, THREAD_ID, MemoryClient, run_events  # noqa: E402
from interrupt_chat.agui import AgentClient, AgentSession, parse_event  # noqa: E402
from interrupt_chat.agui.request_body import body_of  # noqa: E402
from tests.unit.agents import serve_in_thread  # noqa: E402

os.environ["INTERRUPT_CHAT_DB_URL"] = "off"  # no SQLite file written by a benchmark
os.chdir(ROOT)  # Reflex reads rxconfig.py from the working directory

import reflex as rx  # noqa: E402
from reflex.istate.data import SessionData  # noqa: E402

from interrupt_chat.tab import driver, identity  # noqa: E402
from interrupt_chat.assembly import registry  # noqa: E402
from interrupt_chat.tab.live import live_of  # noqa: E402

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
    body = body_of(run_input())  # the dict AgentClient writes
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
    async for _ in chat.send("Question: stream a long answer, please."):
        pass
    check(chat)
    return EXPECTED[0]  # it yields deltas read together as one event; check() saw every one applied


def check(session: AgentSession) -> None:
    assert session.error is None and session.transcript.status == "finished", session.error
    assert session.transcript.tail_start == 0  # send() marked the run's start (a fresh thread)
    assert len(session.transcript.messages[1].content) == ANSWER[0]  # every delta was reduced


_CHAT: list[Any] = []


def chat_substate() -> Any:
    """The benchmark's ChatState subclass on a real Reflex state tree (made once)."""
    if not _CHAT:
        chat_cls = registry.new_chat_state("benchmark", agent_url="http://127.0.0.1:9/", configs=[])
        root = rx.State(_reflex_internal_init=True)
        # a tab with a person (issue 38: a tab whose socket has no identity sends nothing), as a handshake gives
        root.rx_router_session = SessionData(client_token="benchmark-tab", client_ip="", session_id="benchmark-tab")
        identity.bind("benchmark-tab", "benchmark-person")
        _CHAT.append(root.get_substate(chat_cls.get_full_name().split(".")))
    return _CHAT[0]


async def drive(client: Any) -> AgentSession:
    """``ChatState._send_text`` (what the composer's submit runs) on a fresh thread, against ``client``."""
    chat = chat_substate()
    fresh = AgentSession("http://127.0.0.1:9/", thread_id=THREAD_ID)
    fresh.client = client  # an AgentClient, or the in-memory stand-in below
    chat._sessions, chat.thread_id = {THREAD_ID: fresh}, THREAD_ID
    await chat._send_text("Question: stream a long answer, please.")
    # driver.publish keeps the split between runs: a fresh thread's one run is all `live`, the history is empty;
    # two rows: the user's message and the answer, whose tool-call card holds the result
    assert chat.status == "idle" and chat.history.rows == [] and len(live_of(chat).live) == 2, \
        (chat.status, len(live_of(chat).live))
    check(fresh)
    return fresh


async def drive_tier(url: str) -> int:
    await drive(AgentClient(url, read_timeout=30))
    return EXPECTED[0]


EXPECTED: list[int] = []  # events per run (the session and drive tiers do not count them themselves)
ANSWER: list[int] = []  # the answer's length: the sum of its deltas

TIERS = {
    "raw": lambda url: raw(url, parse=False),
    "raw+parse": lambda url: raw(url, parse=True),
    "transport": transport,
    "session": session,
    "drive": drive_tier,
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
    EXPECTED.append(len(events))
    ANSWER.append(sum(len(e["delta"]) for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"))
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
              f" of which pydantic parse (raw+parse / raw): {best['raw+parse'] / floor:.2f}x;"
              f" the Reflex layer (drive / session): {best['drive'] / best['session']:.2f}x")
    drive_in_process([parse_event(e) for e in events])
    decode_what_if(frames)
    print(f"\n(total {time.perf_counter() - began:.1f} s)")


def drive_in_process(events: list[Any]) -> None:
    """The same run from memory: ``session.send`` iterated vs ``ChatState._send_text`` (+ ``driver.drive``)."""
    client = MemoryClient(itertools.repeat(events))
    publishes: list[int] = []
    original_publish = driver.publish

    async def counting(self: Any, session: AgentSession, **kwargs: Any) -> None:
        publishes[-1] += 1
        await original_publish(self, session, **kwargs)

    async def plain() -> None:
        fresh = AgentSession("http://127.0.0.1:9/", thread_id=THREAD_ID)
        fresh.client = client
        async for _ in fresh.send("Question: stream a long answer, please."):
            pass
        check(fresh)

    async def driven() -> None:
        publishes.append(0)
        await drive(client)

    async def measure_all() -> dict[str, float]:
        best = {"session.send": float("inf"), "_send_text": float("inf")}
        for _ in range(REPEATS):  # interleaved
            for name in best:
                t0 = time.perf_counter()
                await (plain() if name == "session.send" else driven())
                best[name] = min(best[name], time.perf_counter() - t0)
        return best

    driver.publish = counting  # the module attribute state.py and driver.py both call; restored below
    try:
        best = asyncio.run(measure_all())
    finally:
        driver.publish = original_publish
    n, floor, driven_best = len(events), best["session.send"], best["_send_text"]
    print(f"\nin-process, {n} events from an in-memory transport (best of {REPEATS}):")
    print(f"   session.send iterated                 {floor * 1e6 / n:6.2f} us/event")
    print(f"   ChatState._send_text (real drive)     {driven_best * 1e6 / n:6.2f} us/event"
          f"   ({min(publishes)}-{max(publishes)} publishes per run):"
          f" driver.drive adds {(driven_best - floor) * 1e6 / n:5.2f} us/event ({driven_best / floor:.2f}x)")


def decode_what_if(frames: list[bytes]) -> None:
    """Decoding one ``data`` line: the general path (``json.loads`` + ``parse_event``, pydantic
    ``validate_python``) vs the transport's (plain deltas validated straight from the JSON text,
    ``parse_delta_json``; the rest the general way). In-process, no network."""
    from interrupt_chat.agui.sanitize import SurrogateRepair
    from interrupt_chat.agui.transport import _decode

    datas = [frame[len(b"data: "):].decode().strip() for frame in frames]
    timer = time.perf_counter
    repair = SurrogateRepair()

    def best(fn) -> float:
        fastest = float("inf")
        for _ in range(REPEATS):
            t0 = timer()
            for data in datas:
                fn(data)
            fastest = min(fastest, timer() - t0)
        return fastest / len(datas)

    general = best(lambda data: parse_event(json.loads(data)))
    transport = best(lambda data: _decode(data, repair))
    print(f"\ndecode per event (in-process): general path (json.loads + parse_event) {general * 1e6:.2f} us;"
          f" the transport's (deltas straight from JSON) {transport * 1e6:.2f} us (ratio {general / transport:.1f}x)")

if __name__ == "__main__":
    main()
