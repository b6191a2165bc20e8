"""The seed's two useInterrupt examples: /approval (custom in-chat slot) and /manual (aside)."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from .test_scenarios import resumes


def test_approval_page_custom_slot_shows_the_question(chat, demo_agent):
    chat.interrupt("question", "/approval")
    slot = chat.page.get_by_test_id("interrupt-slot")
    expect(slot.get_by_test_id("approval-question")).to_have_text("Ship it?")
    expect(chat.cards()).to_have_count(0)  # the custom slot replaces the default one
    chat.shot("approval-page")
    slot.get_by_test_id("approval-approve").click()
    chat.wait("idle")
    command = resumes(demo_agent, demo_agent.last_thread())[0]["forwardedProps"]["command"]
    assert command["resume"] == {"approved": True}


def test_approval_page_falls_back_to_message_and_rejects(chat, demo_agent):
    chat.open("/approval")
    chat.send("choice")  # a standard interrupt: event.value is the interrupt, no question -> message
    chat.wait("interrupted")
    expect(chat.page.get_by_test_id("approval-question")).to_have_text("Pick a color")
    chat.page.get_by_test_id("approval-reject").click()
    chat.wait("error")  # {"approved": false} does not fit the color schema: the strict agent says so
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert sent[0]["resume"][0]["payload"] == {"approved": False}
    expect(chat.page.get_by_test_id("chat-error")).to_contain_text("INVALID_PAYLOAD")
    expect(chat.page.get_by_test_id("approval-question")).to_have_text("Pick a color")  # S15: offered again


def test_manual_page_aside_handles_approval_strings(chat, demo_agent):
    chat.interrupt("legacy-string", "/manual")
    aside = chat.page.get_by_test_id("manual-interrupt")
    expect(aside.get_by_test_id("manual-label")).to_have_text("APPROVAL: PUBLISH THE DRAFT?")
    expect(aside.get_by_test_id("manual-value")).to_have_text("approval: publish the draft?")
    expect(chat.page.get_by_test_id("interrupt-slot")).to_have_count(0)  # S18: not drawn in the chat
    expect(chat.input).to_be_disabled()  # S21 still holds
    chat.shot("manual-page")
    aside.get_by_test_id("manual-continue").click()
    chat.wait("idle")
    expect(chat.page.get_by_test_id("manual-interrupt")).to_have_count(0)
    command = resumes(demo_agent, demo_agent.last_thread())[0]["forwardedProps"]["command"]
    assert command == {"resume": {"accepted": True}, "interruptEvent": "approval: publish the draft?"}


def test_manual_page_other_interrupts_fall_to_the_default_slot(chat, demo_agent):
    chat.open("/manual")
    chat.send("question")  # an object value: the manual configuration's enabled() says no (S20)
    chat.wait("interrupted")
    expect(chat.page.get_by_test_id("manual-interrupt")).to_have_count(0)
    card = chat.card()
    expect(card.get_by_test_id("interrupt-prompt")).to_have_text("Ship it?")
    card.get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    command = resumes(demo_agent, demo_agent.last_thread())[0]["forwardedProps"]["command"]
    assert command["resume"] == {"approved": True} and json.loads(command["interruptEvent"]) == {"question": "Ship it?"}
