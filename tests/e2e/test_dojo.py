"""The dojo-feature pages: a custom tool renderer (/tool-ui), generative UI from state deltas
(/progress) and a recipe both sides edit (/shared-state, S32); each also axe-clean in its final state."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .a11y import assert_axe_clean
from .conftest import Chat

pytestmark = pytest.mark.stage("prod", why="the dev stage draws these pages in tests/dojo, against the dojo's servers")


@pytest.mark.dojo("/tool-ui")
def test_tool_ui_draws_get_weather_with_its_renderer(chat: Chat):
    chat.open("/tool-ui")
    chat.send("tools")
    chat.wait("idle")
    card = chat.page.get_by_test_id("weather-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("weather-city")).to_have_text("Paris")
    expect(card.get_by_test_id("weather-forecast")).to_have_text("sunny, 21 °C")
    call = chat.page.locator('[data-testid="tool-call"][data-tool-name="get_weather"]')
    expect(call).to_have_attribute("data-status", "complete")
    expect(call.locator(".ic-args")).to_have_count(0)  # not the default card
    chat.shot_content("tool-ui-page")
    assert_axe_clean(chat.page, "/tool-ui weather card")


@pytest.mark.dojo("/progress")
def test_progress_card_follows_the_state_deltas(chat: Chat, demo_agent):
    chat.open("/progress")
    chat.send("progress")
    chat.wait("idle")
    steps = chat.page.get_by_test_id("progress-step")
    expect(steps).to_have_count(3)
    for index in range(3):
        expect(steps.nth(index)).to_have_attribute("data-status", "done")
    expect(chat.messages("assistant").last).to_have_text("All steps are done.")
    chat.shot_content("progress-page")
    assert_axe_clean(chat.page, "/progress done")


@pytest.mark.dojo("/shared-state")
def test_s32_the_recipe_goes_to_the_agent_and_comes_back_edited(chat: Chat, demo_agent):
    chat.open("/shared-state")
    chat.page.get_by_test_id("recipe-title").fill("Pancakes")
    chat.page.get_by_test_id("recipe-ingredients").fill("flour\nmilk")
    chat.page.get_by_test_id("recipe-save").click()
    chat.page.wait_for_timeout(500)
    chat.send("recipe")
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_have_text("I added a pinch of salt to “Pancakes”.")
    expect(chat.page.get_by_test_id("recipe-ingredients")).to_have_value("flour\nmilk\na pinch of salt")
    [request] = demo_agent.records(demo_agent.last_thread())
    assert request["state"] == {"recipe": {"title": "Pancakes", "ingredients": ["flour", "milk"]}}
    chat.shot_content("shared-state-page")
    assert_axe_clean(chat.page, "/shared-state edited by the agent")
