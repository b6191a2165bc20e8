"""Denial of service and logs (issue 38 §5): a decompression bomb from the agent, the demo agent's
records routes on a public site, and client text in log lines.

The bomb is served by a real loopback server (``RawServer``: exact bytes on a TCP socket); the
client's memory is measured with ``tracemalloc`` while it reads.
"""

from __future__ import annotations

import gzip
import logging
import time
import tracemalloc
import zlib
from typing import Any

import httpx
import pytest
import reflex as rx
from reflex.istate.data import SessionData

from interrupt_chat.agui import AgentClient
from interrupt_chat.agui.errors import AgentStreamError
from interrupt_chat.agui.transport import MAX_EVENT_CHARS
from interrupt_chat.demo.agent import create_app
from interrupt_chat.demo.agent.store import DemoStore
from interrupt_chat.tab.page_check import PageCheck
from tests.unit.agents import RawServer, finished, sse, started

pytestmark = pytest.mark.loopback

BOMB_BYTES = 300 * 1024 * 1024  # what the bomb inflates to
RUN_INPUT = {"threadId": "t1", "runId": "r1", "state": {}, "messages": [], "tools": [], "context": [],
             "forwardedProps": {}}


def _gzip_bomb(size: int = BOMB_BYTES) -> bytes:
    """``data: aaaa…`` (one event that never ends) gzipped: about 300 kB that inflate to ``size`` bytes.

    Built from one compressed megabyte repeated: after a full flush deflate starts afresh, so each
    megabyte of ``a`` compresses to the same bytes (the whole stream still checks: CRC and length).
    """
    block = b"a" * (1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    head = deflate.compress(b"data: ") + deflate.flush(zlib.Z_FULL_FLUSH)
    one = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    count = size // len(block)
    crc = zlib.crc32(b"data: ")
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    total = len(b"data: ") + count * len(block)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + head + one * count + deflate.flush()
            + crc.to_bytes(4, "little") + (total & 0xFFFFFFFF).to_bytes(4, "little"))


def _reply(body: bytes, encoding: str = "gzip"):
    def write(conn) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: " + encoding.encode()
                     + b"\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body)
    return write


async def _run(url: str) -> list[Any]:
    return [event async for event in AgentClient(url).run(RUN_INPUT)]


# -- decompression bombs -----------------------------------------------------------------------------------

def test_the_bomb_is_a_bomb():
    bomb = _gzip_bomb(8 * 1024 * 1024)
    assert len(bomb) < 20_000 and len(gzip.decompress(bomb)) == 8 * 1024 * 1024 + len(b"data: ")


async def test_a_gzip_bomb_fails_the_run_without_inflating_it():
    body = _gzip_bomb()
    assert len(body) < 400_000
    with RawServer(_reply(body)) as server:
        tracemalloc.start()
        try:
            started_at = time.monotonic()
            with pytest.raises(AgentStreamError, match="larger than"):
                await _run(server.url)
            elapsed = time.monotonic() - started_at
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    # before: about 280 MB traced (each network read inflated whole); now the event being framed and a piece
    assert peak < 2 * MAX_EVENT_CHARS + 8 * 1024 * 1024, f"{peak / 1e6:.0f} MB"
    assert elapsed < 10


async def test_compressed_streams_still_read():
    events = sse(started(), finished())
    with RawServer(_reply(gzip.compress(events)), _reply(zlib.compress(events), "deflate"),
                   _reply(zlib.compress(events)[2:-4], "deflate")) as server:
        for _ in range(3):  # gzip, deflate (zlib-wrapped), deflate (raw, as some servers send it)
            assert [e.type for e in await _run(server.url)] == ["RUN_STARTED", "RUN_FINISHED"]
        assert b"accept-encoding: gzip, deflate" in server.requests[0].lower()


async def test_an_encoding_it_cannot_bound_or_a_broken_one_fails_clearly():
    events = sse(started(), finished())
    with RawServer(_reply(events, "br"), _reply(b"\x1f\x8b not gzip at all")) as server:
        with pytest.raises(AgentStreamError, match="content-encoding this client does not read"):
            await _run(server.url)
        with pytest.raises(AgentStreamError, match="does not inflate"):
            await _run(server.url)


# -- the demo agent's records ------------------------------------------------------------------------------

async def _get(app, path: str, method: str = "GET", **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://demo") as client:
        return await client.request(method, path, headers=headers)


async def test_the_demo_agents_records_are_not_served_unless_asked_for(monkeypatch):
    monkeypatch.delenv("INTERRUPT_CHAT_DEMO_RECORDS", raising=False)
    monkeypatch.delenv("INTERRUPT_CHAT_DEMO_RECORDS_TOKEN", raising=False)
    app = create_app(delay=0.0)  # what the demo site mounts
    app.state.store.note("t1", "r1", "a visitor's remark")
    for path, method in (("/records", "GET"), ("/records", "DELETE"), ("/notes", "GET")):
        assert (await _get(app, path, method)).status_code in (404, 405), path  # before: 200, everyone's
    assert app.state.store.notes() != []  # nothing was forgotten
    monkeypatch.setenv("INTERRUPT_CHAT_DEMO_RECORDS", "1")  # a test's flag
    assert (await _get(create_app(delay=0.0), "/records")).json() == []


async def test_the_demo_agents_records_token(monkeypatch):
    monkeypatch.setenv("INTERRUPT_CHAT_DEMO_RECORDS_TOKEN", "s3cret-token")
    app = create_app(delay=0.0)
    assert (await _get(app, "/records")).status_code == 401
    assert (await _get(app, "/records", authorization="Bearer wrong")).status_code == 401
    assert (await _get(app, "/notes", authorization="Bearer s3cret-token")).status_code == 200
    assert (await _get(app, "/records", "DELETE")).status_code == 401
    assert (await _get(app, "/records", "DELETE", authorization="Bearer s3cret-token")).json() == {"ok": True}


def test_the_demo_store_keeps_the_last_records_only():
    from ag_ui.core import RunAgentInput

    store = DemoStore()
    for n in range(1500):  # before: every input, forever
        store.record(RunAgentInput.model_validate({**RUN_INPUT, "threadId": f"t{n}", "runId": f"r{n}"}))
        store.note(f"t{n}", f"r{n}", "remark")
    records = store.records()
    assert len(records) == 1000 and records[-1]["threadId"] == "t1499" and records[0]["threadId"] == "t500"
    assert len(store.notes()) == 1000
    small = DemoStore(max_threads=3)
    for n in range(5):
        small.thread(f"t{n}")
    assert list(small.threads) == ["t2", "t3", "t4"]


# -- client text in logs -----------------------------------------------------------------------------------

def test_a_page_check_name_cannot_forge_a_log_line(caplog):
    root = rx.State()
    root.rx_router_session = SessionData(client_token="sec-dos-tab", client_ip="", session_id="sec-dos-tab")
    check = root.get_substate(PageCheck.get_full_name().split("."))
    forged = "no.such.state\nCRITICAL interrupt_chat: admin logged in from 10.0.0.1"
    with caplog.at_level(logging.WARNING, logger="interrupt_chat"):
        PageCheck.check.fn(check, [forged])
    assert check.stale is True
    lines = [line for record in caplog.records for line in record.getMessage().splitlines()]
    assert not any(line.startswith("CRITICAL") for line in lines), lines  # before: the forged line stood alone
    assert repr(forged) in caplog.text
    PageCheck.check.fn(check, "not a list")  # any argument: no crash, no question
    PageCheck.check.fn(check, ["x" * 100_000] * 10_000)
    assert all(len(record.getMessage()) < 1_000 for record in caplog.records)
