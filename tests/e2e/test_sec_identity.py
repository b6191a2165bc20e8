"""Identity in the browser (issue 38 §1, contracts §6.1): the cookie page scripts never see, and a sibling origin.

A real Chromium against the real app: the backend issues the identity cookie on the socket's handshake;
it is HttpOnly and SameSite=Lax, absent from ``document.cookie`` and from every frame the page receives
(Reflex echoes the handshake's headers into ``router.headers``); a page on another port of the same host,
which the browser sends the cookie from, gets no identity: ``chat-signin``, nothing listed, nothing sent.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from interrupt_chat.identity import COOKIE
from tests.e2e.conftest import Chat, DemoAgent
from tests.unit.agents import free_port


class SiblingOrigin:
    """A TCP proxy on another port of the page's host: the same app, served from a sibling origin."""

    def __init__(self, host: str, target: int) -> None:
        self.host, self.target, self.port = host, target, free_port()
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> SiblingOrigin:
        self._thread.start()
        assert self._started.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        self._started.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target)
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@pytest.fixture
def sibling(app_url: str) -> Iterator[str]:
    parts = urlsplit(app_url)
    with SiblingOrigin(parts.hostname or "127.0.0.1", parts.port or 80) as proxy:
        yield f"{parts.scheme}://{parts.hostname}:{proxy.port}"


def identity_cookie(page: Page) -> dict:
    [cookie] = [c for c in page.context.cookies() if c["name"] == COOKIE]
    return dict(cookie)


def test_the_identity_cookie_is_httponly_and_never_reaches_the_page(page: Page, chat: Chat):
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    chat.open()
    chat.send("hello")
    chat.wait("idle")
    cookie = identity_cookie(page)
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Lax" and len(cookie["value"]) >= 40
    assert COOKIE not in page.evaluate("document.cookie")
    assert frames and "router" in "".join(frames)  # the frames that carry router.headers were seen
    assert not any(cookie["value"] in f or COOKIE in f for f in frames)
    page.reload()  # the same browser: the same person, the same thread
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
    expect(page.get_by_test_id("message").filter(has_text="hello").first).to_be_visible()
    assert identity_cookie(page)["value"] == cookie["value"]


def test_a_page_on_a_sibling_origin_gets_no_identity(page: Page, chat: Chat, sibling: str, demo_agent: DemoAgent):
    chat.open()
    chat.send("only mine")
    chat.wait("idle")
    thread = chat.page.get_by_test_id("thread-item").first.get_attribute("data-thread-id")
    other = page.context.new_page()  # the same browser, the same cookie jar
    other.goto(sibling + "/")
    expect(other.get_by_test_id("chat-signin")).to_be_visible(timeout=120_000)
    expect(other.get_by_test_id("thread-item")).to_have_count(0)
    expect(other.get_by_test_id("chat-input")).to_be_disabled()
    assert thread and "only mine" not in other.content()
    sent = len(demo_agent.records())
    other.get_by_test_id("chat-input").evaluate("e => { e.disabled = false; e.value = 'from the sibling'; }")
    other.get_by_test_id("chat-input").press("Enter")
    other.wait_for_timeout(1000)
    assert len(demo_agent.records()) == sent
    other.close()
