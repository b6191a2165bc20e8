"""axe-core finds nothing, in the light and the dark theme, on every page of the demo site and in every
state of the chat: idle, streaming, each kind of interrupt, three at once, expired, a card's error, a
failed run, the /approval and /manual slots, the inbox with and without a request, the thread dialogs.

One page load per state; every rule axe runs by default (docs/accessibility.md).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from .a11y import assert_axe_clean
from .conftest import EXPIRES_IN

pytestmark = pytest.mark.stage("prod", why="axe-core reads only the drawn page, which both stages draw alike")



@pytest.mark.parametrize("path", ["/", "/approval", "/manual", "/steps", "/confirm", "/tool-ui", "/progress",
                                  "/shared-state"])
def test_axe_idle_pages(chat, path):
    chat.open(path)
    assert_axe_clean(chat.page, f"{path} idle")


def test_axe_inbox_page_empty(chat):
    chat.page.goto(chat.base_url + "/inbox")
    expect(chat.page.get_by_test_id("inbox-empty")).to_be_visible(timeout=120_000)
    assert_axe_clean(chat.page, "/inbox empty")


def test_axe_streaming(chat):
    chat.open()
    chat.send("long")
    chat.wait("running")
    expect(chat.messages("assistant").last).to_contain_text("very long answer")
    assert_axe_clean(chat.page, "streaming")
    chat.wait("running")  # the answer was still streaming throughout
    chat.page.get_by_test_id("chat-stop").click()
    chat.wait("idle")


@pytest.mark.parametrize("scenario", ["choice", "credential", "multi", "legacy", "legacy-string", "both", "tools",
                                      "markdown"])
def test_axe_interrupt_kinds_and_answers(chat, scenario):
    chat.open()
    chat.send(scenario)
    chat.wait("idle" if scenario in ("tools", "markdown") else "interrupted")
    if scenario == "multi":
        expect(chat.cards()).to_have_count(3)
    assert_axe_clean(chat.page, scenario)


def _opener(page: Page, row, opener: str, shown: str) -> Callable[[], None]:
    def open_it() -> None:
        row.get_by_test_id(opener).click()
        expect(page.get_by_test_id(shown)).to_be_visible()
    return open_it


def _closer(page: Page, shown: str) -> Callable[[], None]:
    def close_it() -> None:
        page.keyboard.press("Escape")
        expect(page.get_by_test_id(shown)).to_have_count(0)
    return close_it


def test_axe_tool_approval_card_error_inbox_and_thread_dialogs(chat):
    chat.interrupt("approval")
    page = chat.page
    assert_axe_clean(page, "tool approval")
    card = chat.card()
    card.get_by_test_id("interrupt-edit-args").fill("{not json")
    card.get_by_test_id("interrupt-approve-edited").click()
    expect(card.get_by_test_id("interrupt-error")).to_be_visible()
    assert_axe_clean(page, "card error")

    row = page.locator('[data-testid="thread-item"][data-current="true"]').locator("xpath=..")
    # a dialog hides the rest of the page (the theme toggle too): it is opened once per theme
    assert_axe_clean(page, "delete dialog", _opener(page, row, "thread-delete", "thread-delete-confirm"),
                     _closer(page, "thread-delete-confirm"))
    assert_axe_clean(page, "rename popover", _opener(page, row, "thread-rename", "thread-rename-input"),
                     _closer(page, "thread-rename-input"))

    page.goto(chat.base_url + "/inbox")
    expect(page.get_by_test_id("inbox-item")).to_have_count(1, timeout=120_000)
    assert_axe_clean(page, "/inbox with a request")


def test_axe_expired_card(chat):
    chat.interrupt("expiring")
    assert_axe_clean(chat.page, "expiring")
    expect(chat.card()).to_have_attribute("data-expired", "true", timeout=(EXPIRES_IN + 5) * 1000)
    assert_axe_clean(chat.page, "expired")


def test_axe_failed_run(chat):
    chat.open()
    chat.send("error")
    chat.wait("error")
    expect(chat.page.get_by_test_id("chat-error")).to_be_visible()
    assert_axe_clean(chat.page, "failed run")


def test_axe_approval_page_slot(chat):
    chat.interrupt("question", "/approval")
    expect(chat.page.get_by_test_id("approval-question")).to_have_text("Ship it?")
    assert_axe_clean(chat.page, "/approval slot")


def test_axe_manual_page_aside(chat):
    chat.interrupt("legacy-string", "/manual")
    expect(chat.page.get_by_test_id("manual-label")).to_have_text("APPROVAL: PUBLISH THE DRAFT?")
    assert_axe_clean(chat.page, "/manual aside")


def test_axe_steps_page_tool_wait(chat):
    chat.interrupt("steps", "/steps")
    expect(chat.page.get_by_test_id("tool-wait")).to_have_count(1)
    assert_axe_clean(chat.page, "/steps tool call waiting")


def test_axe_confirm_page_tool_wait(chat):
    chat.interrupt("confirm", "/confirm")
    expect(chat.page.get_by_test_id("tool-wait").get_by_test_id("tool-approve")).to_be_visible()
    assert_axe_clean(chat.page, "/confirm tool call waiting")


def test_axe_policies_inbox_selection_bulk_confirmation_and_result(chat):
    page = chat.page
    page.goto(chat.base_url + "/policies")
    expect(page.get_by_test_id("policy-empty")).to_be_visible(timeout=120_000)
    assert_axe_clean(page, "/policies empty")
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-allow-thread").click()
    chat.wait("idle")
    page.get_by_test_id("thread-new").click()
    expect(chat.messages("user")).to_have_count(0)
    chat.send("multi")  # a tool approval, a choice and a confirmation, in a thread of its own
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(3)
    page.goto(chat.base_url + "/policies")
    expect(page.locator('[data-testid="policy-item"][data-source="person"]')).to_have_count(1, timeout=120_000)
    assert_axe_clean(page, "/policies with a rule")
    page.goto(chat.base_url + "/inbox")
    expect(page.get_by_test_id("inbox-item")).to_have_count(3, timeout=120_000)
    page.get_by_test_id("inbox-select-all").click()
    page.locator('[data-testid="inbox-item"][data-reason="tool_call"] .ic-row [data-ic-toggle]').click()  # "Details"
    assert_axe_clean(page, "/inbox selected, details open")

    def open_it() -> None:
        page.get_by_test_id("inbox-reject-selected").click()
        expect(page.get_by_test_id("inbox-bulk-confirm")).to_be_visible()

    assert_axe_clean(page, "bulk confirmation", open_it, _closer(page, "inbox-bulk-confirm"))
    page.get_by_test_id("inbox-reject-selected").click()
    page.get_by_test_id("inbox-bulk-confirm-yes").click()
    expect(page.get_by_test_id("inbox-bulk-result")).to_have_attribute("data-skipped", "1", timeout=20_000)
    assert_axe_clean(page, "/inbox bulk result")
