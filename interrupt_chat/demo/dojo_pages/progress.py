"""``/progress`` (the dojo's agentic_generative_ui): a progress card drawn from the agent's state.

``STATE_DELTA`` events move it step by step (S32). The dojo's servers keep the steps at the top of the
state (``steps``, each ``pending`` then ``completed``); the demo agent keeps a titled plan under
``progress`` (``pending``, ``running``, ``done``). The card draws either; ``data-status`` is the step's own.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["PROGRESS", "progress_card", "progress_chat"]


def _icon(status: rx.Var) -> rx.Component:
    return rx.match(status, ("done", rx.icon("circle_check", size=16)), ("completed", rx.icon("circle_check", size=16)),
                    ("running", rx.icon("loader", size=16)), ("in_progress", rx.icon("loader", size=16)),
                    rx.icon("circle", size=16))


def progress_card(state: type[ic.ChatState]) -> rx.Component:
    """The agent's plan from its state: one row per step with its status."""
    plan = state.agent_state["progress"].to(dict[str, Any])
    top = state.agent_state.contains("steps")
    steps = rx.cond(top, state.agent_state["steps"], plan["steps"]).to(list[dict[str, str]])
    return rx.cond(
        top | state.agent_state.contains("progress"),
        rx.card(
            rx.vstack(
                rx.heading(rx.cond(top, "Task progress", plan["title"].to(str)), size="3", as_="h2"),
                rx.foreach(steps, lambda step: rx.hstack(
                    _icon(step["status"]),
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
    return rx.vstack(progress_card(state),
                     PROGRESS.view(header=scenario_chip(state, "Archive the reports", "progress", "progress")),
                     spacing="3", width="100%")
