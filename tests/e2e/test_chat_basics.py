"""Copy and feedback in the browser (issue 25 §3, contracts §5.3): copy puts the message's source on the clipboard;
thumbs up / down are toggles with ``aria-pressed``, take a comment, and survive a reload."""

from __future__ import annotations

from playwright.sync_api import expect

from .a11y import assert_axe_clean
from .conftest import Chat

SYNC_MS = 2_000


def test_copy_puts_the_messages_source_on_the_clipboard(chat: Chat):
    chat.page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=chat.base_url)
    chat.open()
    chat.send("markdown")
    chat.wait("idle")
    answer = chat.messages("assistant").last
    answer.get_by_test_id("message-copy").click()
    chat.page.wait_for_function("() => navigator.clipboard.readText().then((t) => t.length > 0)")
    copied = chat.page.evaluate("() => navigator.clipboard.readText()")
    assert "**approval**" in copied and "```python" in copied  # the markdown source, not the drawn text
    chat.messages("user").last.get_by_test_id("message-copy").click()
    chat.page.wait_for_function("() => navigator.clipboard.readText().then((t) => t === 'markdown')")


def test_feedback_toggles_takes_a_comment_and_survives_a_reload(chat: Chat):
    chat.open()
    chat.send("markdown")
    chat.wait("idle")
    answer = chat.messages("assistant").last
    up, down = answer.get_by_test_id("message-feedback-up"), answer.get_by_test_id("message-feedback-down")
    expect(up).to_have_attribute("aria-pressed", "false")
    up.click()
    expect(up).to_have_attribute("aria-pressed", "true")
    expect(down).to_have_attribute("aria-pressed", "false")
    assert_axe_clean(chat.page, "an answer rated, its comment open")
    answer.get_by_test_id("message-feedback-comment").fill("Clear, thanks")
    answer.get_by_test_id("message-feedback-comment-save").click()
    chat.page.wait_for_timeout(300)
    chat.shot_content("message-actions")  # the README's
    chat.page.reload()
    answer = chat.messages("assistant").last
    expect(answer.get_by_test_id("message-feedback-up")).to_have_attribute("aria-pressed", "true", timeout=20_000)
    expect(answer.get_by_test_id("message-feedback-comment")).to_have_value("Clear, thanks")
    answer.get_by_test_id("message-feedback-down").click()  # another rating
    expect(answer.get_by_test_id("message-feedback-down")).to_have_attribute("aria-pressed", "true")
    expect(answer.get_by_test_id("message-feedback-up")).to_have_attribute("aria-pressed", "false")
    answer.get_by_test_id("message-feedback-down").click()  # pressed again: taken back
    expect(answer.get_by_test_id("message-feedback-down")).to_have_attribute("aria-pressed", "false")
    chat.page.reload()
    answer = chat.messages("assistant").last
    expect(answer.get_by_test_id("message-feedback-up")).to_have_attribute("aria-pressed", "false", timeout=20_000)
    expect(answer.get_by_test_id("message-feedback-down")).to_have_attribute("aria-pressed", "false")
