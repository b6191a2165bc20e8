"""What an app builder sees in the browser (issue 39 §3): a closed tab gets no pushes, thread titles keep their
descenders, the bulk confirmation counts in the singular, "Edit arguments" is folded, a reused link says so."""

from __future__ import annotations

import itertools
import re
import time

import pytest
from playwright.sync_api import Browser, expect

from interrupt_chat.demo.agent.scenarios import LONG_DELTAS

from .conftest import Chat, DemoAgent, LogCapture
from .test_decision_links import Hook, hook  # noqa: F401 - the webhook that carries the link

pytestmark = pytest.mark.stage("dev", why="details an app builder sees, under React's development checks")

SENTENCE = "This is a very long answer streamed slowly so that you can stop it ."
LONG_TEXT = " ".join(itertools.islice(itertools.cycle(SENTENCE.split()), LONG_DELTAS))
GONE = "Attempting to send delta to disconnected client"


def test_a_tab_closed_mid_answer_gets_no_pushes_and_its_run_is_kept(chat: Chat, log_capture: LogCapture):
    chat.open()
    chat.send("long")
    chat.wait("running")
    expect(chat.messages("assistant").last).to_contain_text("This is a very long")
    before = len(log_capture.lines)
    context = chat.page.context
    chat.page.close()  # the tab goes while the agent still answers (a few seconds more)
    time.sleep(3)
    later = Chat(context.new_page(), chat.base_url).open()  # the same browser: the same person
    later.page.get_by_test_id("thread-item").filter(has_text="long").first.click()
    later.wait("idle", timeout=60_000)
    expect(later.messages("assistant").last).to_have_text(LONG_TEXT)  # the run went on and was saved whole
    warned = [line for line in log_capture.lines[before:] if GONE in line]
    # the run's end still updates the closed tab's stored state (its pending set, its thread list): at most those
    assert len(warned) <= 3, f"{len(warned)} pushes to the closed tab: {warned[:3]}"


def test_thread_titles_keep_their_descenders(chat: Chat):
    chat.open()
    chat.send("gypsy jumping query")
    chat.wait("idle")
    title = chat.page.get_by_test_id("thread-item").first.locator(".ic-thread-title")
    expect(title).to_have_text("gypsy jumping query")
    clipped = title.evaluate("el => el.scrollHeight - el.clientHeight")
    assert clipped <= 0, f"the title's line box is {clipped}px taller than what it shows: descenders are cut off"
    chat.page.get_by_test_id("thread-item").first.screenshot(path="/tmp/builder-thread-title.png")


def test_the_bulk_confirmation_counts_one_request_in_the_singular(chat: Chat):
    chat.interrupt("approval")
    inbox = chat.page.context.new_page()
    inbox.set_viewport_size({"width": 1280, "height": 900})
    inbox.goto(chat.base_url + "/inbox")
    expect(inbox.get_by_test_id("inbox-item")).to_have_count(1, timeout=20_000)
    inbox.get_by_test_id("inbox-select").first.click()
    inbox.get_by_test_id("inbox-approve-selected").click()
    confirm = inbox.get_by_test_id("inbox-bulk-confirm")
    expect(confirm.get_by_role("heading")).to_have_text("Approve 1 selected request?")  # not "1 selected requests"
    inbox.get_by_test_id("inbox-bulk-confirm-no").click()


def test_edit_arguments_is_folded_until_opened(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("approval")
    card = chat.card()
    fold = card.locator(".ic-edit[data-ic-fold]")  # (the rule editor folds too)
    toggle = card.get_by_role("button", name="Edit arguments")
    expect(fold).to_have_attribute("data-open", "false")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(card.get_by_test_id("interrupt-approve-edited")).to_be_hidden()  # folded: nothing to submit yet
    card.screenshot(path="/tmp/builder-card-folded.png")
    toggle.click()
    expect(fold).to_have_attribute("data-open", "true")
    expect(card.get_by_test_id("interrupt-approve-edited")).to_be_visible()
    card.screenshot(path="/tmp/builder-card-open.png")


def test_a_reused_decision_link_says_it_was_answered_before_when_and_how(chat: Chat, hook: Hook,  # noqa: F811
                                                                         browser: Browser):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    phone = browser.new_context().new_page()  # another browser: none of the owner's cookies
    phone.goto(chat.base_url + hook.link_for(interrupt_id))
    phone.get_by_test_id("decide-approve").click()
    done = phone.get_by_test_id("decide-done")
    expect(done).to_have_attribute("data-action", "resolved")
    expect(done).to_have_attribute("data-again", "false")
    expect(done).to_contain_text("Approved: your answer was sent.")  # this click answered it
    phone.reload()
    expect(done).to_have_attribute("data-again", "true")
    expect(done).to_contain_text(re.compile(
        r"This request was already answered: approved on \d{4}-\d\d-\d\d at \d\d:\d\d UTC through a decision link\."))
    expect(done).not_to_contain_text("your answer was sent")
