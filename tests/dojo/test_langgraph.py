"""The dojo pages against the AG-UI repository's LangGraph dojo agents (``examples/langgraph_dojo``), unmodified,
their model replaced by the dojo's own LLM mock (``@copilotkit/aimock`` with the dojo's recorded fixtures), sending
the prompts the dojo's own end-to-end tests send (``apps/dojo/e2e/tests/langgraphFastAPITests``). Run with
``DOJO_SERVER=langgraph``. Issue 26 §4 and §5: human_in_the_loop and subgraphs interrupt on the legacy channel
(``on_interrupt``) with values the default slot must show and answer as the dojo does."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import Chat

BROWNIES = ("Give me a plan to make brownies, there should be only one step with eggs and one step with oven, this is "
            "a strict requirement so adhere")
PASTA = 'Please give me a pasta recipe of your choosing, but one of the ingredients should be "Pasta"'
ATLANTIS = "Give me a story for a dragon called Atlantis in document"
DONE = "Done! I've completed that for you."


@pytest.mark.dojo("/")
def test_agentic_chat_answers(chat: Chat):
    chat.open("/")
    chat.send("Hi, I am duaa")
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("Hello duaa!")
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


@pytest.mark.dojo("/steps")
def test_human_in_the_loop_steps_are_a_checklist_answered_as_the_dojo_answers(chat: Chat):
    chat.open("/steps")
    chat.send(BROWNIES)
    chat.wait("interrupted", timeout=40_000)
    card = chat.card()
    steps = card.get_by_test_id("interrupt-step")
    expect(steps).to_have_count(3)
    expect(card).to_contain_text("Crack eggs into bowl")
    card.get_by_role("checkbox", name="Crack eggs into bowl").uncheck()
    card.get_by_test_id("interrupt-steps-submit").click()
    chat.wait("idle", timeout=40_000)
    expect(chat.cards()).to_have_count(0)
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)
    chat.send("Does the planner include eggs? ⚠️ Reply with only words 'Yes' or 'No' (no explanation, no punctuation).")
    chat.wait("idle", timeout=40_000)
    expect(chat.messages("assistant").last).to_have_text("No")


@pytest.mark.dojo("/shared-state")
def test_shared_state_the_agents_recipe_and_the_persons_edit_travel_both_ways(chat: Chat):
    chat.open("/shared-state")
    chat.send(PASTA)
    chat.wait("idle", timeout=40_000)
    ingredients = chat.page.get_by_test_id("recipe-ingredients")
    expect(ingredients).to_contain_text("Pasta (400g)")
    expect(chat.page.get_by_test_id("recipe-title")).to_have_value("Pasta Aglio e Olio")
    expect(chat.page.get_by_test_id("recipe-instructions").locator("li")).to_have_count(5)
    lines = ingredients.input_value()
    ingredients.fill(lines + "\nPotatoes (12)")
    chat.page.get_by_test_id("recipe-save").click()
    expect(ingredients).to_contain_text("Potatoes (12)")
    chat.send("Give me all the ingredients, also list them in your message")
    chat.wait("idle", timeout=40_000)
    expect(chat.messages("assistant").last).to_contain_text("Potatoes: 12")
    expect(ingredients).to_contain_text("Potatoes (12)")  # the agent's state kept the person's edit
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


@pytest.mark.dojo("/document")
def test_predictive_state_updates_write_the_story_then_keep_and_reject(chat: Chat):
    chat.open("/document")
    text = chat.page.get_by_test_id("document-text")
    chat.send(ATLANTIS)
    wait = chat.page.locator('[data-testid="tool-wait"][data-tool-name="confirm_changes"]')
    expect(wait).to_be_visible(timeout=40_000)  # the call comes only inside a MESSAGES_SNAPSHOT
    expect(text).to_contain_text("a magnificent dragon named Atlantis")
    wait.get_by_test_id("tool-respond").click()
    chat.wait("idle", timeout=40_000)
    expect(chat.messages("assistant").last).to_have_text(DONE)
    chat.send("Change dragon name to Lola")
    expect(wait).to_be_visible(timeout=40_000)
    expect(text).to_contain_text("a magnificent dragon named Lola")
    wait.get_by_test_id("tool-cancel").click()  # rejected: back to the kept story
    chat.wait("idle", timeout=40_000)
    expect(text).to_contain_text("a magnificent dragon named Atlantis")


@pytest.mark.dojo("/subgraphs")
def test_subgraphs_each_sub_agent_asks_and_the_card_names_it(chat: Chat):
    chat.open("/subgraphs")
    chat.send("Help me plan a trip to San Francisco")
    chat.wait("interrupted", timeout=40_000)
    card = chat.card()
    expect(card).to_have_attribute("data-source", "flights")
    options = card.get_by_test_id("interrupt-option")
    expect(options.filter(has_text="KLM")).to_have_count(1)
    options.filter(has_text="KLM").click()
    chat.wait("interrupted", timeout=40_000)  # then the hotels sub-agent asks
    card = chat.card()
    expect(card).to_have_attribute("data-source", "hotels")
    card.get_by_test_id("interrupt-option").filter(has_text="Hotel Zoe").click()
    chat.wait("idle", timeout=40_000)
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)
    expect(chat.messages("assistant").filter(has_text="KLM")).not_to_have_count(0)
    expect(chat.messages("assistant").last).to_contain_text("wonderful experiences")


@pytest.mark.dojo("/progress")
def test_agentic_generative_ui_steps_complete_one_by_one(chat: Chat):
    chat.open("/progress")
    chat.send("Give me a plan to make brownies")
    steps = chat.page.get_by_test_id("progress-step")
    expect(steps.first).to_be_visible(timeout=40_000)
    expect(steps.last).to_have_attribute("data-status", "pending")  # the agent's state moves step by step
    chat.wait("idle", timeout=60_000)
    count = steps.count()
    assert count >= 3
    for index in range(count):
        expect(steps.nth(index)).to_have_attribute("data-status", "completed")
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


@pytest.mark.dojo("/tool-ui")
def test_backend_tool_rendering_draws_the_agents_get_weather(chat: Chat):
    chat.open("/tool-ui")
    chat.send("Weather in San Francisco")
    chat.wait("idle", timeout=40_000)
    card = chat.page.get_by_test_id("weather-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("weather-city")).to_have_text("San Francisco")  # the argument is "location"
    expect(card.get_by_test_id("weather-forecast")).to_have_text("sunny, 20 °C")
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


@pytest.mark.dojo("/haiku")
def test_tool_based_generative_ui_draws_the_haiku(chat: Chat):
    chat.open("/haiku")
    chat.page.get_by_test_id("scenario-chip").click()  # 'Generate Haiku for "I will always win"'
    chat.wait("idle", timeout=40_000)
    card = chat.page.get_by_test_id("haiku-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("haiku-english-line")).to_have_text(["On the path of victory",
                                                                   "I will always keep walking",
                                                                   "Destined to always win"])
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)
