"""The keyboard only: the skip link, focus that follows the agent's request and comes back to the composer,
and what a screen reader announces (the live regions), once per change, never per stream push.

Every step is a key press; what is checked is ``document.activeElement`` and the live regions' changes.
"""

from __future__ import annotations

import itertools

import pytest
from playwright.sync_api import expect

from .a11y import active, announcements, pushes, record_announcements, tab_until, wait_focus

pytestmark = pytest.mark.stage("dev", why="focus and keys, the same in both builds, under React's development checks")


def test_skip_link_then_a_tool_approval_answered_with_the_keyboard(chat):
    chat.open()
    page = chat.page
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the message box")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()  # shown when focused
    page.keyboard.press("Enter")
    expect(chat.input).to_be_focused()
    page.keyboard.type("approval")
    page.keyboard.press("Enter")
    chat.wait("interrupted")
    # the composer locked: focus moved to the card's heading, not to <body>
    wait_focus(page, "interrupt-prompt")
    assert active(page)["card"] == 0
    expect(chat.card().get_by_test_id("interrupt-prompt")).to_be_in_viewport()
    presses = tab_until(page, "interrupt-approve")
    assert presses <= 4, f"{presses} Tabs from the card's heading to Approve"
    assert active(page)["card"] == 0
    page.keyboard.press("Enter")
    chat.wait("idle")
    wait_focus(page, "chat-input")  # the set is answered: back to the composer
    expect(chat.messages("assistant").last).to_contain_text("Approved")
    page.keyboard.type("hello")
    page.keyboard.press("Enter")
    expect(chat.messages("user")).to_have_count(2)


def test_a_restored_request_takes_the_focus_and_the_skip_link_leads_to_it(chat):
    chat.interrupt("choice")
    page = chat.page
    wait_focus(page, "interrupt-prompt")
    page.reload()  # the pending choice is restored, and the page opens on it
    chat.wait("interrupted")
    wait_focus(page, "interrupt-prompt")
    skip = page.get_by_role("link", name="Skip to the message box")
    tab_until(page, skip, limit=40, backwards=True)
    page.keyboard.press("Enter")  # the composer is locked: the link leads to what must be answered first
    wait_focus(page, "interrupt-prompt")
    tab_until(page, chat.card().locator('select[name="color"]'), limit=3)
    page.keyboard.press("ArrowDown")  # the first colour
    tab_until(page, "interrupt-submit", limit=3)
    page.keyboard.press("Enter")
    chat.wait("idle")
    wait_focus(page, "chat-input")


def test_three_cards_answered_with_the_keyboard_focus_returns_to_the_composer(chat):
    chat.open()
    page = chat.page
    chat.input.focus()
    page.keyboard.type("multi")
    page.keyboard.press("Enter")
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(3)
    wait_focus(page, "interrupt-prompt")
    assert active(page)["card"] == 0
    for index in range(3):  # Cancel each card, Tab by Tab
        tab_until(page, "interrupt-cancel", limit=12)
        assert active(page)["card"] == index
        page.keyboard.press("Enter")
        if index < 2:
            expect(chat.card(index)).to_contain_text("cancelled")
    chat.wait("idle")
    wait_focus(page, "chat-input")


def test_approval_and_manual_slots_take_the_focus_and_give_it_back(chat):
    chat.interrupt("question", "/approval")
    page = chat.page
    wait_focus(page, "approval-question")
    expect(page.get_by_test_id("approval-question")).to_have_text("Ship it?")
    tab_until(page, "approval-approve", limit=2)
    page.keyboard.press("Enter")
    chat.wait("idle")
    wait_focus(page, "chat-input")

    chat.open("/manual")
    chat.input.focus()
    page.keyboard.type("legacy-string")
    page.keyboard.press("Enter")
    chat.wait("interrupted")
    wait_focus(page, "manual-label")
    tab_until(page, "manual-continue", limit=3)
    page.keyboard.press("Enter")
    chat.wait("idle")
    wait_focus(page, "chat-input")


def test_run_status_is_announced_once_per_change_not_per_stream_push(chat):
    chat.open()
    page = chat.page
    expect(page.get_by_role("status").filter(has_text="Ready")).to_have_count(1)
    record_announcements(page)
    chat.send("long")
    page.wait_for_function("() => window.__pushes >= 20", timeout=30_000)  # the answer streams in...
    page.get_by_test_id("chat-stop").click()
    chat.wait("idle")
    said = [entry for entry in announcements(page) if entry["testid"] == "run-status"]
    assert pushes(page) >= 20
    texts = [entry["text"] for entry in said]
    assert texts and texts[0].startswith("Working") and texts[-1].startswith("Ready"), texts
    assert all(a != b for a, b in itertools.pairwise(texts)), texts  # nothing said twice in a row
    assert len(said) <= 4, f"{len(said)} announcements of the run status for {pushes(page)} pushes: {texts}"
    assert not [e for e in announcements(page) if e["testid"] != "run-status"], announcements(page)


def test_errors_are_alerts_announced_once(chat):
    chat.open()
    page = chat.page
    record_announcements(page)
    chat.send("error")
    chat.wait("error")
    failed = page.get_by_role("alert")
    expect(failed).to_have_count(1)
    expect(failed).to_have_attribute("data-testid", "chat-error")
    expect(failed).to_contain_text("Simulated failure after interrupt")
    said = announcements(page)
    assert len([e for e in said if e["role"] == "alert"]) == 1, said
    status = [e["text"] for e in said if e["testid"] == "run-status"]
    assert status and status[-1].startswith("Failed"), status

    page.reload()  # a fresh page on the same thread: a card's error
    chat.wait("error")
    chat.send("approval")
    chat.wait("interrupted")
    record_announcements(page)
    card = chat.card()
    card.get_by_test_id("interrupt-edit-args").fill("{not json")
    card.get_by_test_id("interrupt-approve-edited").click()
    alert = card.get_by_role("alert")
    expect(alert).to_have_count(1)
    expect(alert).to_have_attribute("data-testid", "interrupt-error")
    card_alerts = [e for e in announcements(page) if e["role"] == "alert"]
    assert len(card_alerts) == 1, card_alerts


def test_a_waiting_frontend_tool_call_takes_the_focus_and_gives_it_back(chat):
    chat.open("/steps")
    page = chat.page
    chat.input.focus()
    page.keyboard.type("steps")
    page.keyboard.press("Enter")
    chat.wait("interrupted")
    wait = page.get_by_test_id("tool-wait")
    expect(wait).to_have_count(1)
    page.wait_for_function("() => document.activeElement && document.activeElement.closest"
                           "('[data-testid=\"tool-wait\"]') !== null", timeout=20_000)
    tab_until(page, "tool-respond", limit=8)
    page.keyboard.press("Enter")
    chat.wait("idle")
    wait_focus(page, "chat-input")
