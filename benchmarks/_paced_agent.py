"""A paced, LLM-free AG-UI agent for the load harness (its own process, 127.0.0.1, ephemeral port).

Every run answers with ``--deltas`` ``TEXT_MESSAGE_CONTENT`` deltas at ``--rate`` deltas per second
(on an absolute schedule, so a late wake-up does not push the rest of the answer later). The
user's last message carries a nonce (``nonce:Z<16 hex>``); delta ``i`` is ``" Z<hex>:<i>;"``, so a
client can tell which delta it sees and whose it is (the ``;`` marks a delta as complete, should a
client see an answer cut in the middle of one). The events are ``ag_ui.core`` models encoded
by ``ag_ui.encoder.EventEncoder``, as the demo agent sends them.

The agent records the wall-clock time (``time.time()``) just before each delta is handed to the
server, per nonce; ``GET /sent`` returns them (with counters), ``GET /health`` answers ``ok``.

    python -m benchmarks._paced_agent --deltas 200 --rate 20    # prints "PORT <n>" once listening
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
import uuid
from typing import Any

from ag_ui.core import (
    RunAgentInput,
    RunFinishedEvent,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from ag_ui.encoder import EventEncoder

from benchmarks._asgi import read_body, send_json, serve

NONCE = re.compile(r"nonce:(Z[0-9a-f]{16})")
_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]


class PacedAgent:
    """Raw ASGI app (no framework between the event loop and the socket, to keep the agent's CPU small)."""

    def __init__(self, deltas: int, rate: float) -> None:
        self.deltas = deltas
        self.rate = rate
        self.encoder = EventEncoder()
        self.sent: dict[str, list[float]] = {}  # nonce -> send time of each delta (index = seq)
        self.counts = {"runs": 0, "finished": 0, "disconnected": 0, "bad_input": 0, "no_nonce": 0}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                pass
            return
        if scope["type"] != "http":
            return
        if scope["method"] == "GET":
            if scope["path"].rstrip("/").endswith("/sent"):
                body = json.dumps({"sent": self.sent, "counts": self.counts}).encode()
            else:
                body = b'{"ok": true}'
            await send_json(send, body)
            return
        try:
            run_input = RunAgentInput.model_validate_json(await read_body(receive))
        except ValueError:
            self.counts["bad_input"] += 1
            await send({"type": "http.response.start", "status": 422, "headers": []})
            await send({"type": "http.response.body", "body": b'{"error": "invalid RunAgentInput"}'})
            return
        await self._run(run_input, receive, send)

    async def _run(self, body: RunAgentInput, receive: Any, send: Any) -> None:
        self.counts["runs"] += 1
        users = [m for m in body.messages if m.role == "user"]
        found = NONCE.search(str(users[-1].content)) if users else None
        if found is None:
            self.counts["no_nonce"] += 1
        nonce = found.group(1) if found else "Z" + "0" * 16
        times = self.sent.setdefault(nonce, [])
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.ensure_future(watch())
        encode = self.encoder.encode
        message_id = f"msg-{uuid.uuid4().hex[:12]}"
        loop = asyncio.get_running_loop()
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
            head = encode(RunStartedEvent(thread_id=body.thread_id, run_id=body.run_id))
            head += encode(TextMessageStartEvent(message_id=message_id, role="assistant"))
            await send({"type": "http.response.body", "body": head.encode(), "more_body": True})
            start = loop.time()
            for seq in range(self.deltas):
                delay = start + (seq + 1) / self.rate - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if gone.is_set():
                    self.counts["disconnected"] += 1
                    return
                frame = encode(TextMessageContentEvent(message_id=message_id, delta=f" {nonce}:{seq};")).encode()
                times.append(time.time())
                await send({"type": "http.response.body", "body": frame, "more_body": True})
            tail = encode(TextMessageEndEvent(message_id=message_id))
            tail += encode(RunFinishedEvent(thread_id=body.thread_id, run_id=body.run_id,
                                            outcome=RunFinishedSuccessOutcome()))
            await send({"type": "http.response.body", "body": tail.encode(), "more_body": False})
            self.counts["finished"] += 1
        except OSError:  # the client went away while we wrote
            self.counts["disconnected"] += 1
        finally:
            watcher.cancel()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0, help="deltas per second per run")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    serve(PacedAgent(args.deltas, args.rate), args.port, loop="asyncio", backlog=2048, timeout_keep_alive=60)


if __name__ == "__main__":
    main()
