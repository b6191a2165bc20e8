"""``ic.tune_events``: a decision's event opens its tab's hold as the worker reads it (decision 0037).

Over a real Socket.IO server and client: a namespace shaped as Reflex's (``sid_to_token``, ``on_event``)
sees, when its ``on_event`` runs, whether the other chats' streams are stopped.
"""

from __future__ import annotations

import asyncio
import contextvars
from types import SimpleNamespace
from typing import Any

import pytest
import socketio
from reflex.app import EventNamespace

import interrupt_chat as ic
from interrupt_chat.workers import lane

from .agents import serve_in_thread

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Namespace(socketio.AsyncNamespace):
    """Reflex's event namespace as the tuning reads it: the socket's tab token, and ``on_event``."""

    def __init__(self) -> None:
        super().__init__("/_event")
        self.sid_to_token: dict[str, str] = {}
        self.seen: list[tuple[str, bool, bool]] = []  # (event name, streams stopped, its handler's hold taken over)

    async def on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        self.sid_to_token[sid] = f"token-{len(self.sid_to_token)}"

    async def on_event(self, sid: str, data: Any) -> None:
        stopped = contextvars.Context().run(lane.blocked)  # what another chat's stream sees now
        if stopped is not None:
            stopped.cancel()
        name = str(data.get("name") if isinstance(data, dict) else data)
        taken = False
        if name.rpartition(".")[2] in lane.DECISIONS:  # the handler, as answers.answer opens its hold
            with lane.first(self.sid_to_token[sid]) as hold:
                taken = hold.open and stopped is not None
        self.seen.append((name, stopped is not None, taken))

    async def on_seen(self, sid: str) -> list[tuple[str, bool, bool]]:
        return self.seen


def test_a_decisions_event_stops_the_streams_before_reflex_takes_it_and_its_handler_takes_the_hold_over(
        monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    sio = socketio.AsyncServer(async_mode="asgi", async_handlers=False)
    sio.register_namespace(namespace := Namespace())
    ic.tune_events(SimpleNamespace(event_namespace=namespace))  # type: ignore[arg-type]  # what it reads of rx.App
    ic.tune_events(SimpleNamespace(event_namespace=namespace))  # type: ignore[arg-type]  # twice: once

    async def scenario() -> list[Any]:
        with serve_in_thread(socketio.ASGIApp(sio)) as url:
            client = socketio.AsyncClient(reconnection=False)
            await client.connect(url, transports=["websocket"], namespaces=["/_event"])
            try:
                for name in ("state.chat.send_text", "state.config.resolve", "state.config.cancel",
                             "state.inbox.inbox_resolve", "state.config.resolve"):
                    await client.emit("event", {"name": name, "payload": {}}, namespace="/_event")
                await client.emit("event", "not a dict", namespace="/_event")
                return await client.call("seen", namespace="/_event", timeout=10)
            finally:
                await client.disconnect()

    seen = asyncio.run(scenario())
    assert [tuple(s) for s in seen] == [
        ("state.chat.send_text", False, False),  # not a decision: nothing stops
        ("state.config.resolve", True, True),  # stopped on arrival, the hold is the handler's
        ("state.config.cancel", False, False),  # the same tab within its gap: stops nobody
        ("state.inbox.inbox_resolve", False, False),
        ("state.config.resolve", False, False),
        ("not a dict", False, False),
    ]


def test_an_app_without_its_namespace_yet_is_tuned_at_startup_and_reflexs_namespace_has_what_it_reads():
    tasks: list[Any] = []
    app = SimpleNamespace(event_namespace=None, register_lifespan_task=tasks.append)
    ic.tune_events(app)  # type: ignore[arg-type]
    assert len(tasks) == 1
    app.event_namespace = namespace = Namespace()
    tasks[0](app)  # Reflex calls a lifespan function with the app
    assert namespace.on_event.__name__ == "arrived"


def test_the_demo_sites_reflex_namespace_is_tuned_and_has_what_the_tuning_reads():
    from interrupt_chat.demo import site  # (the app module: its App is the process's one)

    namespace = site.app.event_namespace
    assert isinstance(namespace, EventNamespace) and namespace.on_event.__name__ == "arrived"
    assert isinstance(namespace.sid_to_token, dict)
    assert asyncio.iscoroutinefunction(EventNamespace.on_event)


def test_every_decision_name_is_a_handler_of_the_chat_or_its_card_config():
    """A renamed handler would silently lose its early hold: the names are the real ones."""
    chat = ic.Chat("http://127.0.0.1:9/", name="tuning-names").state
    handlers = set(chat.event_handlers) | set(chat.default_config.event_handlers)
    assert handlers >= lane.DECISIONS, lane.DECISIONS - handlers
