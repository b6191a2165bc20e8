"""``ic.tune_emit``: a tab's update is queued in the caller's task, over a real Socket.IO server and client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
import socketio

import interrupt_chat as ic
from interrupt_chat.workers.emit_tuning import OneTabManager

from .agents import serve_in_thread

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _server(manager: socketio.AsyncManager | None = None) -> socketio.AsyncServer:
    """A server as Reflex makes it (handlers inline), answering ``go`` by emitting to the asker."""
    sio = socketio.AsyncServer(async_mode="asgi", async_handlers=False, client_manager=manager)

    @sio.on("go")
    async def go(sid: str, count: int) -> dict[str, Any]:
        loop_turned = []
        asyncio.get_running_loop().call_soon(loop_turned.append, True)
        await sio.emit("update", {"n": 0}, to=sid)
        suspended = bool(loop_turned)  # the emit gave the loop a turn (a task and a wait) or not
        for n in range(1, count):
            await sio.emit("update", {"n": n}, to=sid)
        await sio.emit("update", ("two", "args"), to=sid)
        return {"suspended": suspended}

    @sio.on("join")
    async def join(sid: str, room: str) -> None:
        await sio.enter_room(sid, room)

    @sio.on("shout")
    async def shout(sid: str, room: str) -> None:
        await sio.emit("shouted", room, room=room)
        await sio.emit("shouted", "all but me", room=room, skip_sid=sid)

    answers: set[asyncio.Task[None]] = set()

    def answered(sid: str, text: str) -> None:  # the handlers run inline: the ack comes after this one returns
        answers.add(task := asyncio.ensure_future(sio.emit("answer", text, to=sid)))
        task.add_done_callback(answers.discard)

    @sio.on("ask")
    async def ask(sid: str) -> None:
        await sio.emit("question", "ready?", to=sid, callback=lambda text: answered(sid, text))

    return sio


@contextmanager
def _served(sio: socketio.AsyncServer) -> Iterator[str]:
    with serve_in_thread(socketio.ASGIApp(sio)) as url:
        yield url


async def _client(url: str) -> tuple[socketio.AsyncClient, asyncio.Queue[tuple[str, Any]]]:
    client = socketio.AsyncClient(reconnection=False)
    received: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    client.on("update", lambda *args: received.put_nowait(("update", args)))
    client.on("shouted", lambda text: received.put_nowait(("shouted", text)))
    client.on("question", lambda text: "yes")
    client.on("answer", lambda text: received.put_nowait(("answer", text)))
    await client.connect(url, transports=["websocket"])
    return client, received


def _tuned(sio: socketio.AsyncServer) -> socketio.AsyncServer:
    ic.tune_emit(SimpleNamespace(sio=sio))  # type: ignore[arg-type]  # what tune_emit reads of an rx.App
    return sio


@pytest.mark.parametrize("tuned", [False, True])
def test_a_tabs_updates_arrive_in_order_and_only_the_tuned_manager_queues_them_without_a_loop_turn(tuned):
    sio = _tuned(_server()) if tuned else _server()
    assert isinstance(sio.manager, OneTabManager) is tuned

    async def scenario() -> None:
        with _served(sio) as url:
            client, received = await _client(url)
            try:
                answer = await client.call("go", 200, timeout=10)
                updates = [await asyncio.wait_for(received.get(), 5) for _ in range(201)]
            finally:
                await client.disconnect()
        assert answer == {"suspended": not tuned}  # the stock manager: a task and a wait per message
        assert [args for _, args in updates[:200]] == [({"n": n},) for n in range(200)]
        assert updates[200] == ("update", ("two", "args"))  # a tuple is several arguments, as socketio has it

    asyncio.run(scenario())


def test_rooms_skipped_sids_and_callbacks_go_the_stock_way():
    sio = _tuned(_server())

    async def scenario() -> None:
        with _served(sio) as url:
            (first, got_first), (second, got_second) = await _client(url), await _client(url)
            try:
                for client in (first, second):
                    await client.call("join", "team", timeout=5)
                await first.emit("shout", "team")
                assert await asyncio.wait_for(got_first.get(), 5) == ("shouted", "team")
                assert [await asyncio.wait_for(got_second.get(), 5) for _ in range(2)] == [
                    ("shouted", "team"), ("shouted", "all but me")]
                await first.emit("ask")
                assert await asyncio.wait_for(got_first.get(), 5) == ("answer", "yes")  # the ack came back
                await asyncio.sleep(0.2)
                assert got_first.empty()  # skipped
            finally:
                await first.disconnect()
                await second.disconnect()

    asyncio.run(scenario())


def test_a_server_with_its_own_or_a_used_manager_is_left_alone():
    class QueueManager(socketio.AsyncManager):
        """Stands for a message queue's manager (AsyncRedisManager and the like)."""

    own = _tuned(_server(QueueManager()))
    assert type(own.manager) is QueueManager
    used = _server()
    used.manager_initialized = True  # a tab connected already: its rooms are in the stock manager
    assert type(_tuned(used).manager) is socketio.AsyncManager
    twice = _tuned(_tuned(_server()))
    assert isinstance(twice.manager, OneTabManager) and twice.manager.server is twice


def test_an_app_without_its_socket_server_yet_gets_the_manager_at_startup():
    tasks: list[Any] = []
    app = SimpleNamespace(sio=None, register_lifespan_task=tasks.append)
    ic.tune_emit(app)  # type: ignore[arg-type]
    assert len(tasks) == 1
    app.sio = _server()
    tasks[0](app)  # Reflex calls a lifespan function with the app
    assert isinstance(app.sio.manager, OneTabManager)
