"""What the benchmarks' raw ASGI agents share: the request body, a JSON answer, a loopback server.

They are raw ASGI apps (no framework between the event loop and the socket) so that the agent's
own CPU stays small next to what is measured.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

__all__ = ["read_body", "send_json", "serve"]


async def read_body(receive: Any) -> bytes:
    """The whole request body."""
    raw = b""
    while True:
        message = await receive()
        raw += message.get("body", b"")
        if not message.get("more_body"):
            return raw


async def send_json(send: Any, body: bytes) -> None:
    """A 200 answer with a JSON body."""
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def serve(app: Any, port: int = 0, **uvicorn_options: Any) -> None:
    """Serve ``app`` with uvicorn on 127.0.0.1 and print ``PORT <n>`` once listening (the parent reads it)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False, **uvicorn_options)
    server = uvicorn.Server(config)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    sys.stdout.flush()
    server.run(sockets=[sock])
