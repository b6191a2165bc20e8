"""``/shared-state`` (the dojo's shared_state): a recipe the person and the agent both edit (S32).

The page sets the state the next run sends; the agent answers with a new state, which the fields then
show. An ingredient is a line of text: the demo agent keeps plain strings, the dojo's servers keep
``{icon, name, amount}`` records, shown and edited as ``name (amount)``. Saving keeps the recipe's other
fields (a dojo recipe's skill level, cooking time, instructions) and each unchanged record whole.
"""

from __future__ import annotations

import re
from typing import Any

import reflex as rx
from reflex.vars.function import FunctionStringVar

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["RECIPE", "RecipeForm", "ingredient_line", "recipe_chat"]

RECIPE = ic.Chat(dojo_url("shared_state"), name="recipe")

#: The JavaScript twin of :func:`ingredient_line`, for the text area (the state's list, one line each).
_LINES: FunctionStringVar = FunctionStringVar.create(
    "(items) => (Array.isArray(items) ? items : []).map((i) => typeof i === 'string' ? i"
    " : (i && typeof i === 'object' ? (i.amount ? `${i.name ?? ''} (${i.amount})` : `${i.name ?? ''}`)"
    " : String(i))).join('\\n')")
_AMOUNT = re.compile(r"^(?P<name>.*?)\s*\((?P<amount>[^()]*)\)$")


def ingredient_line(item: Any) -> str:
    """How an ingredient reads in the form: a string as is, a record as ``name (amount)``."""
    if isinstance(item, dict):
        name, amount = str(item.get("name", "")), str(item.get("amount", "") or "")
        return f"{name} ({amount})" if amount else name
    return str(item)


def _ingredients(lines: list[str], before: list[Any]) -> list[Any]:
    """The form's lines as the state's ingredients, in the shape the state had (records or strings)."""
    kept = {ingredient_line(item): item for item in before}
    records = any(isinstance(item, dict) for item in before)
    result: list[Any] = []
    for line in lines:
        if line in kept:
            result.append(kept[line])
        elif records:
            found = _AMOUNT.match(line)
            name, amount = (found["name"], found["amount"]) if found else (line, "")
            result.append({"icon": "", "name": name, "amount": amount})
        else:
            result.append(line)
    return result


class RecipeForm(rx.State):
    """The page's recipe editor: what the person typed before it goes to the agent's state."""

    @rx.event
    async def save(self, form_data: dict[str, Any]):
        """Put the form's recipe into the chat's shared state (the next run sends it)."""
        chat = await self.get_state(RECIPE.state)
        before = chat.agent_state.get("recipe")
        recipe = dict(before) if isinstance(before, dict) else {}
        previous = recipe.get("ingredients")
        lines = [line.strip() for line in str(form_data.get("ingredients", "")).splitlines() if line.strip()]
        recipe["title"] = str(form_data.get("title", "")).strip() or "Untitled recipe"
        recipe["ingredients"] = _ingredients(lines, previous if isinstance(previous, list) else [])
        return RECIPE.state.set_agent_state({**chat.agent_state, "recipe": recipe})


def _instructions(state: type[ic.ChatState], recipe: rx.Var) -> rx.Component:
    """A dojo recipe's steps, read-only (the demo agent's recipes have none)."""
    steps = recipe["instructions"].to(list[str])
    return rx.cond(state.agent_state.contains("recipe") & recipe.contains("instructions"),  # (no recipe yet)
                   rx.el.ol(rx.foreach(steps, lambda step: rx.el.li(step)),
                            class_name="ic-recipe-steps", custom_attrs={"data-testid": "recipe-instructions"}))


def recipe_chat() -> rx.Component:
    """The recipe both edit: a form over the agent's state, and the chat that sends it."""
    state = RECIPE.state
    recipe = state.agent_state["recipe"].to(dict[str, Any])
    lines = _LINES.call(recipe["ingredients"]).to(str)
    return rx.vstack(
        rx.card(rx.form(
            rx.vstack(
                rx.el.label("Title", html_for="recipe-title", class_name="ic-hint"),
                rx.input(id="recipe-title", name="title", default_value=recipe["title"].to(str),
                         key=recipe["title"].to(str), custom_attrs={"data-testid": "recipe-title"}),
                rx.el.label("Ingredients, one per line", html_for="recipe-ingredients", class_name="ic-hint"),
                rx.text_area(id="recipe-ingredients", name="ingredients", default_value=lines, key=lines,
                             custom_attrs={"data-testid": "recipe-ingredients"}),
                _instructions(state, recipe),
                rx.button("Save the recipe", type="submit", custom_attrs={"data-testid": "recipe-save"}),
                spacing="2", align="start", width="100%"),
            on_submit=RecipeForm.save, reset_on_submit=False),
            custom_attrs={"data-testid": "recipe-card"}),
        RECIPE.view(header=scenario_chip(state, "Improve the recipe", "recipe", "recipe")),
        spacing="3", width="100%",
    )
