"""pydantic-ai (``pydantic-ai-slim[ag-ui]``): ``requires_approval`` tools become ``tool_call`` interrupts.

Stateless: the chat carries the history, including the assistant message with its ``toolCalls``,
rebuilt from ``TOOL_CALL_*``; a resume without it fails on the agent's side.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image
from playwright.sync_api import expect

from . import flows

PRODUCER = "pydantic_ai"
UNSUPPORTED = {
    "form": "pydantic-ai asks only to approve deferred tool calls.",
    "legacy": "pydantic-ai speaks AG-UI 1.0 only.",
}


def _tool_call(chat):
    return chat.page.get_by_test_id("tool-call")


@pytest.mark.hitl("approve")
def test_approve(chat, producer):
    card = flows.ask(chat)
    expect(card).to_have_attribute("data-reason", "tool_call")
    expect(_tool_call(chat)).to_have_attribute("data-status", "awaiting_approval")
    flows.answer(chat, card, "interrupt-approve", "deleted 3 files in /tmp/demo")
    expect(_tool_call(chat)).to_have_attribute("data-status", "complete")


@pytest.mark.hitl("edit")
def test_edit_then_continue(chat, producer):
    card = flows.ask(chat)
    chat.shot("pydantic-ai-approval")
    flows.edit(chat, card, '{"path": "/tmp/other", "count": 1}', "deleted 1 files in /tmp/other")
    flows.continues(chat)  # the conversation continues with the rebuilt history


@pytest.mark.hitl("reject")
def test_reject(chat, producer):
    flows.answer(chat, flows.ask(chat), "interrupt-reject", "The tool call was denied.")


@pytest.mark.hitl("cancel")
def test_cancel(chat, producer):
    flows.answer(chat, flows.ask(chat), "interrupt-cancel", "Cancelled by user.")
    expect(_tool_call(chat)).to_contain_text("Cancelled by user.")


@pytest.mark.hitl("several")
def test_several(chat, producer):
    chat.interrupt("multi please")
    expect(chat.cards()).to_have_count(2)
    chat.card(0).get_by_test_id("interrupt-approve").click()
    chat.card(1).get_by_test_id("interrupt-reject").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("deleted 3 files in /tmp/demo")


@pytest.mark.hitl("frontend_tool")
def test_frontend_tool(chat, producer):
    flows.steps(chat)


@pytest.mark.hitl("frontend_tool_declined")
def test_frontend_tool_declined(chat, producer):
    flows.steps(chat, decline=True, expected="Tool said: ")


def test_reads_an_attached_image(chat, producer):
    """AG-UI 1.0 multimodal input: the adapter hands the image part to the model as ``BinaryContent``."""
    out = io.BytesIO()
    Image.new("RGB", (32, 16), "navy").save(out, "PNG")
    chat.open()
    chat.page.get_by_test_id("composer-attach").set_input_files(
        [{"name": "chart.png", "mimeType": "image/png", "buffer": out.getvalue()}])
    expect(chat.page.get_by_test_id("attachment-chip")).to_have_count(1)
    chat.send("what is in this picture?")
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text(f"I see 1 file(s): image/png, {len(out.getvalue())} bytes")


@pytest.mark.hitl("allow_thread")
def test_allow_in_this_thread(chat, producer):
    flows.allow_in_thread(chat, "deleted 3 files in /tmp/demo")


@pytest.mark.hitl("allow_always")
def test_always_allow(chat, producer):
    flows.allow_always(chat, "deleted 3 files in /tmp/demo")


@pytest.mark.hitl("bulk")
def test_bulk_approve(chat, producer):
    flows.bulk_approve(chat, "deleted 3 files in /tmp/demo")
