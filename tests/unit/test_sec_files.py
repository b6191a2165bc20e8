"""Issue 38 §3: what an upload may cost, how long an unsent file lives, and whose files a run may send.

The upload route is Reflex's own endpoint factory (wrapped by :mod:`interrupt_chat.tab.attaching`) served by
uvicorn on a loopback port; the chat through a tab of the multi-tab harness against the demo agent.
"""

from __future__ import annotations

import base64
import io
import select
import socket
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import reflex as rx
from ag_ui.core import MessagesSnapshotEvent, TextInputContent, UserMessage
from PIL import Image
from reflex_base.registry import RegistrationContext
from sqlalchemy import select as sql_select
from sqlalchemy import update
from starlette.applications import Starlette
from starlette.routing import Route

import interrupt_chat as ic
from interrupt_chat.agui import AgentSession, multimodal
from interrupt_chat.model.files import MAX_IMAGE_PIXELS, Attachments, StoredFile, refusal, thumbnail
from interrupt_chat.model.views import attachment_rows
from interrupt_chat.store import files as store
from interrupt_chat.store.schema import files_table
from interrupt_chat.tab import attaching
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

MB = 1024 * 1024
pytestmark = pytest.mark.loopback


def png(width: int, height: int, mode: str = "1") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height)).save(out, "PNG")
    return out.getvalue()


def upload(name: str, data: bytes) -> rx.UploadFile:
    return rx.UploadFile(file=io.BytesIO(data), path=Path(name))


def rss() -> int:
    """This process's resident memory now, in bytes (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    limits = ic.Attachments(max_file_bytes=1 * MB, max_message_bytes=2 * MB, max_files=3)
    return ic.Chat(agent[0], name="secfiles", attachments=limits)


@pytest.fixture(scope="module")
def big_chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="secfiles_default")  # the default limits: 10 MB a file


def owned(database, tab_or_owner: Tab | str) -> list[str]:
    """The stored file ids of a tab's person (its database key), or of an owner key."""
    owner = tab_or_owner.chat._owner_key if isinstance(tab_or_owner, Tab) else tab_or_owner
    with database.engine.connect() as conn:
        return [r.file_id for r in conn.execute(sql_select(files_table.c.file_id).where(files_table.c.owner == owner))]


# -- 1. an upload is read up to its limit, and its request is capped -------------------------------------

async def test_a_300_mb_upload_is_read_only_to_the_limit_plus_one_byte(big_chat, agent, tmp_path):
    tab = await Tab(big_chat.state, agent[1]).load()
    spooled = (tmp_path / "big.bin").open("w+b")  # as Starlette spools it: on disk past 1 MB
    spooled.truncate(300 * MB)
    tracemalloc.start()
    try:
        await big_chat.state.attach_files.fn(tab.chat, [rx.UploadFile(file=spooled, path=Path("big.bin"))])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        spooled.close()
    assert tab.chat.composer_error == "big.bin is 300 MB: the limit is 10 MB per file."
    assert tab.chat.attachments == []
    assert peak < 12 * MB, f"the handler held {peak / MB:.0f} MB for a 300 MB upload"  # before: 300 MB


def _post(base: str, handler: str, total: int, *, content_length: bool) -> tuple[int, int, bytes]:
    """POST a multipart upload of ``total`` bytes to ``/_upload``, stopping when the server answers.

    Returns the status, the body bytes sent before the answer, and the answer.
    """
    url = urlsplit(base)
    conn = socket.create_connection((url.hostname, url.port))
    boundary = "ic-boundary"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    lines = ["POST /_upload HTTP/1.1", f"Host: {url.netloc}", f"Content-Type: multipart/form-data; boundary={boundary}",
             "reflex-client-token: tab-upload", f"reflex-event-handler: {handler}",
             f"Content-Length: {len(head) + total + len(tail)}" if content_length else "Transfer-Encoding: chunked"]
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())

    def send(data: bytes) -> None:
        conn.sendall(data if content_length else f"{len(data):x}\r\n".encode() + data + b"\r\n")

    block, sent = b"x" * MB, 0
    try:
        send(head)
        while sent < total and not select.select([conn], [], [], 0)[0]:
            send(block[:total - sent])
            sent += min(len(block), total - sent)
        if sent >= total:
            send(tail)
            if not content_length:
                conn.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed
    conn.settimeout(10)
    answer = b""
    while True:  # the answer's head, then its body (Content-Length)
        head_end = answer.find(b"\r\n\r\n")
        if head_end >= 0:
            length = next((int(line.split(b":")[1]) for line in answer[:head_end].split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            if len(answer) >= head_end + 4 + length:
                break
        chunk = conn.recv(65536)
        if not chunk:
            break
        answer += chunk
    conn.close()
    return int(answer.split()[1]), sent, answer


class _Processor:
    """Reflex's event processor as the upload route uses it: records each upload event."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def enqueue_stream_delta(self, token: str, event: Any) -> AsyncIterator[dict[str, Any]]:
        self.events.append((token, event.name, [(f.name, f.file.read()) for f in event.payload["files"]]))
        yield {}


@pytest.fixture
def upload_route() -> Iterator[tuple[str, _Processor]]:
    """Reflex's upload route as the app builds it (``reflex.app.upload(app)``), with the app's contexts."""
    import reflex.app as reflex_app

    processor = _Processor()
    fake_app = type("App", (), {"event_processor": processor})()
    route = Starlette(routes=[Route("/_upload", reflex_app.upload(fake_app), methods=["POST"])])
    context = RegistrationContext.get()

    async def with_context(scope, receive, send):  # what Reflex's _ContextMiddleware does for each request
        RegistrationContext.set(context)
        await route(scope, receive, send)

    with serve_in_thread(with_context) as base:
        yield base, processor


def test_an_upload_request_to_a_chat_is_refused_past_its_cap(chat, upload_route):
    base, processor = upload_route
    handler = f"{chat.state.get_full_name()}.attach_files"
    cap = attaching.request_cap(attaching.limits_of(chat.state))
    assert cap < 4 * MB  # 3 files of 1 MB, their parts' headers, the event's args
    before = rss()
    status, sent, answer = _post(base, handler, 300 * MB, content_length=True)
    assert status == 413 and sent < 64 * MB and b"larger than" in answer  # refused on its Content-Length
    status, sent, _ = _post(base, handler, 300 * MB, content_length=False)
    assert status == 413 and sent < cap + 32 * MB  # chunked: refused once the cap is crossed (plus socket buffers)
    grown = rss() - before
    assert grown < 40 * MB, f"two 300 MB uploads grew the server by {grown / MB:.0f} MB"
    assert processor.events == []  # the handler never ran
    status, _, _ = _post(base, handler, 1000, content_length=True)  # within the cap: Reflex's route as before
    for _ in range(500):  # the event goes to the processor while the answer streams
        if processor.events:
            break
        time.sleep(0.01)
    assert status == 200 and processor.events == [("tab-upload", handler, [("big.bin", b"x" * 1000)])]


def test_an_upload_to_the_apps_own_handler_is_left_to_reflex(upload_route):
    base, _ = upload_route
    status, _, answer = _post(base, "reflex___state____state.not_a_chat.upload", 3 * MB, content_length=True)
    assert status == 400 and b"Unknown upload event handler" in answer  # Reflex's own answer, not the chat's cap


# -- 2. an image's pixels are checked from its header ----------------------------------------------------

async def test_an_image_with_too_many_pixels_is_refused_before_it_is_decoded(big_chat, agent):
    bomb = png(12000, 12000)  # 18 KB of PNG, 144 megapixels
    huge = png(20000, 20000)  # past Pillow's own bomb limit
    assert len(bomb) < 64 * 1024
    tab = await Tab(big_chat.state, agent[1]).load()
    tracemalloc.start()
    try:
        await big_chat.state.attach_files.fn(tab.chat, [upload("bomb.png", bomb), upload("huge.png", huge)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tab.chat.attachments == []
    assert "bomb.png is 12000 x 12000 pixels: the limit is 36 megapixels per image." in tab.chat.composer_error
    assert "huge.png has too many pixels: the limit is 36 megapixels per image." in tab.chat.composer_error
    assert peak < 16 * MB, f"checking two bombs cost {peak / MB:.0f} MB"  # before: about 550 MB to thumbnail
    assert refusal("ok.png", png(6000, 6000), "image/png", [], Attachments()) == ""  # 36 MP is taken
    assert thumbnail(bomb, "image/png") == "" and MAX_IMAGE_PIXELS >= 6000 * 6000


# -- 3. unsent files: removed with their chip, expired, limited per person -------------------------------

async def test_removing_a_chip_deletes_its_file_and_a_loop_stores_nothing(chat, agent, database):
    tab = await Tab(chat.state, agent[1], owner="owner-loop").load()
    for i in range(20):
        await chat.state.attach_files.fn(tab.chat, [upload(f"{i}.txt", b"some text %d" % i)])
        assert len(owned(database, tab)) == 1
        await chat.state.remove_attachment.fn(tab.chat, tab.chat.attachments[0].file_id)
    assert owned(database, tab) == [] and tab.chat.attachments == []


async def test_a_removal_names_only_this_composers_unsent_files(chat, agent, database):
    alice = await Tab(chat.state, agent[1], owner="owner-alice-rm").load()
    bob = await Tab(chat.state, agent[1], owner="owner-bob-rm").load()
    await chat.state.attach_files.fn(alice.chat, [upload("a.txt", b"alice's")])
    await alice.send("history with a file")
    sent_id = next(iter(owned(database, alice)))
    await chat.state.attach_files.fn(alice.chat, [upload("b.txt", b"alice's next")])
    waiting = alice.chat.attachments[0].file_id
    for hostile in (sent_id, waiting, ["x"], None):  # another tab's, a sent one, not even a string
        await chat.state.remove_attachment.fn(bob.chat, hostile)
    await chat.state.remove_attachment.fn(alice.chat, sent_id)  # sent: not in the composer
    assert sorted(owned(database, alice)) == sorted([sent_id, waiting])


async def test_unsent_files_expire_after_a_day_and_sent_ones_stay(chat, agent, database, monkeypatch):
    tab = await Tab(chat.state, agent[1], owner="owner-expiry").load()
    await chat.state.attach_files.fn(tab.chat, [upload("sent.txt", b"kept")])
    await tab.send("history with a kept file")
    [sent_id] = owned(database, tab)
    old = StoredFile(store.new_file_id(), "old.txt", "text/plain", 3)
    store.put(database, tab.chat._owner_key, old, b"old")
    other = StoredFile(store.new_file_id(), "left.txt", "text/plain", 4)
    store.put(database, "owner-left", other, b"left")  # someone who never comes back
    with database.engine.begin() as conn:
        conn.execute(update(files_table).values(created_at=datetime.now(UTC) - timedelta(days=2)))
    await chat.state.attach_files.fn(tab.chat, [upload("new.txt", b"new")])  # the next upload sweeps the person's
    assert old.file_id not in owned(database, tab) and other.file_id in owned(database, "owner-left")
    monkeypatch.setattr(attaching, "_last_sweep", time.monotonic() - attaching.SWEEP_SECONDS)  # ten minutes on
    await chat.state.attach_files.fn(tab.chat, [upload("newer.txt", b"newer")])
    assert old.file_id not in owned(database, tab) and sent_id in owned(database, tab)
    assert other.file_id not in owned(database, "owner-left")  # everyone's, now and then
    assert store.expire_unsent(database, datetime.now(UTC) + timedelta(days=2)) == 2  # the new ones, in two days


async def test_a_person_has_a_quota_of_unsent_files(chat, agent, database, monkeypatch):
    monkeypatch.setattr(attaching, "UNSENT_MESSAGES", 1)  # one message's worth: 3 files, 2 MB
    first = await Tab(chat.state, agent[1], owner="owner-quota").load()
    second = await Tab(chat.state, agent[1], owner="owner-quota").load()  # the same person's other tab
    await chat.state.attach_files.fn(first.chat, [upload(f"{i}.txt", b"t") for i in range(3)])
    await chat.state.attach_files.fn(second.chat, [upload("more.txt", b"t")])
    assert second.chat.attachments == [] and "too many files are waiting to be sent" in second.chat.composer_error
    assert len(owned(database, first)) == 3
    await chat.state.remove_attachment.fn(first.chat, first.chat.attachments[0].file_id)
    await chat.state.attach_files.fn(second.chat, [upload("more.txt", b"t")])  # room again
    assert [a.name for a in second.chat.attachments] == ["more.txt"]


async def test_forget_drops_the_composers_files_and_their_rows(chat, agent, database):
    tab = await Tab(chat.state, agent[1], owner="owner-switch").load()
    await chat.state.attach_files.fn(tab.chat, [upload("a.txt", b"a"), upload("b.txt", b"b")])
    assert len(owned(database, tab)) == 2
    await attaching.forget(tab.chat)
    assert tab.chat.attachments == [] and tab.chat._held == {} and owned(database, tab) == []


async def test_many_refusals_are_counted_not_listed(chat, agent):
    tab = await Tab(chat.state, agent[1]).load()
    await chat.state.attach_files.fn(tab.chat, [upload(f"{i}.bin", b"\x00\x01") for i in range(40)])
    assert tab.chat.composer_error.endswith(" 35 more files were refused.") and len(tab.chat.composer_error) < 1000


# -- 4. a run sends only the thread owner's files; thumbnails are data:image/ only ------------------------

def _file(database, owner: str, data: bytes) -> str:
    file = StoredFile(store.new_file_id(), "f.txt", "text/plain", len(data))
    store.put(database, owner, file, data)
    return file.file_id


def _snapshot(*file_ids: str) -> MessagesSnapshotEvent:
    parts = [multimodal.file_part(f, "text/plain", name=f"{f}.txt", size=1) for f in file_ids]
    message = UserMessage(id="from-the-agent", content=multimodal.user_content("x", parts))
    return MessagesSnapshotEvent(messages=[message])


def test_a_snapshot_naming_another_owners_file_does_not_send_its_bytes(database):
    alice, bob = _file(database, "owner-a", b"alice's bytes"), _file(database, "owner-b", b"bob's secret")
    session = AgentSession("http://127.0.0.1:9/")
    session.file_owner = "owner-a"
    session.transcript.apply(_snapshot(alice, bob))
    content = session.build_input().messages[0].content
    assert content[1].source.value == base64.b64encode(b"alice's bytes").decode()
    assert content[2] == TextInputContent(text=f"[{bob}.txt: the file is no longer available]")
    bobs = AgentSession("http://127.0.0.1:9/")  # alice's file, cached by her run, is not bob's to send
    bobs.file_owner = "owner-b"
    bobs.transcript.apply(_snapshot(alice))
    assert isinstance(bobs.build_input().messages[0].content[1], TextInputContent)
    nobody = AgentSession("http://127.0.0.1:9/")  # a session the chat has not given an owner sends no file
    nobody.transcript.apply(_snapshot(alice))
    assert isinstance(nobody.build_input().messages[0].content[1], TextInputContent)


async def test_the_chat_sends_its_owners_files_and_not_anothers(chat, agent, database):
    bob_file = _file(database, "owner-bob-run", b"bob's secret bytes")
    tab = await Tab(chat.state, agent[1], owner="owner-alice-run").load()
    await chat.state.attach_files.fn(tab.chat, [upload("mine.txt", b"alice's own bytes")])
    await tab.send("history with a file")
    [mine] = owned(database, tab)
    tab.session.transcript.apply(_snapshot(mine, bob_file))  # the agent's snapshot names bob's file
    await tab.send("history again")
    body = str(tab.requests()[-1]["messages"])
    assert base64.b64encode(b"alice's own bytes").decode() in body
    assert base64.b64encode(b"bob's secret bytes").decode() not in body and "no longer available" in body


def test_only_a_raster_data_image_thumbnail_is_drawn():
    good = "data:image/png;base64,iVBORw0KGgo="
    for bad in ("https://attacker.example/pixel.png", "//attacker.example/x.png", "data:image/svg+xml;base64,PHN2Zz4=",
                "data:text/html;base64,PGI+", "data:image/png;base64,AA\"onerror=x", 42,
                "data:image/png;base64," + "A" * (multimodal.MAX_THUMB_CHARS + 1)):
        part = multimodal.file_part("f", "image/png", name="a.png", size=1, thumb=good)
        part.metadata["thumb"] = bad  # as an agent's snapshot may write it
        assert multimodal.attachments_of([part])[0]["thumb"] == "" and attachment_rows([part])[0].thumb == ""
        assert "thumb" not in multimodal.file_part("f", "image/png", name="a.png", size=1, thumb=str(bad)).metadata
    part = multimodal.file_part("f", "image/png", name="a.png", size=1, thumb=good)
    assert multimodal.attachments_of([part])[0]["thumb"] == good


def test_the_cache_of_sent_files_is_kept_per_owner(database):
    alice = _file(database, "owner-cache-a", b"cached bytes")
    found = attaching._source("owner-cache-a", alice, "text/plain")  # now cached
    assert found is not None and found.value == base64.b64encode(b"cached bytes").decode()
    assert attaching._source("owner-cache-b", alice, "text/plain") is None
    assert attaching._source("", alice, "text/plain") is None


async def test_a_file_the_page_refused_is_named_and_hostile_rejections_are_harmless(chat, agent):
    tab = await Tab(chat.state, agent[1]).load()
    rejected = [{"name": "big.bin", "size": 3 * MB}, "junk", {"name": 5, "size": "9"}, {"name": ["x"], "size": True}]
    chat.state.refuse_dropped.fn(tab.chat, rejected)
    assert tab.chat.composer_error == ("big.bin is 3 MB: the limit is 1 MB per file. file is over 1 MB: the limit is "
                                       "1 MB per file. file is over 1 MB: the limit is 1 MB per file. file is over 1 "
                                       "MB: the limit is 1 MB per file.")
    chat.state.refuse_dropped.fn(tab.chat, [{"name": "x" * 10_000, "size": 2 * MB}] * 10_000)  # bounded
    assert len(tab.chat.composer_error) < 2000 and tab.chat.composer_error.endswith("more files were refused.")
    chat.state.refuse_dropped.fn(tab.chat, "not a list")
    assert tab.chat.composer_error == "" and tab.chat.attachments == []


async def test_an_empty_upload_keeps_what_the_page_refused(chat, agent):
    tab = await Tab(chat.state, agent[1]).load()
    chat.state.refuse_dropped.fn(tab.chat, [{"name": "big.bin", "size": 3 * MB}])  # the page's refusal comes first
    await chat.state.attach_files.fn(tab.chat, [])  # then react-dropzone's onDrop with no accepted file
    assert tab.chat.composer_error == "big.bin is 3 MB: the limit is 1 MB per file."
