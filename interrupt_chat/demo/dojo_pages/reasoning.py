"""``/reasoning`` (the dojo's agentic_chat_reasoning): the agent's reasoning, folded above its answer."""

from __future__ import annotations

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["REASONING", "reasoning_chat"]

REASONING = ic.Chat(dojo_url("agentic_chat_reasoning"), name="reasoning")


def reasoning_chat() -> rx.Component:
    """The chat; reasoning shows as a folded "Thought" block (``reasoning``) that streams while it is written."""
    state = REASONING.state
    return REASONING.view(header=scenario_chip(state, "What is the best car to buy?",
                                               "think: what is the best car to buy?", "think"))
