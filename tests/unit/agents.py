"""Small scripted AG-UI agents for the protocol-core tests (no LLM, no interrupt_chat.demo.agent).

- ``sse(...)`` / event builders: raw SSE bytes and wire-event dicts.
- :class:`ScriptedAgent`: an ASGI app that answers each POST with the next scripted reply (a list
  of events, raw bytes, a Starlette response, a :class:`Stream`, or a function of the request
  body returning one of those) and records every request. Use it with ``httpx.ASGITransport``
  (the whole body is buffered) or on the loopback server of ``conftest.py`` (really streamed).
- :class:`Stream`: a streamed reply that can pause, raise mid-body and tell (through a
  ``threading.Event``) when the server-side generator was closed, e.g. by a client disconnect.
- :class:`RawServer`: a bare TCP server writing exact bytes, for connection drops and resets.
- :func:`serve_in_thread`: uvicorn in a background thread on a given socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

EVENT_STREAM = "text/event-stream"


# -- wire events ---------------------------------------------------------------------------------

def sse(*events: dict | str | bytes, newline: str = "\n") -> bytes:
    """SSE frames: a dict becomes ``data: <json>``; str/bytes are written verbatim."""
    out = []
    for event in events:
        if isinstance(event, bytes):
            out.append(event)
        elif isinstance(event, str):
            out.append(event.encode())
        else:
            out.append(f"data: {json.dumps(event)}{newline}{newline}".encode())
    return b"".join(out)


def started(run_id: str = "r1", thread_id: str = "t1") -> dict:
    return {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}


def finished(run_id: str = "r1", thread_id: str = "t1", interrupts: list[dict] | None = None) -> dict:
    event = {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}
    if interrupts:
        event["outcome"] = {"type": "interrupt", "interrupts": interrupts}
    return event


def run_error(message: str = "boom", code: str | None = None) -> dict:
    event = {"type": "RUN_ERROR", "message": message}
    if code:
        event["code"] = code
    return event


def text(message_id: str, content: str) -> list[dict]:
    out = [{"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}]
    if content:
        out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": content})
    out.append({"type": "TEXT_MESSAGE_END", "messageId": message_id})
    return out


def tool_call(call_id: str, name: str, args: dict, parent: str | None = None) -> list[dict]:
    start = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
    if parent:
        start["parentMessageId"] = parent
    raw = json.dumps(args)
    half = len(raw) // 2
    return [start,
            {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": raw[:half]},
            {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": raw[half:]},
            {"type": "TOOL_CALL_END", "toolCallId": call_id}]


def tool_result(message_id: str, call_id: str, content: str) -> dict:
    return {"type": "TOOL_CALL_RESULT", "messageId": message_id, "toolCallId": call_id, "content": content,
            "role": "tool"}


def simple_run(run_id: str = "r1", thread_id: str = "t1", reply: str = "hello") -> list[dict]:
    return [started(run_id, thread_id), *text(f"{run_id}-m", reply), finished(run_id, thread_id)]


def echo_run(body: dict, reply: str = "ok") -> list[dict]:
    """A complete run that echoes the request's thread and run ids."""
    return simple_run(body["runId"], body["threadId"], reply)


# -- scripted ASGI agent --------------------------------------------------------------------------

@dataclass
class Stream:
    """A streamed reply. ``items``: dict (an event), bytes/str (raw), float (sleep seconds),
    BaseException (raised mid-body). ``closed`` is set when the server-side generator ends for
    any reason; ``disconnected`` when it was cancelled/closed before yielding everything."""

    items: list[Any]
    status: int = 200
    content_type: str = EVENT_STREAM
    closed: threading.Event = field(default_factory=threading.Event)
    disconnected: threading.Event = field(default_factory=threading.Event)
    sent: int = 0  # items yielded so far

    def response(self) -> Response:
        async def body():
            done = False
            try:
                for item in self.items:
                    if isinstance(item, (int, float)) and not isinstance(item, bool):
                        await asyncio.sleep(item)
                    elif isinstance(item, BaseException):
                        raise item
                    else:
                        yield sse(item)
                        self.sent += 1
                done = True
            finally:
                if not done:
                    self.disconnected.set()
                self.closed.set()

        return StreamingResponse(body(), status_code=self.status, media_type=self.content_type)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    peer: int | None = None  # the client's port: the same for two requests on one kept-alive connection


Reply = Any  # list[dict] | bytes | Response | Stream | Callable[[dict], Reply]


class ScriptedAgent:
    """ASGI app: each request gets the next scripted reply (``default`` once they run out)."""

    def __init__(self, *replies: Reply, default: Reply = None) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.default = default if default is not None else echo_run
        self.requests: list[Recorded] = []

    def then(self, *replies: Reply) -> ScriptedAgent:
        self.replies.extend(replies)
        return self

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    async def __call__(self, scope, receive, send) -> None:
        assert scope["type"] == "http", scope["type"]
        request = Request(scope, receive)
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.requests.append(Recorded(request.method, request.url.path, dict(request.headers), body, raw,
                                      request.client.port if request.client else None))
        reply = self.replies.popleft() if self.replies else self.default
        while callable(reply) and not isinstance(reply, (Response, Stream)):
            reply = reply(body)
        await to_response(reply)(scope, receive, send)


def to_response(reply: Reply) -> Response:
    if isinstance(reply, Response):
        return reply
    if isinstance(reply, Stream):
        return reply.response()
    if isinstance(reply, (bytes, str)):
        return Response(reply, media_type=EVENT_STREAM)
    return Response(sse(*reply), media_type=EVENT_STREAM)


# -- servers ---------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop_process(process: subprocess.Popen) -> None:
    """Terminate a server the tests started; kill it if it is still there after 10 s."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def bound_socket(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


@contextmanager
def serve_in_thread(app: Any, sock: socket.socket | None = None, **options: Any) -> Iterator[str]:
    """uvicorn on ``sock`` (default: a fresh ephemeral port) in a daemon thread; yields the base URL.

    ``options``: more of uvicorn's settings (``ssl_certfile``, ``ssl_keyfile``: the URL is still ``http://``).
    """
    import uvicorn

    sock = sock or bound_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="off", log_level="critical", access_log=False, loop="asyncio",
                            timeout_graceful_shutdown=1, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True,
                              name=f"uvicorn-{port}")
    thread.start()
    try:
        for _ in range(1000):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.01)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()



@contextmanager
def serve_server_starter() -> Iterator[str]:
    """The AG-UI server-starter-all-features example (examples/server_starter, vendored; its own import name
    ``example_server``) on a loopback port in this process; yields its base URL."""
    starter = str(Path(__file__).resolve().parents[2] / "examples" / "server_starter")
    sys.path.insert(0, starter)
    try:
        from example_server import app

        with serve_in_thread(app) as url:
            yield url
    finally:
        sys.path.remove(starter)

class RawServer:
    """A bare TCP server: reads one HTTP request per connection, then hands the socket to the
    next handler (``handler(conn)`` writes whatever bytes it likes and may close abruptly)."""

    def __init__(self, *handlers: Callable[[socket.socket], None]) -> None:
        self.handlers = deque(handlers)
        self.sock = bound_socket()
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.requests: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="raw-server")

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(5)
                self.requests.append(_read_request(conn))
                handler = self.handlers.popleft() if self.handlers else _not_found
                with contextlib.suppress(OSError):
                    handler(conn)


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def _not_found(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def chunk(data: bytes) -> bytes:
    """One HTTP/1.1 chunked-transfer chunk."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


SSE_HEAD_CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                    b"Connection: close\r\n\r\n")
SSE_HEAD_UNTIL_CLOSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def reset(conn: socket.socket) -> None:
    """Close with a TCP RST instead of a FIN."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def good_chunked_reply(*events: dict) -> Callable[[socket.socket], None]:
    def handler(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD_CHUNKED + chunk(sse(*events)) + b"0\r\n\r\n")
    return handler
