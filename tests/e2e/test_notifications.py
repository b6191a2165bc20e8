"""Browser notifications (issue 23, contracts §5.1 ``notify-toggle``): a request that surfaces while the page is
hidden shows one system notification across the owner's tabs; clicking it focuses the tab and the request.

``window.Notification`` and ``document.hidden`` are stubbed before the page loads (headless Chromium shows no
system notifications): the stub records what the page asked for.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import Chat

pytestmark = pytest.mark.stage("dev", why="the browser's notifications, the same in both builds")

STUB = """
(() => {
  window.__notes = [];
  window.__hidden = false;
  Object.defineProperty(document, "hidden", { get: () => window.__hidden, configurable: true });
  Object.defineProperty(document, "visibilityState", { get: () => window.__hidden ? "hidden" : "visible",
                                                        configurable: true });
  class StubNotification {
    static permission = "default";
    static async requestPermission() { StubNotification.permission = "granted"; return "granted"; }
    constructor(title, options) {
      this.title = title; this.options = options || {};
      window.__notes.push({ title, body: this.options.body, tag: this.options.tag });
      window.__lastNote = this;
    }
    close() {}
  }
  window.Notification = StubNotification;
  try {  // granted in this profile already (about:blank, where a new tab starts, has no storage)
    if (localStorage.getItem("interrupt_chat.notify") === "on") StubNotification.permission = "granted";
  } catch (e) {}
})();
"""


def _notes(page: Page) -> list[dict]:
    return page.evaluate("window.__notes")


def test_a_request_on_a_hidden_page_notifies_once_and_the_click_focuses_it(page: Page, app_url: str):
    page.context.add_init_script(STUB)
    chat = Chat(page, app_url).open()
    toggle = page.get_by_test_id("notify-toggle")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    for _ in range(5):  # a click before the page's script is ready is not seen (prod, under load): click again
        toggle.click()
        if toggle.get_attribute("aria-pressed") == "true" or page.wait_for_timeout(1000) or \
                toggle.get_attribute("aria-pressed") == "true":
            break
    expect(toggle).to_have_attribute("aria-pressed", "true")
    chat.send("hello")
    chat.wait("idle")
    other = Chat(page.context.new_page(), app_url).open()  # a second tab of the owner, on the same thread
    expect(other.page.get_by_test_id("notify-toggle")).to_have_attribute("aria-pressed", "true")
    for tab in (chat.page, other.page):
        tab.evaluate("window.__hidden = true")
    chat.input.fill("approval")
    chat.input.press("Enter")
    chat.wait("interrupted")
    expect(other.cards()).to_have_count(1)
    chat.page.wait_for_timeout(500)
    notes = _notes(chat.page) + _notes(other.page)
    assert len(notes) == 1, notes  # one per request across the tabs
    assert notes[0]["title"] == "The assistant asks for your approval"
    assert notes[0]["body"] == chat.card().get_by_test_id("interrupt-prompt").inner_text().strip()[:160]
    clicked = chat.page if _notes(chat.page) else other.page
    clicked.evaluate("window.__lastNote.onclick()")
    expect(clicked.get_by_test_id("interrupt-prompt").first).to_be_focused()


def test_nothing_is_notified_on_a_visible_page_or_with_the_toggle_off(page: Page, app_url: str):
    page.context.add_init_script(STUB)
    chat = Chat(page, app_url).open()
    chat.send("approval")  # visible, toggle off
    chat.wait("interrupted")
    chat.page.get_by_test_id("notify-toggle").click()
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    chat.send("choice")  # visible, toggle on
    chat.wait("interrupted")
    chat.page.wait_for_timeout(300)
    assert _notes(chat.page) == []
