"""Agno (``agno[agui]``): its AG-UI interface sends no interrupts; its human in the loop is the
frontend tool: the agent calls a tool the chat declares, the run ends, and the next request's
trailing tool message continues it."""

from __future__ import annotations

import pytest

from . import flows

PRODUCER = "agno"
_NO_INTERRUPTS = ("Agno 3.1's AG-UI interface never ends a run with an interrupt outcome: a paused "
                  "`requires_confirmation` call arrives as a plain tool call that only a chat declaring a tool of "
                  "that name can answer (`{\"accepted\": true}`), so the demo site has no card for it.")
UNSUPPORTED = {
    "approve": _NO_INTERRUPTS,
    "reject": "as above.",
    "cancel": "as above.",
    "edit": "as above; Agno also ignores edited arguments.",
    "form": "as above.",
    "several": "as above.",
    "legacy": "as above.",
}


@pytest.mark.hitl("frontend_tool")
def test_frontend_tool(chat, producer):
    flows.steps(chat)
    flows.continues(chat, "hello again", "Hello from Agno!")


@pytest.mark.hitl("frontend_tool_declined")
def test_frontend_tool_declined(chat, producer):
    flows.steps(chat, decline=True, expected="The person declined to answer.")
