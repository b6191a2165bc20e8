"""Every dojo page the AG-UI server-starter-all-features example serves, in Chromium, with the demo site
pointed at it by ``INTERRUPT_CHAT_DOJO_URL`` (contracts §5.4). What it emits differently from the demo
agent must land where the pages read it: tool calls without ``parentMessageId``, calls and results that
come only inside a ``MESSAGES_SNAPSHOT``, a state moved by ``STATE_SNAPSHOT`` and ``STATE_DELTA``,
``PredictState``."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import Chat

STORY_START = "Once upon a time, there was a dog named"


@pytest.mark.dojo("/")
def test_agentic_chat_streams_its_answer_and_a_snapshot_brings_a_backend_call(chat: Chat):
    chat.open("/")
    chat.send("hello")
    chat.wait("idle")
    answer = chat.messages("assistant").last
    expect(answer).to_contain_text("counting down: 10")
    expect(answer).to_contain_text("✓")
    chat.send("backend_tool")  # the call and its result only inside a MESSAGES_SNAPSHOT
    chat.wait("idle")
    call = chat.page.locator('[data-testid="tool-call"][data-tool-name="lookup_weather"]')
    expect(call).to_have_count(1)
    expect(call).to_have_attribute("data-status", "complete")
    expect(chat.messages("user")).to_have_count(2)  # the snapshot kept what the person wrote
    expect(chat.messages("user").first).to_have_text("hello")


@pytest.mark.dojo("/steps")
def test_human_in_the_loop_steps_are_picked_and_the_agent_goes_on(chat: Chat):
    chat.open("/steps")
    chat.send("Hi")
    wait = chat.page.get_by_test_id("tool-wait")
    expect(wait).to_have_attribute("data-tool-name", "generate_task_steps")
    steps = wait.get_by_test_id("task-step")
    expect(steps).to_have_count(10)
    expect(steps.nth(1)).to_be_checked()
    steps.nth(1).uncheck()
    wait.get_by_test_id("tool-respond").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_have_text("Ok! I'm working on it.")
    expect(chat.page.get_by_test_id("tool-wait")).to_have_count(0)


@pytest.mark.dojo("/progress")
def test_agentic_generative_ui_moves_the_steps_by_state_deltas(chat: Chat):
    chat.open("/progress")
    chat.send("Hi")
    steps = chat.page.get_by_test_id("progress-step")
    expect(steps).to_have_count(10)
    expect(steps.last).to_have_attribute("data-status", "pending")  # the first snapshot
    expect(steps.first).to_have_attribute("data-status", "completed", timeout=10_000)  # then a delta
    chat.wait("idle", timeout=40_000)
    for index in range(10):
        expect(steps.nth(index)).to_have_attribute("data-status", "completed")
    expect(chat.page.get_by_test_id("progress-card").get_by_role("heading")).to_have_text("Task progress")


@pytest.mark.dojo("/tool-ui")
def test_backend_tool_rendering_draws_a_call_that_came_in_a_snapshot(chat: Chat):
    chat.open("/tool-ui")
    chat.send("What is the weather in San Francisco?")
    chat.wait("idle")
    card = chat.page.get_by_test_id("weather-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("weather-city")).to_have_text("San Francisco")
    expect(card.get_by_test_id("weather-forecast")).to_have_text("sunny, 20 °C")
    call = chat.page.locator('[data-testid="tool-call"][data-tool-name="get_weather"]')
    expect(call).to_have_attribute("data-status", "complete")  # its result came with it
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


@pytest.mark.dojo("/haiku")
def test_tool_based_generative_ui_draws_the_haiku(chat: Chat):
    chat.open("/haiku")
    chat.page.get_by_test_id("scenario-chip").click()  # the dojo's own prompt
    chat.wait("idle")
    card = chat.page.get_by_test_id("haiku-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("haiku-japanese-line")).to_have_text(["エーアイの", "橋つなぐ道", "コパキット"])
    expect(card.get_by_test_id("haiku-english-line")).to_have_text(["From AI's realm", "A bridge-road linking us—",
                                                                   "CopilotKit."])
    expect(chat.page.get_by_test_id("tool-wait")).to_have_count(0)  # its result came with it: nothing waits


@pytest.mark.dojo("/shared-state")
def test_shared_state_shows_the_agents_recipe_and_keeps_its_records(chat: Chat):
    chat.open("/shared-state")
    chat.send("Please give me a pasta recipe")
    chat.wait("idle")
    ingredients = chat.page.get_by_test_id("recipe-ingredients")
    expect(ingredients).to_have_value("chicken breast (1)\nchili powder (1 tsp)\nSalt (a pinch)\n"
                                      "Lettuce leaves (handful)")
    expect(chat.page.get_by_test_id("recipe-instructions").locator("li")).to_have_count(3)
    ingredients.fill("chicken breast (1)\nLime (half)")
    chat.page.get_by_test_id("recipe-title").fill("Lettuce wraps")
    chat.page.get_by_test_id("recipe-save").click()
    expect(ingredients).to_have_value("chicken breast (1)\nLime (half)")  # the state now, read back
    expect(chat.page.get_by_test_id("recipe-instructions").locator("li")).to_have_count(3)  # kept


@pytest.mark.dojo("/document")
def test_predictive_state_updates_grow_the_document_then_reject_and_keep(chat: Chat):
    chat.open("/document")
    text = chat.page.get_by_test_id("document-text")
    chat.send("Write a story")
    wait = chat.page.locator('[data-testid="tool-wait"][data-tool-name="confirm_changes"]')
    expect(text).to_contain_text(STORY_START)
    expect(wait).to_be_visible()
    wait.get_by_test_id("tool-cancel").click()
    chat.wait("idle")
    expect(text).to_have_text("Nothing written yet.")  # rejected: the document from before
    expect(chat.messages("assistant").last).to_have_text("Ok!")
    chat.send("Write a story")
    expect(wait).to_be_visible()
    wait.get_by_test_id("tool-respond").click()
    chat.wait("idle")
    expect(text).to_contain_text(STORY_START)
    chat.page.reload()
    expect(chat.page.get_by_test_id("document-text")).to_contain_text(STORY_START, timeout=20_000)
