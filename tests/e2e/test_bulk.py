"""Bulk decisions and the inbox as a work queue (issue 24, contracts §5.2): a bulk approval across threads answers
each plain approval once (one resume per complete set) and reports the skips (an expired request, one answered in
another tab meanwhile, a form); the inbox keys ``a`` / ``r`` / Space; the Inbox link's live count."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from .conftest import ARTIFACTS, EXPIRES_IN, Chat, DemoAgent

pytestmark = pytest.mark.stage("prod", why="bulk decisions claimed across threads, as deployed")

SYNC_MS = 2_000


def _new_thread(chat: Chat, scenario: str, demo_agent: DemoAgent) -> str:
    chat.page.get_by_test_id("thread-new").click()
    expect(chat.messages("user")).to_have_count(0)
    chat.send(scenario)
    chat.wait("interrupted")
    return demo_agent.last_thread()


def _resumes(demo_agent: DemoAgent, thread: str) -> int:
    return len([r for r in demo_agent.records(thread) if r.get("resume")])


def _inbox(chat: Chat) -> Page:
    inbox = chat.page.context.new_page()
    inbox.set_viewport_size({"width": 1280, "height": 900})
    inbox.goto(chat.base_url + "/inbox")
    return inbox


def test_a_bulk_approval_answers_each_plain_approval_once_and_reports_the_skips(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("expiring")
    started = time.monotonic()  # the request was raised before this: it expires by started + EXPIRES_IN
    expiring = demo_agent.last_thread()
    first = _new_thread(chat, "approval", demo_agent)
    second = _new_thread(chat, "approval", demo_agent)
    elsewhere = _new_thread(chat, "approval", demo_agent)
    form = _new_thread(chat, "choice", demo_agent)
    inbox = _inbox(chat)
    expect(inbox.get_by_test_id("inbox-item")).to_have_count(5, timeout=20_000)
    expect(inbox.get_by_test_id("inbox-count")).to_have_text("5", timeout=SYNC_MS)
    ARTIFACTS.mkdir(exist_ok=True)
    inbox.locator(".ic-main").screenshot(path=str(ARTIFACTS / "inbox-page.png"),  # the README's
                                         style=".ic-nav { display: none !important; }")
    time.sleep(max(0.0, EXPIRES_IN + 0.5 - (time.monotonic() - started)))  # the confirmation has expired now
    inbox.get_by_test_id("inbox-select-all").click()
    expect(inbox.get_by_test_id("inbox-select").first).to_have_attribute("aria-checked", "true")
    chat.page.locator(f'[data-testid="thread-item"][data-thread-id="{elsewhere}"]').click()  # another tab answers
    expect(chat.card()).to_be_visible(timeout=20_000)
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    inbox.get_by_test_id("inbox-approve-selected").click()
    confirm = inbox.get_by_test_id("inbox-bulk-confirm")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("5")
    inbox.get_by_test_id("inbox-bulk-confirm-yes").click()
    result = inbox.get_by_test_id("inbox-bulk-result")
    expect(result).to_have_attribute("data-done", "2", timeout=20_000)
    expect(result).to_have_attribute("data-skipped", "3")
    expect(result).to_contain_text("expired")
    expect(result).to_contain_text("answered elsewhere")
    expect(result).to_contain_text("not a plain approval")
    deadline = time.monotonic() + 10
    while _resumes(demo_agent, first) + _resumes(demo_agent, second) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # nothing more arrives
    counts = {name: _resumes(demo_agent, thread) for name, thread in
              [("first", first), ("second", second), ("elsewhere", elsewhere), ("expiring", expiring), ("form", form)]}
    assert counts == {"first": 1, "second": 1, "elsewhere": 1, "expiring": 0, "form": 0}, counts
    expect(inbox.get_by_test_id("inbox-item")).to_have_count(2, timeout=SYNC_MS)  # the expired one and the form
    expect(chat.page.get_by_test_id("inbox-count")).to_have_text("2", timeout=SYNC_MS)  # live, on the chat page
    chat.page.locator(f'[data-testid="thread-item"][data-thread-id="{first}"]').click()
    entry = chat.page.get_by_test_id("audit-entry")
    expect(entry).to_have_attribute("data-by", "bulk", timeout=SYNC_MS)


def test_the_inbox_keys_approve_reject_and_select(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("approval")
    approve = demo_agent.last_thread()
    reject = _new_thread(chat, "approval", demo_agent)
    inbox = _inbox(chat)
    rows = inbox.get_by_test_id("inbox-item")
    expect(rows).to_have_count(2, timeout=20_000)
    row = inbox.locator(f'[data-testid="inbox-item"][data-thread-id="{approve}"]')
    row.focus()
    inbox.keyboard.press(" ")
    expect(row.get_by_test_id("inbox-select")).to_have_attribute("aria-checked", "true")
    inbox.keyboard.press(" ")
    expect(row.get_by_test_id("inbox-select")).to_have_attribute("aria-checked", "false")
    inbox.keyboard.press("a")
    expect(rows).to_have_count(1, timeout=SYNC_MS * 5)
    other = inbox.locator(f'[data-testid="inbox-item"][data-thread-id="{reject}"]')
    other.focus()
    inbox.keyboard.press("r")
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible(timeout=SYNC_MS * 5)
    deadline = time.monotonic() + 10
    while _resumes(demo_agent, reject) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    sent = {thread: [r["resume"] for r in demo_agent.records(thread) if r.get("resume")]
            for thread in (approve, reject)}
    assert [e["payload"] for e in sent[approve][0]] == [{"approved": True}], sent
    assert [e["payload"] for e in sent[reject][0]] == [{"approved": False}], sent
