"""A phone (375 x 740) and a tablet (768 x 1024): what is inside the viewport, with screenshots of it.

The header stays one row, nothing scrolls sideways, the composer is in view on arrival, the chips take
one (sideways scrolling) row, the thread list folds into a drawer on the phone, every touch target is
at least 44 px, and when the agent asks, the newest card and the composer are both in view without
the person scrolling. Screenshots (the viewport only): test-artifacts/phone-*.png, tablet-*.png.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .a11y import PHONE, TABLET, box, fully_visible, header_rows, horizontal_overflow, screenshot, small_targets

pytestmark = pytest.mark.stage("prod", why="boxes in a small viewport: the drawn page, the same in both stages")


SIZES = {"phone": PHONE, "tablet": TABLET}


def _check_arrival(chat, size: str) -> None:
    page = chat.page
    assert header_rows(page) == 1
    assert horizontal_overflow(page) <= 0
    assert fully_visible(page, chat.input), "the composer is below the fold"
    chips = page.get_by_test_id("scenario-chip")
    tops = {round(box(chip)["y"]) for chip in chips.all()}
    assert len(tops) == 1, f"the chips take {len(tops)} rows"
    chips.last.scroll_into_view_if_needed()  # the row scrolls sideways to its last chip
    expect(chips.last).to_be_in_viewport(ratio=0.95)
    assert horizontal_overflow(page) <= 0
    assert small_targets(page) == []


@pytest.mark.parametrize("size", ["phone", "tablet"])
def test_arrival_and_a_tool_approval(chat, size):
    page = chat.page
    page.set_viewport_size(SIZES[size])
    chat.open()
    screenshot(page, f"{size}-idle")
    _check_arrival(chat, size)
    threads = page.get_by_test_id("thread-list")
    if size == "phone":  # folded into a drawer; its summary opens it
        expect(threads).not_to_be_visible()
        drawer = page.get_by_text("Threads and decisions")
        expect(drawer).to_be_visible()
        drawer.click()
        expect(threads).to_be_visible()
        assert small_targets(page) == []
        screenshot(page, f"{size}-threads-open")
        drawer.click()
        expect(threads).not_to_be_visible()
    else:
        expect(threads).to_be_visible()

    page.evaluate("() => window.scrollTo(0, 0)")
    chat.send("approval")
    chat.wait("interrupted")
    card = chat.card()
    expect(card.get_by_test_id("interrupt-prompt")).to_be_focused()
    assert fully_visible(page, card), "the card is not in view"
    assert fully_visible(page, chat.input), "the composer is not in view"
    assert horizontal_overflow(page) <= 0
    assert header_rows(page) == 1
    assert small_targets(page) == []
    screenshot(page, f"{size}-approval")
    page.goto(chat.base_url + "/inbox")  # the same request, in the inbox
    expect(page.get_by_test_id("inbox-item")).to_have_count(1, timeout=120_000)
    assert header_rows(page) == 1
    assert horizontal_overflow(page) <= 0
    assert small_targets(page) == []
    screenshot(page, f"{size}-inbox")


@pytest.mark.parametrize("size", ["phone", "tablet"])
def test_three_cards_the_newest_is_in_view(chat, size):
    page = chat.page
    page.set_viewport_size(SIZES[size])
    chat.open()
    chat.send("multi")
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(3)
    assert fully_visible(page, chat.cards().last), "the newest card is not in view"
    assert fully_visible(page, chat.input), "the composer is not in view"
    assert small_targets(page) == []
    screenshot(page, f"{size}-multi")


def test_phone_manual_aside(chat):
    page = chat.page
    page.set_viewport_size(PHONE)
    chat.open("/manual")
    assert fully_visible(page, chat.input)
    chat.send("legacy-string")
    chat.wait("interrupted")
    assert fully_visible(page, page.get_by_test_id("manual-interrupt")), "the aside is not in view"
    assert fully_visible(page, chat.input), "the composer is not in view"
    assert small_targets(page) == []
    screenshot(page, "phone-manual")
