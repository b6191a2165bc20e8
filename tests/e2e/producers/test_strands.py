"""Strands Agents (``ag-ui-strands``): a tool with ``interrupt_on_call`` asks for approval as a
``tool_call`` interrupt; a client-declared tool is a frontend tool the run ends on (with success)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from . import flows

PRODUCER = "strands"
UNSUPPORTED = {
    "edit": "the approval schema is `{approved}` only; ag-ui-strands ignores `editedArgs`, so the card offers no edit.",
    "form": "ag-ui-strands raises approvals only (`tool_context.interrupt` takes no schema from the tool).",
    "several": "not scripted: the example's model calls one tool per turn.",
    "legacy": "ag-ui-strands speaks AG-UI 1.0 only.",
}
DENIED = "Tool said: User denied approval for 'delete_files'."


@pytest.mark.hitl("approve")
def test_approve(chat, producer):
    card = flows.ask(chat)
    expect(card).to_have_attribute("data-reason", "tool_call")
    expect(card).to_contain_text("Approve call to delete_files?")
    expect(card.get_by_test_id("interrupt-edit-args")).to_have_count(0)  # no editedArgs in the schema
    chat.shot("strands-approval")
    flows.answer(chat, card, "interrupt-approve", "Tool said: deleted 3 files in /tmp/demo")
    flows.continues(chat, "hello again", "Hello from Strands Agents!")


@pytest.mark.hitl("reject")
def test_reject(chat, producer):
    flows.answer(chat, flows.ask(chat), "interrupt-reject", DENIED)


@pytest.mark.hitl("cancel")
def test_cancel(chat, producer):
    flows.answer(chat, flows.ask(chat), "interrupt-cancel", DENIED)


@pytest.mark.hitl("frontend_tool")
def test_frontend_tool(chat, producer):
    flows.steps(chat)
    flows.continues(chat, "hello again", "Hello from Strands Agents!")


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
