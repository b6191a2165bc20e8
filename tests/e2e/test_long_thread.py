"""A thread of 1,000 messages in the browser (issue 27, decision 22): it opens at its newest page with the
request focused, older pages load as the person scrolls up, the thread search opens it at an old match,
a turn sends only the turn, and axe finds nothing.

The demo agent's ``backlog N`` answers with a snapshot of N more turns (markdown with code blocks, a
tool call every tenth turn); an ``approval`` after it leaves the thread with a pending request at its end.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .a11y import assert_axe_clean
from .conftest import Chat

pytestmark = pytest.mark.stage("prod", why="a thousand messages paged from the database and pushed as deployed")

ROWS = 30  # interrupt_chat.model.history.PAGE_ROWS: the rows a thread opens with


def _long_thread(chat: Chat, turns: int = 500) -> None:
    """A thread of ``turns`` backlog turns, then a pending approval; reloaded."""
    chat.open()
    for text in (f"backlog {turns}", "approval"):  # not chat.send, which counts one more user message
        chat.input.fill(text)
        chat.input.press("Enter")
        if text != "approval":
            expect(chat.messages("assistant").filter(has_text="That is the whole backlog")).to_be_visible(
                timeout=60_000)
            chat.wait("idle")
    chat.wait("interrupted")
    chat.page.reload()
    expect(chat.input).to_be_visible(timeout=60_000)
    chat.wait("interrupted")


def _drawn(chat: Chat) -> int:
    return chat.page.get_by_test_id("message").count()


def test_a_long_thread_opens_at_its_newest_page_with_the_request_focused(chat: Chat):
    _long_thread(chat)
    expect(chat.messages("assistant").filter(has_text="Step 499")).to_be_visible()
    expect(chat.cards()).to_have_count(1)
    older = chat.page.get_by_test_id("history-older")
    expect(older).to_be_visible()
    assert _drawn(chat) <= ROWS + 5  # the newest page and the current turn, not 1,000 messages
    assert int(older.get_attribute("data-at") or 0) > 900
    chat.page.wait_for_function(  # docs/accessibility.md: the request takes the focus
        "() => document.activeElement && document.activeElement.closest('[data-testid=\"interrupt-slot\"]')")
    assert_axe_clean(chat.page, "long thread")


_TO_THE_TOP = """(box) => {
  const row = box.querySelector('[data-message-id]');  // the oldest row the page holds
  box.scrollTop = 0;
  return [row.dataset.messageId, row.getBoundingClientRect().top - box.getBoundingClientRect().top];
}"""
_PLACE = "(row) => row.getBoundingClientRect().top - row.closest('[data-chat-scroll]').getBoundingClientRect().top"


def test_older_pages_load_as_the_person_scrolls_up_and_keep_their_place(chat: Chat):
    _long_thread(chat, 60)  # 133 messages: five pages
    box = chat.page.get_by_test_id("chat-messages")
    older = chat.page.get_by_test_id("history-older")
    first = chat.page.locator('[data-testid="message"][data-message-id="backlog-u0"]')
    for _ in range(20):
        if first.count():
            break
        at = int(older.get_attribute("data-at") or 0)
        oldest, top = box.evaluate(_TO_THE_TOP)  # at the very top, where the browser's own anchoring stops
        # one page came in above: the button asks from a page further up, or is gone (the page holds row 0)
        chat.page.wait_for_function(
            "(at) => { const b = document.querySelector('[data-testid=\"history-older\"]');"
            " return !b || b.dataset.at !== at; }", arg=str(at))
        if at > ROWS:
            assert older.get_attribute("data-at") == str(at - ROWS)  # one page, not every page at once
        # the row that was the oldest stays where the person saw it: the new page came in above it
        assert abs(chat.page.locator(f'[data-message-id="{oldest}"]').evaluate(_PLACE) - top) <= 2
    expect(first).to_be_attached()
    expect(older).to_have_count(0)  # the page holds the whole thread
    assert chat.messages("user").first.inner_text().startswith("backlog 60")


def test_earlier_messages_is_a_button_for_the_keyboard(chat: Chat):
    _long_thread(chat, 40)
    older = chat.page.get_by_test_id("history-older")
    drawn = _drawn(chat)
    older.focus()
    chat.page.keyboard.press("Enter")
    expect(chat.page.get_by_test_id("message")).not_to_have_count(drawn)
    assert _drawn(chat) > drawn


def test_the_thread_search_opens_the_thread_at_an_old_match(chat: Chat):
    _long_thread(chat)
    chat.page.get_by_test_id("thread-new").click()  # the search is made from another thread
    expect(chat.messages("user")).to_have_count(0)
    chat.send("hello")
    chat.wait("idle")
    item = chat.page.get_by_test_id("thread-item")
    expect(item).to_have_count(2)
    chat.page.get_by_test_id("thread-search").fill("topic-123?")
    expect(item).to_have_count(1)
    item.first.click()
    match = chat.page.locator('[data-message-id="backlog-u123"]')
    expect(match).to_be_visible()
    expect(match).to_have_attribute("data-match", "true")
    expect(chat.messages("assistant").filter(has_text="Step 499")).to_have_count(0)  # not drawn: far below
    newer = chat.page.get_by_test_id("history-newer")
    expect(newer).to_be_attached()
    assert _drawn(chat) <= ROWS + 5
    assert_axe_clean(chat.page, "long thread at a search's match")
    # the pages below come as the person goes down: "Later messages" asks for the next page as it nears the
    # view, so a click's scroll can start that page and the button moves under the pointer (Playwright then
    # retries the click for 30 s, and once did not land it). The click is dispatched to the button itself.
    newer.dispatch_event("click")
    expect(chat.page.locator('[data-message-id="backlog-u140"]')).to_be_attached()


def test_a_turn_on_a_long_thread_sends_only_the_turn(chat: Chat):
    """The websocket bytes of an answer do not grow with the thread: the history is not sent again."""
    _long_thread(chat, 300)
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    cdp = chat.page.context.new_cdp_session(chat.page)
    cdp.send("Network.enable")
    sizes: list[int] = []
    cdp.on("Network.webSocketFrameReceived", lambda event: sizes.append(len(event["response"]["payloadData"])))
    chat.send("hello")
    chat.wait("idle")
    chat.send("hello again")  # this turn's start moves the last one into the history
    chat.wait("idle")
    assert sum(sizes) < 40_000, sizes  # two short answers; the thread's 600 messages are about 400 KB


def test_on_a_long_thread_the_answer_follows_the_bottom_and_an_older_row_copies_its_source(chat: Chat):
    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=chat.base_url)
    _long_thread(chat, 100)
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("Approved")
    box = chat.page.get_by_test_id("chat-messages")
    chat.page.wait_for_function(  # the list followed the new answer to the bottom (behaviour.py's auto-scroll)
        "(el) => el.scrollHeight - el.scrollTop - el.clientHeight < 80", arg=box.element_handle())
    older = chat.page.get_by_test_id("history-older")
    older.click()
    row = chat.page.locator('[data-testid="message"][data-message-id="backlog-a80"]')
    expect(row).to_be_attached()
    row.scroll_into_view_if_needed()
    row.get_by_test_id("message-copy").click()
    chat.page.wait_for_function("() => navigator.clipboard.readText().then((t) => t.startsWith('## Step 80'))")
    order = chat.page.evaluate("() => Array.from(document.querySelectorAll('[data-testid=\"message\"]'))"
                               ".map((m) => m.dataset.messageId).filter((id) => id.startsWith('backlog-u'))"
                               ".map((id) => Number(id.slice(9)))")
    assert order == sorted(order) and len(order) > 10  # reading order is the thread's order
