"""Threads of one owner in the thread database: every tab of a browser, the list's actions, the audit trail.

S25: a pending approval started in one tab shows in a second tab of the same browser (the owner is
the browser, not the tab) and survives there; another browser profile sees none of it. Rename,
delete (with confirmation) and search over titles and message text; each decision is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect

from .conftest import Chat


def test_s25_a_pending_approval_shows_in_a_second_tab_of_the_same_browser(chat, demo_agent):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    second = Chat(chat.page.context.new_page(), chat.base_url).open_pending()
    expect(second.card()).to_have_attribute("data-interrupt-id", interrupt_id)
    expect(second.page.locator('[data-testid="thread-item"][data-pending="true"]')).to_have_count(1)
    second.card().get_by_test_id("interrupt-approve").click()
    second.wait("idle")
    thread = demo_agent.last_thread()
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == 1
    chat.page.reload()  # the first tab shows the answered thread
    chat.wait("idle")
    expect(chat.cards()).to_have_count(0)
    expect(chat.page.get_by_test_id("audit-entry")).to_have_count(1)
    expect(chat.page.get_by_test_id("audit-entry")).to_have_attribute("data-action", "resolved")
    expect(chat.page.get_by_test_id("audit-entry")).to_have_attribute("data-interrupt-id", interrupt_id)


def test_threads_rename_delete_and_search(chat):
    chat.open()
    chat.send("hello alpha")
    chat.wait("idle")
    chat.page.get_by_test_id("thread-new").click()
    expect(chat.messages("user")).to_have_count(0)  # the new thread is shown (chat.send counts from here)
    chat.send("markdown bravo")
    chat.wait("idle")
    items = chat.page.get_by_test_id("thread-item")
    expect(items).to_have_count(2)

    current = chat.page.locator('[data-testid="thread-item"][data-current="true"]')
    row = current.locator("xpath=..")
    row.get_by_test_id("thread-rename").click()
    chat.page.get_by_test_id("thread-rename-input").fill("Renamed thread")
    chat.page.get_by_test_id("thread-rename-confirm").click()
    expect(current).to_contain_text("Renamed thread")

    search = chat.page.get_by_test_id("thread-search")
    search.fill("alpha")  # message text
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("hello alpha")
    search.fill("renamed")  # title
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Renamed thread")
    search.fill("")
    expect(items).to_have_count(2)

    other = chat.page.locator('[data-testid="thread-item"][data-current="false"]')
    other.locator("xpath=..").get_by_test_id("thread-delete").click()
    chat.page.get_by_test_id("thread-delete-confirm").click()
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Renamed thread")
    chat.page.reload()  # the database agrees
    chat.wait("idle")
    expect(chat.page.get_by_test_id("thread-item")).to_have_count(1)
    expect(chat.page.get_by_test_id("thread-item").first).to_contain_text("Renamed thread")
    chat.shot("threads-list")


def _resumes(demo_agent, thread: str) -> int:
    return len([r for r in demo_agent.records(thread) if r.get("resume")])


def test_inbox_lists_every_waiting_interrupt_and_answers_each_exactly_once(chat, demo_agent):
    chat.interrupt("approval")
    first = demo_agent.last_thread()
    chat.page.get_by_test_id("thread-new").click()
    chat.wait("idle")
    expect(chat.messages("user")).to_have_count(0)
    chat.send("choice")
    chat.wait("interrupted")
    second = demo_agent.last_thread()

    inbox = chat.page.context.new_page()
    inbox.goto(chat.base_url + "/inbox")
    items = inbox.get_by_test_id("inbox-item")
    expect(items).to_have_count(2)
    approval = inbox.locator(f'[data-testid="inbox-item"][data-thread-id="{first}"]')
    expect(approval).to_have_attribute("data-reason", "tool_call")
    expect(approval.get_by_test_id("inbox-open-thread")).to_be_visible()
    approval.get_by_test_id("interrupt-approve").click()
    expect(items).to_have_count(1)
    choice = inbox.locator(f'[data-testid="inbox-item"][data-thread-id="{second}"]')
    choice.locator("select").select_option("green")
    choice.get_by_test_id("interrupt-submit").click()
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible()
    inbox.wait_for_timeout(500)
    assert (_resumes(demo_agent, first), _resumes(demo_agent, second)) == (1, 1)

    chat.page.reload()  # the chat tab shows the thread as it stands, and a stale click sends nothing
    chat.wait("idle")
    expect(chat.cards()).to_have_count(0)
    assert (_resumes(demo_agent, first), _resumes(demo_agent, second)) == (1, 1)


def test_thread_export_downloads_markdown_and_json_that_read_back(chat: Chat):
    chat.open()
    chat.send("history: export me")
    chat.wait("idle")
    answer = chat.last_assistant_text()
    downloads = []
    chat.page.on("download", lambda download: downloads.append(download))
    row = chat.page.locator('[data-testid="thread-item"][data-current="true"]')
    thread_id = row.get_attribute("data-thread-id")
    chat.page.locator(f'[data-testid="thread-item"][data-thread-id="{thread_id}"] ~ [data-testid="thread-export"]'
                      ).click()
    deadline = 100  # both downloads, 10 s at the most
    while len(downloads) < 2 and deadline:
        chat.page.wait_for_timeout(100)
        deadline -= 1
    files = {d.suggested_filename.rsplit(".", 1)[1]: Path(d.path()).read_text() for d in downloads}
    assert sorted(files) == ["json", "md"], [d.suggested_filename for d in downloads]
    assert "## You\n\nhistory: export me" in files["md"] and answer.splitlines()[0] in files["md"]
    document = json.loads(files["json"])
    assert document["threadId"] == thread_id
    assert [m["content"] for m in document["messages"] if m["role"] == "user"] == ["history: export me"]
