"""The agent's connections are kept alive (``shared_transport``: one pool per event loop).

Over real loopback sockets: the server tells a reused connection by its peer port. A run that is
stopped, fails mid-stream or meets a connection the agent closed leaves nothing broken behind.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess

import pytest
from ag_ui.core import EventType

from interrupt_chat.agui import AgentClient, AgentStreamError, AgentTimeoutError, RunCancelled
from interrupt_chat.agui.aiohttp_transport import AiohttpTransport, shared_transport
from interrupt_chat.agui.transport import _ssl_context
from tests.unit.agents import (
    RawServer,
    ScriptedAgent,
    Stream,
    chunk,
    finished,
    serve_in_thread,
    simple_run,
    sse,
    started,
)
from tests.unit.test_transport import assert_usable, collect, make_input

pytestmark = pytest.mark.loopback

# an answer that leaves the connection open for another request (no "Connection: close")
SSE_HEAD_KEEP_ALIVE = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def _peers(agent: ScriptedAgent) -> list[int | None]:
    return [request.peer for request in agent.requests]


async def test_consecutive_runs_reuse_one_connection(loopback):
    agent = ScriptedAgent()
    client = AgentClient(loopback.mount(agent))
    for run_id in ("r1", "r2", "r3"):
        await assert_usable(client, run_id)
    first, *rest = _peers(agent)
    assert first is not None and rest == [first, first]


async def test_a_run_stopped_mid_stream_does_not_poison_the_next(loopback):
    long = Stream([started("long"), 30.0, finished("long")])
    agent = ScriptedAgent(long)
    client = AgentClient(loopback.mount(agent))
    run = client.run(make_input("long"))
    events = aiter(run)
    assert (await anext(events)).type == EventType.RUN_STARTED
    run.cancel()  # the stop button, mid-stream
    with pytest.raises(RunCancelled):
        await anext(events)
    assert await asyncio.to_thread(long.disconnected.wait, 5)  # the agent saw the connection close
    await assert_usable(client, "after-stop")
    await assert_usable(client, "again")
    stopped, after, again = _peers(agent)
    assert after != stopped and again == after  # the stopped run's connection was closed, not pooled


async def test_a_stream_that_fails_mid_way_does_not_poison_the_next(loopback):
    broken = Stream([started("bad"), b"data: {not json\n\n", 30.0, finished("bad")])
    agent = ScriptedAgent(broken)
    client = AgentClient(loopback.mount(agent))
    with pytest.raises(AgentStreamError):
        await collect(client, "bad")
    assert await asyncio.to_thread(broken.disconnected.wait, 5)
    await assert_usable(client, "after-failure")
    failed, after = _peers(agent)
    assert after != failed


async def test_the_read_timeout_holds_on_a_reused_connection(loopback):
    stalled = Stream([started("stalled"), 30.0, finished("stalled")])
    agent = ScriptedAgent(simple_run("r1"), stalled)
    client = AgentClient(loopback.mount(agent), read_timeout=0.3)
    await assert_usable(client, "r1")
    with pytest.raises(AgentTimeoutError):
        await collect(client, "stalled")
    await assert_usable(client, "after-timeout")
    first, timed_out, after = _peers(agent)
    assert timed_out == first and after != timed_out  # the stalled run had the first's connection, then closed it


def _answer_then_close(conn: socket.socket) -> None:
    """A complete answer that keeps the connection, closed at once all the same (RawServer closes it)."""
    conn.sendall(SSE_HEAD_KEEP_ALIVE + chunk(sse(started("r1"), finished("r1"))) + b"0\r\n\r\n")


def _answer_then_close_on_the_next_request(conn: socket.socket) -> None:
    """The close races the reuse: the next request arrives and the agent closes without answering it."""
    conn.sendall(SSE_HEAD_KEEP_ALIVE + chunk(sse(started("r2"), finished("r2"))) + b"0\r\n\r\n")
    conn.recv(65536)


def _answer(conn: socket.socket) -> None:
    conn.sendall(SSE_HEAD_KEEP_ALIVE + chunk(sse(started("r3"), finished("r3"))) + b"0\r\n\r\n")


async def test_an_agent_that_closes_its_connections_gets_new_ones():
    with RawServer(_answer_then_close, _answer_then_close_on_the_next_request, _answer) as server:
        client = AgentClient(server.url, connect_timeout=5, read_timeout=5)
        for run_id in ("r1", "r2", "r3"):  # r3 is sent on r2's connection, closed under it: sent again
            events = await collect(client, run_id)
            assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
            assert events[0].run_id == run_id
        assert len(server.requests) == 3  # one connection each (a request read on a closed one is not counted)


def test_each_loop_has_a_pool_of_its_own_closed_as_the_loop_ends(loopback):
    agent = ScriptedAgent()
    url = loopback.mount(agent)

    async def one_run():
        await assert_usable(AgentClient(url))
        transport = shared_transport(_ssl_context())
        assert transport._session is not None and not transport._session.closed
        return transport

    first, second = asyncio.run(one_run()), asyncio.run(one_run())
    assert first is not second and first._session is None and second._session is None  # closed with the loop
    assert _peers(agent)[0] != _peers(agent)[1]


async def test_tls_connections_are_kept_alive_too(tmp_path):
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl to make a certificate with")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    agent = ScriptedAgent()
    with serve_in_thread(agent, ssl_certfile=str(cert), ssl_keyfile=str(key)) as base:
        wire = AiohttpTransport(ssl.create_default_context(cafile=str(cert)))  # the shared pool's kind, trusting it
        client = AgentClient(base.replace("http://", "https://") + "/", transport=wire)
        try:
            for run_id in ("r1", "r2"):
                await assert_usable(client, run_id)
        finally:
            await wire.aclose()
    first, second = _peers(agent)
    assert first is not None and second == first
