"""``/haiku`` (the dojo's tool_based_generative_ui): the ``generate_haiku`` tool drawn as a card.

The agent's call may stream, or arrive whole inside a ``MESSAGES_SNAPSHOT`` with its result already there
(as the AG-UI server-starter sends it): either way the call is in the transcript and ``haiku_card`` draws it.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["HAIKU", "haiku_card", "haiku_chat"]


def haiku_card(call: rx.Var) -> rx.Component:
    """A haiku: its Japanese lines, then the English ones."""
    haiku = call.input.to(dict[str, Any])
    japanese, english = haiku["japanese"].to(list[str]), haiku["english"].to(list[str])
    return rx.card(
        rx.vstack(
            rx.foreach(japanese, lambda line: rx.text(line, size="4", lang="ja",
                                                      custom_attrs={"data-testid": "haiku-japanese-line"})),
            rx.foreach(english, lambda line: rx.text(line, size="2", color_scheme="gray", high_contrast=True,
                                                     custom_attrs={"data-testid": "haiku-english-line"})),
            spacing="1"),
        class_name="ic-haiku", custom_attrs={"data-testid": "haiku-card"},
    )


HAIKU = ic.Chat(dojo_url("tool_based_generative_ui"), tool_renderers={"generate_haiku": haiku_card}, name="haiku")


def haiku_chat() -> rx.Component:
    """The chat whose ``generate_haiku`` calls are drawn by :func:`haiku_card`."""
    state = HAIKU.state
    return HAIKU.view(header=scenario_chip(state, "A haiku about AI", 'Generate Haiku for "I will always win"',
                                           "haiku"))
