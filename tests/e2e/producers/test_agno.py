"""Agno (``agno[agui]``): its AG-UI interface sends no interrupts; its human in the loop is the
frontend tool: the agent calls a tool the chat declares, the run ends, and the next request's
trailing tool message continues it. Its approvals (``requires_confirmation``) arrive the same way,
so the demo's ``/confirm`` chat, which declares ``delete_files``, answers them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from . import flows

PRODUCER = "agno"
_NO_INTERRUPTS = ("Agno 3.1's AG-UI interface never ends a run with an interrupt outcome; its approvals are tool "
                  "calls (see the approve, reject and cancel flows on /confirm).")
UNSUPPORTED = {
    "edit": "Agno ignores edited arguments in a confirmation's answer.",
    "form": _NO_INTERRUPTS,
    "several": "not scripted: the example's model calls one tool per turn.",
    "legacy": _NO_INTERRUPTS,
    "allow_thread": _NO_INTERRUPTS + " A rule answers interrupts only.",
    "allow_always": _NO_INTERRUPTS + " A rule answers interrupts only.",
    "bulk": _NO_INTERRUPTS + " The inbox lists them as waiting tool calls, answered in their thread.",
}


def _confirm(chat, button: str, expected: str) -> None:
    """On /confirm, whose chat declares ``delete_files``: Agno's paused ``requires_confirmation`` call is a
    call to that tool; the card answers ``{"accepted": true|false}`` (or declines) and Agno goes on."""
    chat.interrupt("clean up", "/confirm")
    wait = chat.page.get_by_test_id("tool-wait")
    expect(wait).to_have_attribute("data-tool-name", "delete_files")
    wait.get_by_test_id(button).click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text(expected)
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


@pytest.mark.hitl("approve")
def test_approve(chat, producer):
    _confirm(chat, "tool-approve", "Tool said: deleted 3 files in /tmp/demo")
    flows.continues(chat, "hello again", "Hello from Agno!")


@pytest.mark.hitl("reject")
def test_reject(chat, producer):
    _confirm(chat, "tool-reject", "Function call was rejected by the user")


@pytest.mark.hitl("cancel")
def test_cancel(chat, producer):
    _confirm(chat, "tool-cancel", "Function call was rejected by the user")


@pytest.mark.hitl("frontend_tool")
def test_frontend_tool(chat, producer):
    flows.steps(chat)
    flows.continues(chat, "hello again", "Hello from Agno!")


@pytest.mark.hitl("frontend_tool_declined")
def test_frontend_tool_declined(chat, producer):
    flows.steps(chat, decline=True, expected="The person declined to answer.")
