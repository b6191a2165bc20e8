"""The dojo pages added for issue 26 against the demo agent: ``/document`` (predictive state updates),
``/reasoning`` (folded reasoning) and ``/haiku`` (a tool call that arrives only in a ``MESSAGES_SNAPSHOT``)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from interrupt_chat.demo.agent.dojo import STORY

from .a11y import assert_axe_clean
from .conftest import Chat

pytestmark = pytest.mark.stage("prod", why="the dev stage draws these pages in tests/dojo, against the dojo's servers")

WATCH_DOCUMENT = """() => {
  window.__lengths = [];
  const card = document.querySelector('[data-testid="document-card"]');
  new MutationObserver(() => {
    const text = card.querySelector('[data-testid="document-text"]');
    if (text) window.__lengths.push(text.textContent.length);
  }).observe(card, { childList: true, subtree: true, characterData: true });
}"""


@pytest.mark.dojo("/document")
def test_s33_s35_the_document_grows_live_then_is_rejected_or_kept(chat: Chat):
    chat.open("/document")
    text = chat.page.get_by_test_id("document-text")
    expect(text).to_have_text("Nothing written yet.")
    chat.page.evaluate(WATCH_DOCUMENT)
    chat.send("Write a story")
    wait = chat.page.get_by_test_id("tool-wait")
    expect(wait).to_be_visible()
    expect(text).to_have_text(STORY)
    lengths = chat.page.evaluate("window.__lengths")
    assert len(set(lengths)) >= 2 and lengths == sorted(lengths), lengths  # it grew while the argument streamed
    assert_axe_clean(chat.page, "the document and its confirm_changes card")
    chat.shot_content("document-page")  # the README's
    wait.get_by_test_id("tool-cancel").click()  # rejected: the document from before the prediction
    chat.wait("idle")
    expect(text).to_have_text("Nothing written yet.")
    chat.send("Write a story")
    expect(chat.page.get_by_test_id("tool-wait")).to_be_visible()
    chat.page.get_by_test_id("tool-wait").get_by_test_id("tool-respond").click()
    chat.wait("idle")
    expect(text).to_have_text(STORY)
    chat.page.reload()
    expect(chat.page.get_by_test_id("document-text")).to_have_text(STORY, timeout=20_000)


@pytest.mark.dojo("/reasoning")
def test_reasoning_is_folded_above_the_answer_and_stays_folded(chat: Chat):
    chat.open("/reasoning")
    chat.send("think it over")
    chat.wait("idle")
    block = chat.page.get_by_test_id("reasoning")
    expect(block).to_have_count(1)
    expect(block).not_to_have_attribute("open", "")
    expect(block.locator("summary")).to_have_text("Thought")
    answer = chat.messages("assistant").last
    expect(answer).to_contain_text("the simpler option")
    assert block.bounding_box()["y"] < answer.bounding_box()["y"]  # above the answer
    expect(block.locator(".ic-reasoning-text")).not_to_be_visible()
    block.locator("summary").click()
    expect(block.locator(".ic-reasoning-text")).to_contain_text("weigh two options")
    assert_axe_clean(chat.page, "reasoning, opened")
    chat.shot_content("reasoning-page")


@pytest.mark.dojo("/haiku")
def test_a_haiku_that_arrives_only_in_a_snapshot_is_drawn_as_a_card(chat: Chat):
    chat.open("/haiku")
    chat.send('haiku: Generate Haiku for "I will always win"')
    chat.wait("idle")
    card = chat.page.get_by_test_id("haiku-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("haiku-japanese-line")).to_have_count(3)
    expect(card.get_by_test_id("haiku-english-line")).to_have_text(["From AI's realm", "A bridge-road linking us—",
                                                                   "CopilotKit."])
    assert_axe_clean(chat.page, "a haiku card")
    chat.shot_content("haiku-page")


@pytest.mark.dojo("/subgraphs")
def test_a_sub_agent_asks_to_choose_and_the_card_names_it(chat: Chat, demo_agent):
    chat.open("/subgraphs")
    chat.send("flights: help me plan a trip to San Francisco")
    chat.wait("interrupted")
    card = chat.card()
    expect(card).to_have_attribute("data-source", "flights")
    expect(card.get_by_test_id("interrupt-source")).to_have_text("from flights")
    expect(card.get_by_test_id("interrupt-prompt")).to_have_text("Which flight should I book?")
    options = card.get_by_test_id("interrupt-option")
    expect(options).to_have_count(2)
    expect(options.first).to_have_attribute("data-recommended", "true")
    expect(options.first).to_contain_text("KLM")
    expect(card.get_by_test_id("interrupt-approve")).to_have_count(0)
    assert_axe_clean(chat.page, "a sub-agent's options")
    chat.shot_content("subgraphs-page")
    options.last.click()
    chat.wait("idle")
    [resumed] = [r for r in demo_agent.records(demo_agent.last_thread()) if r.get("forwardedProps", {}).get("command")]
    chosen = json.loads(resumed["forwardedProps"]["command"]["resume"])  # the option, JSON-encoded as the dojo does
    assert chosen["airline"] == "United"


def test_legacy_steps_are_a_checklist_answered_as_the_dojo_answers(chat: Chat, demo_agent):
    chat.open()
    chat.send("plan a mission to Mars")
    chat.wait("interrupted")
    card = chat.card()
    steps = card.get_by_test_id("interrupt-step")
    expect(steps).to_have_count(4)
    expect(card.get_by_test_id("interrupt-prompt")).to_have_text("Review the steps, then go on.")
    steps.nth(1).uncheck()
    card.get_by_test_id("interrupt-steps-submit").click()
    chat.wait("idle")
    [resumed] = [r for r in demo_agent.records(demo_agent.last_thread()) if r.get("forwardedProps", {}).get("command")]
    assert resumed["forwardedProps"]["command"]["resume"] == ("The user selected the following steps: Start the "
                                                              "planning, Pack the rover, Check the oxygen twice")
