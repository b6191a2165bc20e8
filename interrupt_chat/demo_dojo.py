"""The demo site's pages for the AG-UI dojo's features, users of the public API only.

- ``/steps``: tool-based human in the loop. The agent calls the frontend tool
  ``generate_task_steps``; the person unticks the steps to skip and confirms; the confirmed list
  is the tool's result, which the next run takes to the agent (S26-S31).
- ``/confirm``: an approval asked through a frontend tool (how Agno's AG-UI interface asks): the
  agent calls ``delete_files``; Approve / Reject answer ``{"accepted": true|false}``, Cancel declines.
- ``/tool-ui``: a custom tool-call renderer (``chat(tool_renderers=...)``): the agent's
  ``get_weather`` call drawn as a weather card.
- ``/progress``: agentic generative UI: a progress card drawn from the agent's state, which
  ``STATE_DELTA`` events move step by step (S32).
- ``/shared-state``: a recipe the person and the agent both edit: the page sets the state the next
  run sends, the agent answers with a new state (S32).
"""

from __future__ import annotations

from typing import Any, ClassVar

import reflex as rx

import interrupt_chat as ic
from interrupt_chat.dojo_pages.urls import dojo_url

__all__ = ["ConfirmTool", "StepsTool", "confirm_chat", "progress_chat", "recipe_chat", "steps_chat", "weather_chat"]

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


STEPS = ic.Chat(dojo_url("human_in_the_loop"), tools=[StepsTool])  # /steps; the inbox lists its waiting calls too


def steps_chat() -> rx.Component:
    """The chat with the ``generate_task_steps`` tool and a chip that asks for a plan."""
    state = STEPS.state
    chip = rx.button("Plan a cleanup", size="1", variant="surface", radius="full", on_click=state.send_text("steps"),
                     disabled=(state.status == "running") | state.locked,
                     custom_attrs={"data-testid": "scenario-chip", "data-scenario": "steps"})
    return STEPS.view(header=chip)


class ConfirmTool(ic.FrontendToolState):
    """``delete_files``: the agent asks the person to approve a deletion through a tool call."""

    tool_name: ClassVar[str] = "delete_files"
    description: ClassVar[str] = "Ask the person to approve deleting files; the answer is {accepted: boolean}."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "required": ["path", "count"],
                                            "properties": {"path": {"type": "string"}, "count": {"type": "integer"}}}

    @staticmethod
    def render(call: ic.ToolCall) -> rx.Component:
        """The deletion to approve, with Approve, Reject and Cancel."""
        args = call.args
        return rx.vstack(
            rx.heading("Approve this deletion?", size="3", as_="h2"),
            rx.text("Delete ", args["count"].to(str), " files in ", rx.code(args["path"].to(str)), "."),
            rx.hstack(
                rx.button("Approve", on_click=call.respond({"accepted": True}),
                          custom_attrs={"data-testid": "tool-approve"}),
                rx.button("Reject", variant="soft", color_scheme="red", on_click=call.respond({"accepted": False}),
                          custom_attrs={"data-testid": "tool-reject"}),
                rx.button("Cancel", variant="soft", color_scheme="gray", on_click=call.decline(),
                          custom_attrs={"data-testid": "tool-cancel"}),
                spacing="2"),
            spacing="2", align="start",
        )


CONFIRM = ic.Chat(tools=[ConfirmTool])


def confirm_chat() -> rx.Component:
    """The chat with the ``delete_files`` approval tool and a chip that asks for a deletion."""
    return CONFIRM.view(header=_chip(CONFIRM.state, "Clean up", "confirm"))


def _chip(state: type[ic.ChatState], label: str, scenario: str) -> rx.Component:
    return rx.button(label, size="1", variant="surface", radius="full", on_click=state.send_text(scenario),
                     disabled=(state.status == "running") | state.locked,
                     custom_attrs={"data-testid": "scenario-chip", "data-scenario": scenario})


def weather_card(call: rx.Var) -> rx.Component:
    """``get_weather`` as a card: the city while it runs, then the forecast from the call's result."""
    output = call.output.to(dict[str, Any])
    return rx.card(
        rx.hstack(rx.icon("cloud_sun", size=28),
                  rx.vstack(rx.text(call.input.to(dict[str, Any])["city"].to(str), weight="bold",
                                    custom_attrs={"data-testid": "weather-city"}),
                            rx.cond(call.output,
                                    rx.text(output["forecast"].to(str), ", ", output["tempC"].to(str), " °C",
                                            custom_attrs={"data-testid": "weather-forecast"}),
                                    rx.text("Looking outside…", color_scheme="gray")),
                            spacing="1"),
                  align="center", spacing="3"),
        class_name="ic-weather", custom_attrs={"data-testid": "weather-card"},
    )


WEATHER = ic.Chat(dojo_url("backend_tool_rendering"), tool_renderers={"get_weather": weather_card}, name="tool-ui")


def weather_chat() -> rx.Component:
    """The chat with ``get_weather`` calls drawn by :func:`weather_card`."""
    return WEATHER.view(header=_chip(WEATHER.state, "Ask for the weather", "tools"))


def progress_card(state: type[ic.ChatState]) -> rx.Component:
    """The agent's plan from its state: one row per step with its status (pending, running, done)."""
    progress = state.agent_state["progress"].to(dict[str, Any])
    steps = progress["steps"].to(list[dict[str, str]])
    return rx.cond(
        state.agent_state.contains("progress"),
        rx.card(
            rx.vstack(
                rx.heading(progress["title"].to(str), size="3", as_="h2"),
                rx.foreach(steps, lambda step: rx.hstack(
                    rx.match(step["status"], ("done", rx.icon("circle_check", size=16)),
                             ("running", rx.icon("loader", size=16)), rx.icon("circle", size=16)),
                    rx.text(step["description"]),
                    rx.badge(step["status"], variant="soft", high_contrast=True),
                    align="center", spacing="2",
                    custom_attrs={"data-testid": "progress-step", "data-status": step["status"]})),
                spacing="2"),
            custom_attrs={"data-testid": "progress-card"}),
    )


PROGRESS = ic.Chat(dojo_url("agentic_generative_ui"), name="progress")


def progress_chat() -> rx.Component:
    """A chat whose agent state drives :func:`progress_card` above it."""
    state = PROGRESS.state
    return rx.vstack(progress_card(state), PROGRESS.view(header=_chip(state, "Archive the reports", "progress")),
                     spacing="3", width="100%")


RECIPE = ic.Chat(dojo_url("shared_state"), name="recipe")


class RecipeForm(rx.State):
    """The page's recipe editor: what the person typed before it goes to the agent's state."""

    @rx.event
    def save(self, form_data: dict[str, Any]):
        """Put the form's recipe into the chat's shared state (the next run sends it)."""
        ingredients = [line.strip() for line in str(form_data.get("ingredients", "")).splitlines() if line.strip()]
        recipe = {"title": str(form_data.get("title", "")).strip() or "Untitled recipe", "ingredients": ingredients}
        return RECIPE.state.set_agent_state({"recipe": recipe})


def recipe_chat() -> rx.Component:
    """The recipe both edit: a form over the agent's state, and the chat that sends it."""
    state = RECIPE.state
    recipe = state.agent_state["recipe"].to(dict[str, Any])
    ingredients = recipe["ingredients"].to(list[str])
    return rx.vstack(
        rx.card(rx.form(
            rx.vstack(
                rx.el.label("Title", html_for="recipe-title", class_name="ic-hint"),
                rx.input(id="recipe-title", name="title", default_value=recipe["title"].to(str),
                         key=recipe["title"].to(str), custom_attrs={"data-testid": "recipe-title"}),
                rx.el.label("Ingredients, one per line", html_for="recipe-ingredients", class_name="ic-hint"),
                rx.text_area(id="recipe-ingredients", name="ingredients", default_value=ingredients.join("\n"),
                             key=ingredients.join("|"), custom_attrs={"data-testid": "recipe-ingredients"}),
                rx.button("Save the recipe", type="submit", custom_attrs={"data-testid": "recipe-save"}),
                spacing="2", align="start", width="100%"),
            on_submit=RecipeForm.save, reset_on_submit=False),
            custom_attrs={"data-testid": "recipe-card"}),
        RECIPE.view(header=_chip(state, "Improve the recipe", "recipe")),
        spacing="3", width="100%",
    )
