"""Scenarios around the shared state (S32): agentic generative UI and a recipe both sides edit.

``progress`` drives a progress card through ``STATE_DELTA``: a plan of steps whose statuses move
from ``pending`` to ``running`` to ``done`` while the agent narrates. ``recipe`` reads the recipe
the page put in ``RunAgentInput.state`` (``{"recipe": {"title", "ingredients"}}``), adds what it
lacks and sends the result back as a ``STATE_SNAPSHOT``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ag_ui.core import BaseEvent

from .context import RunContext

__all__ = ["PROGRESS_STEPS", "progress", "recipe"]

PROGRESS_STEPS = ("Collect the reports", "Compress them", "Upload the archive")
SALT = "a pinch of salt"


def progress(ctx: RunContext) -> Iterator[BaseEvent]:
    """A plan whose steps run one by one: each status change is one ``STATE_DELTA`` (JSON Patch)."""
    yield ctx.ev.state_snapshot({"progress": {"title": "Archiving the reports",
                                              "steps": [{"description": d, "status": "pending"}
                                                        for d in PROGRESS_STEPS]}})
    for index, step in enumerate(PROGRESS_STEPS):
        yield _status(ctx, index, "running")
        yield from ctx.ev.text_message(f"{step}…")
        yield _status(ctx, index, "done")
    yield from ctx.ev.text_message("All steps are done.")
    yield ctx.ev.run_finished()


def _status(ctx: RunContext, index: int, status: str) -> BaseEvent:
    return ctx.ev.state_delta([{"op": "replace", "path": f"/progress/steps/{index}/status", "value": status}])


def recipe(ctx: RunContext) -> Iterator[BaseEvent]:
    """Improve the recipe the page sent in the run's state: add salt when it lacks it."""
    state: Any = copy.deepcopy(ctx.body.state) if isinstance(ctx.body.state, dict) else {}
    current = state.get("recipe") if isinstance(state.get("recipe"), dict) else {}
    title = str(current.get("title") or "Untitled recipe")
    ingredients = [str(i) for i in current.get("ingredients", []) if isinstance(i, (str, int, float))]
    if SALT in ingredients:
        reply = f"“{title}” already has everything it needs."
    else:
        ingredients.append(SALT)
        reply = f"I added {SALT} to “{title}”."
    state["recipe"] = {"title": title, "ingredients": ingredients}
    yield ctx.ev.state_snapshot(state)
    yield from ctx.ev.text_message(reply)
    yield ctx.ev.run_finished()
