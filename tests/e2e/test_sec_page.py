"""What a person sees while the page connects, and Copy (issue 38 §6).

- A reconnect to a fresh backend state (a restart, without a reload) keeps the card on screen: the
  hydrate's own snapshot holds the restored thread, so the defaults (no card, status idle) never show.
- Copy writes the clipboard in the click's own handler (Safari and Firefox refuse a write that a server
  round trip answers): the page's clipboard is watched for a write made while the click is dispatched.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Chat
from tests.e2e.test_restart import TabRestart

WATCH_CARD = """() => {
  window.__cardGone = 0; window.__idleSeen = 0;
  const check = () => {
    if (!document.querySelector('[data-testid="interrupt-card"]')) window.__cardGone += 1;
    const status = document.querySelector('[data-testid="run-status"]');
    if (status && status.getAttribute('data-status') !== 'interrupted') window.__idleSeen += 1;
  };
  new MutationObserver(check).observe(document.body, {subtree: true, childList: true, attributes: true});
}"""


def test_a_reconnect_to_a_fresh_backend_state_never_hides_the_card(page: Page, app_url: str, reflex_app):
    restart = TabRestart(page)
    chat = Chat(page, app_url)
    chat.interrupt("approval")
    expect(chat.cards()).to_have_count(1)
    page.evaluate(WATCH_CARD)
    restart(reflex_app)
    page.wait_for_timeout(500)
    expect(chat.cards()).to_have_count(1)
    gone, idle = page.evaluate("() => [window.__cardGone, window.__idleSeen]")
    assert (gone, idle) == (0, 0), f"the card vanished in {gone} and the status left 'interrupted' in {idle} updates"


WATCH_CLIPBOARD = """() => {
  window.__writes = [];
  let inClick = false;
  window.addEventListener('click', () => { inClick = true; }, true);
  window.addEventListener('click', () => { inClick = false; }, false);
  const write = (text) => { window.__writes.push([String(text), inClick]); return Promise.resolve(); };
  Object.defineProperty(navigator, 'clipboard', {value: {writeText: write}, configurable: true});
}"""


def test_copy_writes_the_clipboard_in_the_click_s_own_handler(chat: Chat):
    chat.open()
    chat.send("markdown")
    chat.wait("idle")
    chat.page.evaluate(WATCH_CLIPBOARD)
    chat.messages("assistant").last.get_by_test_id("message-copy").click()
    chat.messages("user").last.get_by_test_id("message-copy").click()
    chat.page.wait_for_function("() => window.__writes.length >= 2", timeout=5_000)
    (answer, answer_in_click), (question, question_in_click) = chat.page.evaluate("() => window.__writes")
    assert "**approval**" in answer and "```python" in answer and question == "markdown"
    assert answer_in_click and question_in_click, "the clipboard was written after the click, not in its handler"
