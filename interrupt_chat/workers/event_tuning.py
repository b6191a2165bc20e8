"""A person's decision holds the other chats' streams from the moment the worker reads it.

A click's event goes from the socket to Reflex's event queue, then to a task of its own, before its
handler runs and opens its hold (docs/decisions/0037). On a worker busy with other chats' streams
each of those steps waits its turn on the event loop: 50 ms at the median beside 300 streaming chats
on the benchmark's host, 90 ms at p95. ``ic.tune_events(app)`` opens the hold as the event is read
(:func:`interrupt_chat.workers.lane.arrive`), keyed by the socket's tab token, for the events whose
handler is a decision (:data:`interrupt_chat.workers.lane.DECISIONS`); the handler takes it over.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from . import lane

if TYPE_CHECKING:
    import reflex as rx

__all__ = ["tune_events"]

log = logging.getLogger(__name__)

_TUNED = "_interrupt_chat_first"  # set on a namespace whose on_event opens the holds


def tune_events(app: rx.App) -> None:
    """Open a person's hold as soon as the worker reads a decision's event (docs/decisions/0037).

    Call it once, on the app (``ic.tune_events(app)``), before it serves. Calling it again does nothing.
    """
    if getattr(app, "event_namespace", None) is None:  # the namespace comes with the state, not enabled yet
        app.register_lifespan_task(_install)
        return
    _install(app)


def _install(app: rx.App) -> None:
    namespace = app.event_namespace
    if namespace is None:
        log.info("tune_events: the app has no event namespace (no state): nothing to tune")
        return
    if getattr(namespace, _TUNED, False):
        return
    on_event = namespace.on_event  # python-socketio dispatches "event" to the namespace's attribute on_event

    async def arrived(sid: str, data: Any) -> None:
        """A decision's event opens its tab's hold, then Reflex takes the event as before."""
        if isinstance(data, dict):
            name = data.get("name")
            if isinstance(name, str) and name.rpartition(".")[2] in lane.DECISIONS:
                token = namespace.sid_to_token.get(sid)
                if isinstance(token, str):
                    lane.arrive(token)
        await on_event(sid, data)

    namespace.on_event = arrived  # type: ignore[method-assign]  # (an instance attribute: this namespace only)
    setattr(namespace, _TUNED, True)
