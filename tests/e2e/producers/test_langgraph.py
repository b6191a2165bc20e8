"""The unmodified demo site against real producers (LangGraph, pydantic-ai), LLM-free.

Each test points new chat sessions at an example server on a loopback port through
``INTERRUPT_CHAT_AGENT_URL``, as a user would, and drives the page through the DOM contract.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.unit.agents import serve_in_thread

langgraph_agent = pytest.importorskip("examples.langgraph_agent")
pydantic_ai_agent = pytest.importorskip("examples.pydantic_ai_agent")


@pytest.fixture(scope="module")
def langgraph_url() -> Iterator[str]:
    with serve_in_thread(langgraph_agent.create_app()) as url:
        yield url


@pytest.fixture(scope="module")
def pydantic_ai_url() -> Iterator[str]:
    with serve_in_thread(pydantic_ai_agent.create_app()) as url:
        yield url


def test_langgraph_standard_outcome_approve(chat, agent_url, langgraph_url):
    agent_url(langgraph_url + "/std/approval")
    chat.interrupt("please delete")
    expect(chat.cards()).to_have_count(1)  # S2: the outcome wins over the CUSTOM event
    assert chat.card().get_attribute("data-interrupt-id")
    chat.shot("langgraph-std-approval")
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("approved: True")  # from MESSAGES_SNAPSHOT


def test_langgraph_legacy_form(chat, agent_url, langgraph_url):
    agent_url(langgraph_url + "/legacy/form")
    chat.interrupt("fill the form")
    card = chat.card()
    expect(card).to_have_attribute("data-interrupt-id", "")  # legacy: no id
    card.locator('input[name="name"]').fill("Ada")
    card.locator('input[name="count"]').fill("3")
    chat.shot("langgraph-legacy-form")
    card.get_by_test_id("interrupt-submit").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("name=Ada count=3")


def test_langgraph_standard_multi_resumes_both(chat, agent_url, langgraph_url):
    agent_url(langgraph_url + "/std/multi")
    chat.interrupt("two things")
    expect(chat.cards()).to_have_count(2)
    chat.card(1).get_by_test_id("interrupt-cancel").click()
    chat.card(0).get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("first: approved: True; second: cancelled")


def test_pydantic_ai_edit_then_continue(chat, agent_url, pydantic_ai_url):
    agent_url(pydantic_ai_url + "/")
    chat.interrupt("clean up")
    expect(chat.page.get_by_test_id("tool-call")).to_have_attribute("data-status", "awaiting_approval")
    card = chat.card()
    expect(card).to_have_attribute("data-reason", "tool_call")
    card.get_by_test_id("interrupt-edit-args").fill('{"path": "/tmp/other", "count": 1}')
    chat.shot("pydantic-ai-approval")
    card.get_by_test_id("interrupt-approve-edited").click()
    chat.wait("idle")
    expect(chat.page.get_by_test_id("tool-call")).to_have_attribute("data-status", "complete")
    expect(chat.messages("assistant").last).to_contain_text("deleted 1 files in /tmp/other")
    chat.send("hello again")  # the conversation continues with the rebuilt history
    chat.wait("idle")
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


def test_pydantic_ai_cancel(chat, agent_url, pydantic_ai_url):
    agent_url(pydantic_ai_url + "/")
    chat.interrupt("clean up")
    chat.card().get_by_test_id("interrupt-cancel").click()
    chat.wait("idle")
    expect(chat.page.get_by_test_id("tool-call")).to_contain_text("Cancelled by user.")
