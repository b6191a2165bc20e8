"""``/reasoning`` (the dojo's agentic_chat_reasoning): the agent's reasoning, folded above its answer."""

from __future__ import annotations

import reflex as rx

import interrupt_chat as ic

from .urls import dojo_url

__all__ = ["REASONING", "reasoning_chat"]

REASONING = ic.Chat(dojo_url("agentic_chat_reasoning"), name="reasoning")


def reasoning_chat() -> rx.Component:
    """The chat; reasoning shows as a folded "Thought" block (``reasoning``) that streams while it is written."""
    state = REASONING.state
    return REASONING.view(header=rx.button(
        "What is the best car to buy?", size="1", variant="surface", radius="full",
        on_click=state.send_text("think: what is the best car to buy?"),
        disabled=(state.status == "running") | state.locked,
        custom_attrs={"data-testid": "scenario-chip", "data-scenario": "think"}))
