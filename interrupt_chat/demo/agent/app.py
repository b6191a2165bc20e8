"""HTTP surface of the demo agent (a Starlette app; mount it anywhere, e.g. under ``/demo-agent``).

Routes, relative to the mount point:

- ``POST /``          ``RunAgentInput`` JSON → SSE stream of AG-UI events (422 ``{"error"}`` if invalid)
- ``GET /health``     ``{"ok": true}``

For tests only, and only when asked for (``create_app(records=True)``, ``INTERRUPT_CHAT_DEMO_RECORDS=1``,
or a token in ``INTERRUPT_CHAT_DEMO_RECORDS_TOKEN`` that each request must then carry as
``Authorization: Bearer <token>``):

- ``GET /records``    the inputs received so far, in order (``?threadId=`` filters); secret payload
                      fields are stored as ``<redacted:N>``
- ``DELETE /records`` forget records, notes and all thread state
- ``GET /notes``      protocol remarks about received inputs (e.g. an unexpected ``parentRunId``)

They are not served otherwise: on the demo site they would give any visitor every other visitor's
messages and files, and let anyone forget the threads that open approvals wait on. The store keeps
the last :data:`~.store.MAX_RECORDS` inputs and notes (in-process tests read it as ``app.state.store``).

Request bodies and payloads are never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
from collections.abc import AsyncIterator, Generator

import anyio
from ag_ui.core import BaseEvent, RunAgentInput
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .context import DEFAULT_DELAY, DEFAULT_EXPIRES_IN, DemoConfig
from .events import DELTA_EVENT_TYPES
from .runner import run_agent
from .store import DemoStore

__all__ = ["RECORDS_ENV", "RECORDS_TOKEN_ENV", "create_app"]

RECORDS_ENV = "INTERRUPT_CHAT_DEMO_RECORDS"  # "1": serve /records and /notes (tests on loopback)
RECORDS_TOKEN_ENV = "INTERRUPT_CHAT_DEMO_RECORDS_TOKEN"  # set: serve them, to this bearer token only

_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def create_app(delay: float = DEFAULT_DELAY, expires_in: float = DEFAULT_EXPIRES_IN, *,
               records: bool | None = None, records_token: str | None = None) -> Starlette:
    """The demo agent app.

    ``delay``: seconds slept before each streamed delta (0 in tests).
    ``expires_in``: lifetime in seconds of the ``expiring`` scenario's interrupt.
    ``records``: serve ``/records`` and ``/notes`` (default: ``INTERRUPT_CHAT_DEMO_RECORDS=1``).
    ``records_token``: serve them to this bearer token only (default: ``INTERRUPT_CHAT_DEMO_RECORDS_TOKEN``).
    The store is exposed as ``app.state.store`` for in-process tests.
    """
    if records is None:
        records = os.environ.get(RECORDS_ENV, "").strip() == "1"
    if records_token is None:
        records_token = os.environ.get(RECORDS_TOKEN_ENV, "").strip() or None
    handlers = _Handlers(DemoStore(), DemoConfig(delay=delay, expires_in=expires_in), records_token)
    routes = [Route("/", handlers.run, methods=["POST"]), Route("/health", handlers.health, methods=["GET"])]
    if records or records_token:
        routes += [Route("/records", handlers.records, methods=["GET"]),
                   Route("/records", handlers.clear_records, methods=["DELETE"]),
                   Route("/notes", handlers.notes, methods=["GET"])]
    app = Starlette(routes=routes)
    app.state.store = handlers.store
    app.state.config = handlers.config
    return app


class _Handlers:
    def __init__(self, store: DemoStore, config: DemoConfig, token: str | None = None) -> None:
        self.store = store
        self.config = config
        self._token = token

    def _refused(self, request: Request) -> Response | None:
        """401 unless the request carries the records token (when one is set)."""
        if self._token is None:
            return None
        given = request.headers.get("authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {self._token}".encode()):
            return None
        return JSONResponse({"error": "a bearer token is required"}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    async def run(self, request: Request) -> Response:
        try:
            body = RunAgentInput.model_validate(json.loads(await request.body()))
        except ValueError as exc:  # invalid JSON, or a pydantic ValidationError (a ValueError)
            return _invalid_input(exc)
        self.store.record(body)
        events = run_agent(body, self.store, self.config)
        return _SSEResponse(
            self._sse(events, body.run_id), media_type=EventEncoder().get_content_type(), headers=_SSE_HEADERS
        )

    async def _sse(self, events: Generator[BaseEvent, None, None], run_id: str) -> AsyncIterator[str]:
        """Encode ``events``, pausing before each delta; stops when the client goes away (cancellation)."""
        encoder = EventEncoder()
        self.store.active_runs.add(run_id)
        try:
            for event in events:
                if event.type in DELTA_EVENT_TYPES:
                    await asyncio.sleep(self.config.delay)
                yield encoder.encode(event)
        finally:
            self.store.active_runs.discard(run_id)
            events.close()

    async def records(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        return JSONResponse(self.store.records(request.query_params.get("threadId")))

    async def clear_records(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        self.store.clear()
        return JSONResponse({"ok": True})

    async def notes(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        return JSONResponse(self.store.notes(request.query_params.get("threadId")))

    async def health(self, request: Request) -> Response:
        return JSONResponse({"ok": True})


class _SSEResponse(StreamingResponse):
    """A streaming response that is cancelled as soon as the client disconnects.

    Starlette only listens for ``http.disconnect`` when the server announces ASGI spec < 2.4
    (uvicorn and granian announce 2.3); with 2.4 it waits for ``send`` to raise, which uvicorn
    never does, so a long run would stream into the void. This listens whatever the version.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def stream() -> None:
                with contextlib.suppress(OSError):  # the client went away (how ASGI 2.4 servers report it)
                    await self.stream_response(send)
                group.cancel_scope.cancel()

            group.start_soon(stream)
            await self.listen_for_disconnect(receive)
            group.cancel_scope.cancel()


def _invalid_input(exc: ValueError) -> JSONResponse:
    """422 without echoing any input value (payloads may hold secrets)."""
    if isinstance(exc, ValidationError):
        details = exc.errors(include_url=False, include_input=False, include_context=False)
        content = {"error": f"invalid RunAgentInput ({exc.error_count()} errors)", "details": details}
    else:
        content = {"error": "request body is not valid JSON"}
    return JSONResponse(content, status_code=422)
