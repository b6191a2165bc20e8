"""Helpers shared by the interop tests that drive a real AG-UI producer through the protocol core.

:func:`open_session` gives an ``AgentSession`` whose requests go over the production wire (``AiohttpTransport``,
a real loopback socket) and are kept as the JSON bodies the core sent; :func:`producer_fixture` runs
``examples/<name>/server.py`` from its venv for a test module; ``drain``, ``types``, ``assistant_texts``,
``last_assistant_text``, ``assert_clean`` and ``interrupted`` read a session's runs. ``STEPS``, ``PLAN`` and
``CHOSEN`` are the frontend tool every example producer's script calls, its arguments and a typical answer.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import AsyncIterator, Collection, Iterable, Iterator
from typing import Any, NamedTuple

import httpx
import pytest
from ag_ui.core import BaseEvent, EventType

from interrupt_chat.agui import AgentClient, AgentSession
from interrupt_chat.agui.aiohttp_transport import AiohttpTransport
from interrupt_chat.agui.frontend_tools import FrontendTool
from tests.producers import producer_server

Body = dict[str, Any]

APPROVE, REJECT = {"approved": True}, {"approved": False}
DELETE_ARGS = {"path": "/tmp/demo", "count": 3}  # what every example's script calls delete_files with
TIMEOUT = 60.0  # per read; a run takes well under a second, the margin is for a loaded 2-core box

STEPS = FrontendTool(
    name="generate_task_steps", description="Ask the person to pick the steps to run.",
    parameters={"type": "object", "required": ["steps"], "properties": {"steps": {"type": "array", "items": {
        "type": "object", "required": ["description", "status"],
        "properties": {"description": {"type": "string"}, "status": {"enum": ["enabled", "disabled"]}}}}}})
PLAN = {"steps": [{"description": "Back up the files", "status": "enabled"},
                  {"description": "Delete the temp folder", "status": "enabled"},
                  {"description": "Email the team", "status": "enabled"}]}
CHOSEN = {"steps": [{**PLAN["steps"][0]}, {**PLAN["steps"][1], "status": "disabled"}, {**PLAN["steps"][2]}]}


@functools.cache
def _tls() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class RecordingTransport(httpx.AsyncBaseTransport):
    """The production wire (aiohttp on a real socket), one session per request, closed with its response;
    each request's JSON body is appended to ``bodies`` first."""

    def __init__(self, bodies: list[Body]) -> None:
        self.bodies = bodies

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(await request.aread()))
        wire = AiohttpTransport(_tls())
        response = await wire.handle_async_request(request)
        return httpx.Response(response.status_code, headers=response.headers, request=request,
                              stream=_ClosingWire(response.stream, wire), extensions=response.extensions)


class _ClosingWire(httpx.AsyncByteStream):
    """A response body that closes its request's aiohttp session when it is closed."""

    def __init__(self, body: Any, wire: AiohttpTransport) -> None:
        self._body, self._wire = body, wire

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._body:
            yield chunk

    async def aclose(self) -> None:
        await self._body.aclose()
        await self._wire.aclose()


class RecordedSession(NamedTuple):
    """A session and the request bodies its core sent, oldest first (``session, bodies = open_session(url)``)."""

    session: AgentSession
    bodies: list[Body]

    @property
    def last_body(self) -> Body:
        return self.bodies[-1]


def open_session(url: str, tools: list[FrontendTool] | None = None) -> RecordedSession:
    """A new thread on the agent at ``url``, declaring ``tools``, recording what the core sends."""
    bodies: list[Body] = []
    # one recording transport for every run of the thread (the caller owns a transport it passes)
    client = AgentClient(url, connect_timeout=TIMEOUT, read_timeout=TIMEOUT, transport=RecordingTransport(bodies))
    return RecordedSession(AgentSession(client, tools=tools), bodies)


def producer_fixture(name: str, path: str = "/") -> Any:
    """A module-scoped fixture named ``name``: ``examples/<name>/server.py`` running; its value is base URL + path."""

    @pytest.fixture(scope="module", name=name)
    def running() -> Iterator[str]:
        with producer_server(name) as base_url:
            yield base_url + path

    return running


async def drain(events: AsyncIterator[BaseEvent]) -> list[BaseEvent]:
    return [event async for event in events]


def types(events: Iterable[BaseEvent], skip: Collection[EventType] = ()) -> list[str]:
    """The events' type names, leaving out the ``skip`` types."""
    return [e.type.value for e in events if e.type not in skip]


def assistant_texts(session: AgentSession) -> list[str]:
    return [m.content for m in session.transcript.messages if m.role == "assistant" and m.content]


def last_assistant_text(session: AgentSession) -> str:
    texts = assistant_texts(session)
    assert texts, "no assistant text in the transcript"
    return texts[-1]


def assert_clean(session: AgentSession) -> None:
    assert session.error is None, session.error
    assert session.transcript.status == "finished"


async def interrupted(session: AgentSession, text: str) -> list[BaseEvent]:
    """Send ``text``; the run must finish cleanly with an interrupt pending."""
    events = await drain(session.send(text))
    assert_clean(session)
    assert session.tracker.pending is not None, types(events)
    return events
