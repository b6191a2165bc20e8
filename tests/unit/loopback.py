"""Serve an ASGI app on a real loopback socket for tests, and record what clients POST to it.

``httpx.ASGITransport`` buffers a whole response before the client sees a byte, so streaming bugs (SSE framing
split across TCP reads, a client that waits for the body to end, disconnects) only show over a real socket::

    with serve(app) as base_url:            # uvicorn on 127.0.0.1:<ephemeral>, in a background thread
        ...                                 # e.g. AgentSession(f"{base_url}/std/approval")

    recorder = RequestRecorder(app)         # ASGI wrapper: keeps every request's path and JSON body
    with serve(recorder) as base_url: ...
    recorder.last("/")                      # the last JSON body POSTed to "/"

The server binds the socket itself before uvicorn starts (port 0 → a free port, no race with other tests); the
context manager waits until uvicorn reports ``started`` and, on exit, asks it to stop and joins the thread.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["RecordedRequest", "RequestRecorder", "serve"]

START_TIMEOUT = 20.0  # generous: a loaded 2-core CI box imports and starts slowly
STOP_TIMEOUT = 10.0


@contextmanager
def serve(app: Any, *, host: str = "127.0.0.1") -> Iterator[str]:
    """Run ``app`` with uvicorn on ``host`` and a free port in a daemon thread; yield its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False, loop="asyncio")
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # not the main thread (uvicorn < 0.29 would try)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread below
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"loopback-{port}", daemon=True)
    thread.start()
    try:
        deadline = START_TIMEOUT
        while not server.started:
            if failure or not thread.is_alive():
                raise RuntimeError(f"the loopback server did not start: {failure[:1] or 'thread exited'}")
            if deadline <= 0:
                raise RuntimeError(f"the loopback server did not start within {START_TIMEOUT}s")
            threading.Event().wait(0.02)
            deadline -= 0.02
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        sock.close()


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    body: Any  # the parsed JSON body, or the raw bytes when it is not JSON


class RequestRecorder:
    """ASGI middleware that records each HTTP request's method, path and (JSON) body, then passes it on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        recorded = False

        async def recording_receive() -> dict:
            nonlocal recorded
            message = await receive()
            if message["type"] == "http.request" and not recorded:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    recorded = True
                    self._record(scope, b"".join(chunks))
            return message

        await self.app(scope, recording_receive, send)

    def _record(self, scope: dict, raw: bytes) -> None:
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        with self._lock:
            self.requests.append(RecordedRequest(scope.get("method", ""), scope.get("path", ""), body))

    def bodies(self, path: str | None = None) -> list[Any]:
        """JSON bodies of the POSTs (to ``path`` if given), oldest first."""
        with self._lock:
            return [r.body for r in self.requests if r.method == "POST" and (path is None or r.path == path)]

    def last(self, path: str | None = None) -> Any:
        bodies = self.bodies(path)
        if not bodies:
            raise AssertionError(f"no POST recorded{f' to {path}' if path else ''}")
        return bodies[-1]
