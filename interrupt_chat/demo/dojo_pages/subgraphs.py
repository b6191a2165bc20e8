"""``/subgraphs`` (the dojo's subgraphs): requests from sub-agents, each card naming who asks (``data-source``).

The dojo's LangGraph travel agent hands the conversation to sub-agents (flights, hotels, experiences); each
asks on the legacy channel with ``{agent, message, options, recommendation}``. The default slot shows the
options as choices, the recommended one marked, and answers with the chosen option (JSON-encoded, as the
dojo's own page does); the card says "from flights".
"""

from __future__ import annotations

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["SUBGRAPHS", "subgraphs_chat"]

SUBGRAPHS = ic.Chat(dojo_url("subgraphs"), name="subgraphs")


def subgraphs_chat() -> rx.Component:
    """The chat, with a chip that starts the trip planning."""
    state = SUBGRAPHS.state
    return SUBGRAPHS.view(header=scenario_chip(state, "Help me plan a trip to San Francisco",
                                               "flights: help me plan a trip to San Francisco", "flights"))
