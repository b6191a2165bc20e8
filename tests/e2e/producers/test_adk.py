"""Google ADK (``ag-ui-adk``): a ``require_confirmation`` tool asks through ADK's own
``adk_request_confirmation`` call, surfaced as a ``confirmation`` interrupt with no schema (the
default slot's Approve / Reject); ``AGUIToolset`` lets the agent call the chat's frontend tools."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from . import flows

PRODUCER = "adk"
UNSUPPORTED = {
    "edit": "ag-ui-adk passes the payload to ADK's `ToolConfirmation`, whose `FunctionTool` ignores edited "
            "arguments; the interrupt carries no schema, so the card offers no edit.",
    "form": "ADK's confirmation asks yes or no only.",
    "several": "not scripted: the example's model calls one tool per turn.",
    "legacy": "ag-ui-adk speaks AG-UI 1.0 only (with `emit_interrupt_outcome=True`).",
}
REJECTED = "This tool call is rejected."


@pytest.mark.hitl("approve")
def test_approve(chat, producer):
    card = flows.ask(chat)
    expect(card).to_have_attribute("data-reason", "confirmation")
    chat.shot("adk-confirmation")
    flows.answer(chat, card, "interrupt-approve", "Tool said: deleted 3 files in /tmp/demo")
    flows.continues(chat, "hello again", "Hello from Google ADK!")


@pytest.mark.hitl("reject")
def test_reject(chat, producer):
    flows.answer(chat, flows.ask(chat), "interrupt-reject", REJECTED)


@pytest.mark.hitl("cancel")
def test_cancel(chat, producer):
    flows.answer(chat, flows.ask(chat), "interrupt-cancel", REJECTED)


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
