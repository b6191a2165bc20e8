"""Live everywhere (issue 23, contracts §5.1): every page of one owner that shows a thread reflects each change
to it within 2 s, without a reload: tabs of one browser (one owner), the inbox, streaming included."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .conftest import Chat

SYNC_MS = 2_000  # the contract: within 2 s of the change


def test_an_answer_from_the_inbox_reaches_the_chat_tab_live(chat: Chat, demo_agent):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    answers = chat.messages("assistant").count()
    inbox = chat.page.context.new_page()  # another tab of the same browser: the same owner
    inbox.goto(chat.base_url + "/inbox")
    item = inbox.locator(f'[data-testid="inbox-item"][data-interrupt-id="{interrupt_id}"]')
    item.get_by_test_id("interrupt-approve").click()
    expect(chat.cards()).to_have_count(0, timeout=SYNC_MS)  # no reload
    chat.wait("idle", timeout=10_000)
    expect(chat.messages("assistant")).to_have_count(answers + 1, timeout=SYNC_MS)  # the agent's follow-up
    expect(chat.page.get_by_test_id("audit-entry")).to_have_attribute("data-action", "resolved", timeout=SYNC_MS)
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible()
    thread = demo_agent.last_thread()
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == 1


def test_a_card_that_surfaces_in_one_tab_shows_in_the_other_and_in_the_inbox(chat: Chat):
    chat.open()
    chat.send("hello")
    chat.wait("idle")
    other = Chat(chat.page.context.new_page(), chat.base_url).open()  # shows the same (newest) thread
    inbox = chat.page.context.new_page()
    inbox.goto(chat.base_url + "/inbox")
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible()
    chat.send("approval")
    chat.wait("interrupted")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    expect(other.card()).to_have_attribute("data-interrupt-id", interrupt_id, timeout=SYNC_MS)
    other.wait("interrupted", timeout=SYNC_MS)
    expect(inbox.locator(f'[data-testid="inbox-item"][data-interrupt-id="{interrupt_id}"]')).to_be_visible(
        timeout=SYNC_MS)
    other.card().get_by_test_id("interrupt-reject").click()  # answered in the other tab
    expect(chat.cards()).to_have_count(0, timeout=SYNC_MS)
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible(timeout=SYNC_MS)


def test_a_streamed_answer_streams_into_a_second_tab(chat: Chat):
    chat.open()
    chat.send("hello")
    chat.wait("idle")
    other = Chat(chat.page.context.new_page(), chat.base_url).open()
    chat.send("long")
    other.wait("running", timeout=SYNC_MS)
    answer = other.messages("assistant").last
    expect(answer).to_contain_text("This is a very long answer", timeout=SYNC_MS)
    first = len(answer.inner_text())
    expect(answer).not_to_have_text(re.compile(rf"^.{{0,{first}}}$", re.S), timeout=SYNC_MS)  # it grows
    chat.status.page.get_by_test_id("chat-stop").click()
    chat.wait("idle")
    other.wait("idle", timeout=SYNC_MS)
    expect(other.messages("assistant").last).to_have_text(chat.last_assistant_text(), timeout=SYNC_MS)


def test_a_rename_and_a_delete_reach_the_other_tabs_thread_list(chat: Chat):
    chat.open()
    chat.send("hello rename me")
    chat.wait("idle")
    other = Chat(chat.page.context.new_page(), chat.base_url).open()
    thread_id = chat.page.locator('[data-testid="thread-item"][data-current="true"]').get_attribute("data-thread-id")
    theirs = other.page.locator(f'[data-testid="thread-item"][data-thread-id="{thread_id}"]')
    expect(theirs).to_be_visible()
    mine = chat.page.locator(f'[data-testid="thread-item"][data-thread-id="{thread_id}"]').locator("xpath=..")
    mine.get_by_test_id("thread-rename").click()
    chat.page.get_by_test_id("thread-rename-input").fill("Renamed in the first tab")
    chat.page.get_by_test_id("thread-rename-confirm").click()
    expect(theirs).to_contain_text("Renamed in the first tab", timeout=SYNC_MS)
    mine.get_by_test_id("thread-delete").click()
    chat.page.get_by_test_id("thread-delete-confirm").click()
    expect(theirs).to_have_count(0, timeout=SYNC_MS)
    expect(other.messages("user").filter(has_text="hello rename me")).to_have_count(0, timeout=SYNC_MS)
