"""Scenarios for the chat's frontend tools (S26-S31): the agent calls a tool the request declares.

``steps`` calls ``generate_task_steps`` (the AG-UI dojo's human in the loop): the person ticks the
steps to run and confirms; the next run, whose last message is the tool's result, answers with
what it will do. Without the tool in ``RunAgentInput.tools`` the agent says so and calls nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ag_ui.core import BaseEvent, RunAgentInput, ToolMessage

from .context import RunContext
from .events import new_id

__all__ = ["CLOCK_TOOL", "CONFIRM_TOOL", "STEPS", "STEPS_TOOL", "clock", "confirm", "last_tool_result", "steps",
           "tool_followup"]

STEPS_TOOL = "generate_task_steps"
CLOCK_TOOL = "get_time"  # a tool an app answers on the server (a handler, S30)
CONFIRM_TOOL = "delete_files"  # an approval asked through a tool call, as Agno's AG-UI interface does
STEPS = ("Read the current settings", "Back up the old reports", "Delete the old reports",
         "Email a summary to the team")


def last_tool_result(body: RunAgentInput) -> ToolMessage | None:
    """The request's last message when it is a tool result: the answer to a frontend tool."""
    last = body.messages[-1] if body.messages else None
    return last if isinstance(last, ToolMessage) else None


def steps(ctx: RunContext) -> Iterator[BaseEvent]:
    """Ask the person to pick the steps, through the frontend tool (when the chat declares it)."""
    plan = {"steps": [{"description": step, "status": "enabled"} for step in STEPS]}
    yield from _call(ctx, STEPS_TOOL, plan, "Here is my plan. Untick what I should skip, then confirm.",
                     "ask you for steps")


def confirm(ctx: RunContext) -> Iterator[BaseEvent]:
    """Ask the person to confirm a deletion through the chat's ``delete_files`` tool.

    Its result ``{"accepted": true|false}`` decides (the convention of Agno's confirmations).
    """
    yield from _call(ctx, CONFIRM_TOOL, {"path": "/tmp/demo", "count": 3}, "I need your OK before I delete anything.",
                     "ask you to confirm")


def clock(ctx: RunContext) -> Iterator[BaseEvent]:
    """Ask the chat for the time through its ``get_time`` tool (when it declares it)."""
    yield from _call(ctx, CLOCK_TOOL, {"timezone": "UTC"}, "Let me look at your clock.", "tell the time")


def _call(ctx: RunContext, tool: str, args: dict[str, Any], intro: str, purpose: str) -> Iterator[BaseEvent]:
    """A message and a call to the frontend tool ``tool``; without it in ``tools``, say so instead."""
    if not any(declared.name == tool for declared in ctx.body.tools or []):
        yield from ctx.ev.text_message(f"This chat offers no {tool} tool, so I cannot {purpose}.")
    else:
        message_id = new_id("msg")
        yield from ctx.ev.text_message(intro, message_id)
        yield from ctx.ev.tool_call(new_id("call"), tool, args, message_id)
    yield ctx.ev.run_finished()


def tool_followup(ctx: RunContext, result: ToolMessage) -> Iterator[BaseEvent]:
    """The run after a frontend tool answered: say what the answer was."""
    yield from ctx.ev.text_message(_reply(_parse(result.content)))
    yield ctx.ev.run_finished()


def _parse(content: Any) -> Any:
    try:
        return json.loads(content) if isinstance(content, str) else content
    except ValueError:
        return content


def _reply(result: Any) -> str:
    if isinstance(result, dict) and result.get("cancelled"):
        return "All right, I will not do any of it."
    if isinstance(result, dict) and "accepted" in result:
        return "Deleted 3 files in /tmp/demo." if result["accepted"] is True else "All right, I will not delete them."
    if isinstance(result, dict) and "error" in result:
        return "The tool could not be answered, so I stopped."
    if isinstance(result, dict) and "time" in result:
        return f"It is {result['time']} in {result.get('timezone', 'your time zone')}."
    if isinstance(result, dict) and isinstance(result.get("steps"), list):
        chosen = [s.get("description", "?") for s in result["steps"] if isinstance(s, dict)
                  and s.get("status") == "enabled"]
        skipped = len(result["steps"]) - len(chosen)
        if not chosen:
            return "You skipped every step, so there is nothing to do."
        done = "; ".join(str(step) for step in chosen)
        return f"Running {len(chosen)} step(s): {done}. Skipped: {skipped}."
    return "Thanks, I have your answer."
