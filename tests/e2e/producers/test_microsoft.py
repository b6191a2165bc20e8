"""Microsoft Agent Framework (``agent-framework-ag-ui``, on ``ag-ui-protocol`` 0.1): an
``approval_mode="always_require"`` tool asks as a ``tool_call`` interrupt whose schema offers
``editedArgs``; client-declared tools are frontend tools."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from . import flows

PRODUCER = "microsoft"
UNSUPPORTED = {
    "form": "the example's agent asks for approvals only (workflows' `request_info` would be an `input_required`).",
    "several": "not scripted: the example's model calls one tool per turn.",
    "legacy": "agent-framework-ag-ui sends the outcome (and a `function_approval_request` CUSTOM event the "
              "chat ignores), not `on_interrupt`.",
}


@pytest.mark.hitl("approve")
def test_approve(chat, producer):
    card = flows.ask(chat)
    expect(card).to_have_attribute("data-reason", "tool_call")
    chat.shot("microsoft-approval")
    flows.answer(chat, card, "interrupt-approve", "Tool said: deleted 3 files in /tmp/demo")
    flows.continues(chat, "hello again", "Hello from Microsoft Agent Framework!")


@pytest.mark.hitl("edit")
def test_edit(chat, producer):
    flows.edit(chat, flows.ask(chat), '{"path": "/tmp/other", "count": 1}', "Tool said: deleted 1 files in /tmp/other")


@pytest.mark.hitl("reject")
def test_reject(chat, producer):
    flows.answer(chat, flows.ask(chat), "interrupt-reject", "Tool call invocation was rejected by user.")


@pytest.mark.hitl("cancel")
def test_cancel(chat, producer):
    """The framework retires a cancelled approval without calling the model: the run ends with no answer."""
    card = flows.ask(chat)
    answers = chat.messages("assistant").count()
    card.get_by_test_id("interrupt-cancel").click()
    chat.wait("idle")
    expect(chat.cards()).to_have_count(0)
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)
    expect(chat.messages("assistant")).to_have_count(answers)
    flows.continues(chat, "hello again", "Hello from Microsoft Agent Framework!")


@pytest.mark.hitl("frontend_tool")
def test_frontend_tool(chat, producer):
    flows.steps(chat)


@pytest.mark.hitl("frontend_tool_declined")
def test_frontend_tool_declined(chat, producer):
    flows.steps(chat, decline=True, expected="The person declined to answer.")


@pytest.mark.hitl("allow_thread")
def test_allow_in_this_thread(chat, producer):
    flows.allow_in_thread(chat, "Tool said: deleted 3 files in /tmp/demo")


@pytest.mark.hitl("allow_always")
def test_always_allow(chat, producer):
    flows.allow_always(chat, "Tool said: deleted 3 files in /tmp/demo")


@pytest.mark.hitl("bulk")
def test_bulk_approve(chat, producer):
    flows.bulk_approve(chat, "Tool said: deleted 3 files in /tmp/demo")
