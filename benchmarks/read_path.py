"""The CPU the core spends per event reading a paced agent: aiohttp's wire vs httpx's own (issue 10).

Starts ``benchmarks/_paced_agent.py`` on 127.0.0.1 (every run streams ``--deltas`` text deltas at
``--rate`` per second, one network write each, as an LLM-backed agent does), then reads ``--chats``
concurrent runs with :class:`interrupt_chat.agui.AgentClient`, the whole pipeline up to typed
events (HTTP, SSE framing, JSON, ``ag_ui.core`` models), twice per round:

- ``httpx``: the client given ``httpx.AsyncHTTPTransport`` (httpcore, h11, anyio): the baseline;
- ``aiohttp``: the default client (``interrupt_chat/agui/aiohttp_transport.py``).

It prints the process's CPU time per event for each and the ratio, best of ``--rounds``.

    .venv/bin/python -m benchmarks.read_path --chats 200 --deltas 200 --rate 20
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import subprocess
import sys
import time
from pathlib import Path

import httpx
from ag_ui.core import RunAgentInput, UserMessage

if __package__ in (None, ""):  # run as a file: make ``interrupt_chat`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from interrupt_chat.agui import AgentClient
from interrupt_chat.agui.transport import _ssl_context


async def _read_one(client: AgentClient, index: int) -> int:
    nonce = "Z" + secrets.token_hex(8)
    body = RunAgentInput(thread_id=f"t{index}", run_id=f"r{index}", state={}, tools=[], context=[],
                         forwarded_props={},
                         messages=[UserMessage(id=f"u{index}", role="user", content=f"nonce:{nonce}")])
    return sum([1 async for _ in client.run(body)])


async def measure(url: str, chats: int, wire: str) -> tuple[float, int]:
    """CPU seconds of this process and events read, for ``chats`` concurrent runs."""
    transport = httpx.AsyncHTTPTransport(verify=_ssl_context(), limits=httpx.Limits(max_connections=None)) \
        if wire == "httpx" else None
    client = AgentClient(url, transport=transport)
    started = time.process_time()
    events = sum(await asyncio.gather(*(_read_one(client, i) for i in range(chats))))
    cpu = time.process_time() - started
    if transport is not None:
        await transport.aclose()
    return cpu, events


def main(argv: list[str] | None = None) -> None:
    """Start the agent, measure both wires ``--rounds`` times, print µs of CPU per event and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    agent = subprocess.Popen([sys.executable, "-m", "benchmarks._paced_agent", "--deltas", str(args.deltas),
                              "--rate", str(args.rate)], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[1])
    try:
        line = agent.stdout.readline() if agent.stdout else ""
        if not line.startswith("PORT "):
            raise SystemExit(f"the paced agent did not start: {line!r}")
        url = f"http://127.0.0.1:{line.split()[1]}/"
        best: dict[str, float] = {}
        for round_ in range(args.rounds):
            for wire in ("httpx", "aiohttp"):
                cpu, events = asyncio.run(measure(url, args.chats, wire))
                per_event = cpu / max(events, 1) * 1e6
                best[wire] = min(best.get(wire, per_event), per_event)
                print(f"round {round_ + 1} {wire:8} {events} events, {cpu:.2f} s CPU, {per_event:.0f} µs/event",
                      flush=True)
        print(f"\n{args.chats} chats × {args.deltas} deltas at {args.rate:g}/s, best of {args.rounds}:")
        print(f"  httpx's wire    {best['httpx']:.0f} µs of CPU per event (baseline)")
        print(f"  aiohttp's wire  {best['aiohttp']:.0f} µs of CPU per event"
              f"  ({best['httpx'] / best['aiohttp']:.2f}× less)")
    finally:
        agent.terminate()
        agent.wait(10)


if __name__ == "__main__":
    main()
