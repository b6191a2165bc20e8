"""Identity in the browser (issue 38 §1, contracts §6.1): the cookie page scripts never see, and a sibling origin.

A real Chromium against the real app: the backend issues the identity cookie on the socket's handshake;
it is HttpOnly and SameSite=Lax, absent from ``document.cookie`` and from every frame the page receives
(Reflex echoes the handshake's headers into ``router.headers``); a page on another port of the same host,
which the browser sends the cookie from, gets no identity: ``chat-signin``, nothing listed, nothing sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from interrupt_chat.tab.identity import COOKIE
from tests.e2e.conftest import Chat, DemoAgent
from tests.proxy import TcpProxy

pytestmark = pytest.mark.stage("prod", why="the identity cookie and a sibling origin, as deployed")


@pytest.fixture
def sibling(app_url: str) -> Iterator[str]:
    parts = urlsplit(app_url)
    with TcpProxy(parts.port or 80, host=parts.hostname or "127.0.0.1") as proxy:  # a sibling origin: another port
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
