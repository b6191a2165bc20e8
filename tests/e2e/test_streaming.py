"""New bytes only (docs/decisions/0011): a streaming answer reaches the page once, and a reload
mid-stream or after it still shows the whole text."""

from __future__ import annotations

import itertools

import pytest
from playwright.sync_api import Page, expect

from interrupt_chat.demo.agent.scenarios import LONG_DELTAS

from .conftest import Chat

pytestmark = pytest.mark.stage("prod", why="the bytes a deployed page receives while an answer streams")

SENTENCE = "This is a very long answer streamed slowly so that you can stop it ."
LONG_TEXT = " ".join(itertools.islice(itertools.cycle(SENTENCE.split()), LONG_DELTAS))


def _frames(page: Page) -> list[str]:
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    return frames


def _quiet(chat: Chat, frames: list[str], ms: int = 500) -> None:
    """Wait until no frame came for ``ms``: the page's load (hydration, the router's headers) is done."""
    seen = -1
    while seen != len(frames):
        seen = len(frames)
        chat.page.wait_for_timeout(ms)


def _answer(chat: Chat):
    return chat.page.locator('[data-testid="message"][data-role="assistant"]').last


@pytest.mark.dojo("/")
def test_a_streamed_answer_is_sent_once_not_resent_with_every_push(chat: Chat):
    frames = _frames(chat.page)
    chat.open()
    _quiet(chat, frames)  # what the answer costs, not the page's load (about 4 KB, its frames come after open())
    frames.clear()
    chat.send("long")
    chat.wait("idle", timeout=60_000)
    expect(_answer(chat)).to_have_text(LONG_TEXT)
    received = sum(len(frame.encode()) for frame in frames)
    assert received <= 3 * len(LONG_TEXT), f"{received} bytes for a {len(LONG_TEXT)}-character answer"
    assert sum(frame.count("very long answer") for frame in frames) < LONG_DELTAS / 10  # each phrase about once


def test_a_reload_mid_stream_shows_the_whole_answer(chat: Chat):
    chat.open()
    chat.send("long")
    chat.wait("running")
    expect(_answer(chat)).to_contain_text("This is a very long")
    chat.page.reload()  # the new page has none of the streamed text: the var brings it again
    expect(chat.page.get_by_test_id("chat-input")).to_be_visible()
    chat.wait("idle", timeout=60_000)
    expect(_answer(chat)).to_have_text(LONG_TEXT)
    chat.page.reload()  # and after the run, from the var alone
    expect(_answer(chat)).to_have_text(LONG_TEXT)
