"""LangGraph (``ag-ui-langgraph``): graphs whose nodes call ``interrupt()``, on both channels.

``/std/*`` sends the AG-UI 1.0 outcome and the legacy CUSTOM event in one run; ``/legacy/*`` only the
CUSTOM ``on_interrupt`` (no id, no cancel on the wire: the chat answers through ``forwardedProps``).
The graph's answers arrive only in ``MESSAGES_SNAPSHOT``.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from . import flows

PRODUCER = "langgraph"
UNSUPPORTED = {
    "edit": "a graph node reads whatever payload `interrupt()` returns; there is no tool call to edit.",
    "frontend_tool": "ag-ui-langgraph passes `tools` to the graph's state, where a chat model would bind them; "
                     "an LLM-free graph has no model to call them.",
    "frontend_tool_declined": "as above.",
    "allow_thread": "a graph node's `interrupt()` names no tool (no `toolCallId`, no `metadata.tool_name`), so "
                    "there is no tool for a rule to remember; bulk decisions answer its approvals.",
    "allow_always": "as above.",
}


@pytest.mark.hitl("approve")
def test_approve(chat, agent_url, producer_url):
    agent_url(producer_url + "/std/approval")
    card = flows.ask(chat, "please delete")
    assert card.get_attribute("data-interrupt-id")  # S2: the outcome wins over the CUSTOM event
    flows.answer(chat, card, "interrupt-approve", "approved: True")


@pytest.mark.hitl("reject")
def test_reject(chat, agent_url, producer_url):
    agent_url(producer_url + "/std/approval")
    flows.answer(chat, flows.ask(chat, "please delete"), "interrupt-reject", "approved: False")


@pytest.mark.hitl("cancel")
def test_cancel(chat, agent_url, producer_url):
    agent_url(producer_url + "/std/approval")
    flows.answer(chat, flows.ask(chat, "please delete"), "interrupt-cancel", "cancelled")
    chat.send("and again")  # the finished graph starts over: a new interrupt on the same thread
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(1)


@pytest.mark.hitl("form")
@pytest.mark.hitl("legacy")
def test_legacy_form(chat, agent_url, producer_url):
    agent_url(producer_url + "/legacy/form")
    card = flows.ask(chat, "fill the form")
    expect(card).to_have_attribute("data-interrupt-id", "")  # legacy: no id
    card.locator('input[name="name"]').fill("Ada")
    card.locator('input[name="count"]').fill("3")
    chat.shot("langgraph-legacy-form")
    flows.answer(chat, card, "interrupt-submit", "name=Ada count=3")


@pytest.mark.hitl("several")
def test_several_resumed_in_one_request(chat, agent_url, producer_url):
    agent_url(producer_url + "/std/multi")
    chat.interrupt("two things")
    expect(chat.cards()).to_have_count(2)
    chat.card(1).get_by_test_id("interrupt-cancel").click()
    chat.card(0).get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("first: approved: True; second: cancelled")


@pytest.mark.hitl("bulk")
def test_bulk_approve(chat, agent_url, producer_url):
    agent_url(producer_url + "/std/approval")
    flows.bulk_approve(chat, "approved: True", "please delete")
