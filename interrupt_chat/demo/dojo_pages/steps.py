"""``/steps`` (the dojo's human_in_the_loop): the frontend tool ``generate_task_steps``.

The agent calls it with ``{"steps": [{"description", "status": "enabled"|"disabled"}, …]}``; the person
unticks the steps to skip and confirms; the confirmed list is the tool's result, which the next run takes
to the agent (S26-S31). LangGraph's dojo agent asks the same with an interrupt instead: the default slot
shows those steps as a checklist (``interrupt-step``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["STEPS", "StepsTool", "steps_chat"]

STEP = {"type": "object", "required": ["description", "status"],
        "properties": {"description": {"type": "string"}, "status": {"enum": ["enabled", "disabled"]}}}


class StepsTool(ic.FrontendToolState):
    """``generate_task_steps``: the person picks the steps of the agent's plan."""

    tool_name: ClassVar[str] = "generate_task_steps"
    description: ClassVar[str] = ("Show the person the steps of a plan; they untick the steps to skip and confirm"
                                  " the rest.")
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "required": ["steps"],
                                            "properties": {"steps": {"type": "array", "items": STEP}}}

    @staticmethod
    def render(call: ic.ToolCall) -> rx.Component:
        """The steps as checkboxes (ticked when enabled), Confirm and Skip all."""
        steps = call.args["steps"].to(list[dict[str, str]])
        return call.form(
            rx.vstack(
                rx.heading("Pick the steps to run", size="3", as_="h2"),
                rx.foreach(steps, lambda step, index: rx.el.label(
                    rx.el.input(type="checkbox", name="step-" + index.to(str),
                                default_checked=step["status"] == "enabled", custom_attrs={"data-testid": "task-step"}),
                    rx.text.span(step["description"]),
                    class_name="ic-step")),
                rx.hstack(
                    rx.button("Confirm", type="submit", custom_attrs={"data-testid": "tool-respond"}),
                    rx.button("Skip all", type="button", variant="soft", color_scheme="gray", on_click=call.decline(),
                              custom_attrs={"data-testid": "tool-cancel"}),
                    spacing="2"),
                spacing="2", align="start"),
        )

    def result(self, args: Any, form_data: dict[str, Any]) -> Any:
        """The steps with their status as ticked: ``{"steps": [{"description", "status"}, …]}``."""
        steps = args.get("steps", []) if isinstance(args, dict) else []
        return {"steps": [{"description": step.get("description", ""),
                           "status": "enabled" if form_data.get(f"step-{i}") else "disabled"}
                          for i, step in enumerate(steps) if isinstance(step, dict)]}


STEPS = ic.Chat(dojo_url("human_in_the_loop"), tools=[StepsTool])  # the inbox lists its waiting calls too


def steps_chat() -> rx.Component:
    """The chat with the ``generate_task_steps`` tool and a chip that asks for a plan."""
    return STEPS.view(header=scenario_chip(STEPS.state, "Plan a cleanup", "steps", "steps"))
