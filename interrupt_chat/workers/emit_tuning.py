"""Socket.IO's emit to one tab, without a task and a wait per message.

Every update Reflex sends goes through ``socketio.AsyncManager.emit``. It creates a task for each
recipient and waits for them all, also when there is one recipient, as there always is for a tab's
update. On a busy worker that costs twice what the send does: the task waits for its turn behind
everything ready on the event loop, then the waiter waits for its own turn again. A run's push
stood still for two such turns, and its stream with it: at 500 chats on one worker, a streamed
text's push took 550–660 ms (p50) before this, 50–140 ms after (docs/decisions/0023).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import socketio
from engineio import packet as eio_packet
from socketio import packet

if TYPE_CHECKING:
    import reflex as rx

__all__ = ["OneTabManager", "tune_emit"]

log = logging.getLogger(__name__)


class OneTabManager(socketio.AsyncManager):
    """``socketio.AsyncManager`` that queues a message for a single recipient in the caller's task.

    The packet is encoded once and queued on the recipient's socket, as the stock manager's task
    would do; the socket's own writer sends it. Several recipients, a skipped one, or an
    acknowledgement callback go the stock way.
    """

    async def emit(self, event: str, data: Any, namespace: str, room: Any = None, skip_sid: Any = None,
                   callback: Any = None, to: Any = None, **kwargs: Any) -> None:
        """Send ``event`` with ``data`` as the stock manager does; to one recipient, from this task."""
        room = to or room
        recipient = self._only_recipient(namespace, room) if callback is None and skip_sid is None else None
        if recipient is None:
            await super().emit(event, data, namespace, room=room, skip_sid=skip_sid, callback=callback, **kwargs)
            return
        args = list(data) if isinstance(data, tuple) else [] if data is None else [data]
        encoded = self.server.packet_class(packet.EVENT, namespace=namespace, data=[event, *args]).encode()
        for part in encoded if isinstance(encoded, list) else [encoded]:  # binary data comes in several parts
            await self.server.eio.send_packet(recipient, eio_packet.Packet(eio_packet.MESSAGE, part))

    def _only_recipient(self, namespace: str, room: Any) -> str | None:
        """The Engine.IO session of the room's one participant, or None (several, none, or a list of rooms)."""
        if not isinstance(room, str) or namespace not in self.rooms:
            return None
        participants = list(self.get_participants(namespace, room))
        return participants[0][1] if len(participants) == 1 else None


def tune_emit(app: rx.App) -> None:
    """Give the app's Socket.IO server a manager that sends a tab's updates in the caller's task.

    Call it once, on the app (``ic.tune_emit(app)``), before it serves. A server with another
    manager (a message queue's, for several servers) is left alone, with a log line.
    """
    sio = app.sio
    if sio is None:  # the socket server comes with the state, which this app has not enabled yet
        app.register_lifespan_task(_install)
        return
    _install(app)


def _install(app: rx.App) -> None:
    sio = app.sio
    if sio is None or isinstance(sio.manager, OneTabManager):
        return
    if type(sio.manager) is not socketio.AsyncManager or sio.manager_initialized:
        log.info("tune_emit: the Socket.IO server has its own manager (%s): left as it is",
                 type(sio.manager).__name__)
        return
    manager = OneTabManager()
    manager.set_server(sio)
    sio.manager = manager
