"""``/document`` (the dojo's predictive_state_updates): a document that grows while the agent writes it.

The agent announces ``PredictState`` for ``document`` and streams it as a tool argument, so the page's
``document-text`` (the chat's ``agent_state["document"]``) grows live (S33). Then it calls the frontend tool
``confirm_changes``: Keep (``tool-respond``) answers ``{"accepted": true}``; Reject (``tool-cancel``) answers
``{"accepted": false}``, as the dojo does, and the document goes back to what it was (S35).
"""

from __future__ import annotations

from typing import Any, ClassVar

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["DOCUMENT", "ConfirmChangesTool", "WriteDocumentTool", "document_chat"]


class ConfirmChangesTool(ic.FrontendToolState):
    """``confirm_changes``: keep or reject what the agent just wrote into the document."""

    tool_name: ClassVar[str] = "confirm_changes"
    description: ClassVar[str] = "Ask the person to keep or reject the changes just made to the document."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    @staticmethod
    def render(call: ic.ToolCall) -> rx.Component:
        """Keep or Reject."""
        return rx.vstack(
            rx.heading("Keep these changes to the document?", size="3", as_="h2"),
            rx.hstack(
                rx.button("Keep", on_click=call.respond({"accepted": True}),
                          custom_attrs={"data-testid": "tool-respond"}),
                rx.button("Reject", variant="soft", color_scheme="red", on_click=call.respond({"accepted": False}),
                          custom_attrs={"data-testid": "tool-cancel"}),
                spacing="2"),
            spacing="2", align="start",
        )


class WriteDocumentTool(ic.FrontendToolState):
    """``write_document_local``: the tool whose argument is the document (PredictState); answered on the server."""

    tool_name: ClassVar[str] = "write_document_local"
    description: ClassVar[str] = "Write the whole document (the page shows it as it is written)."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "required": ["document"],
                                            "properties": {"document": {"type": "string"}}}

    @staticmethod
    def handle(args: Any) -> str:
        """The document is already on the page (the state followed the argument): say so to the agent."""
        return "Document written."


DOCUMENT = ic.Chat(dojo_url("predictive_state_updates"), tools=[ConfirmChangesTool, WriteDocumentTool],
                   name="document")


def document_chat() -> rx.Component:
    """The document above the chat that writes it."""
    state = DOCUMENT.state
    text = state.agent_state["document"].to(str)
    return rx.vstack(
        rx.card(
            rx.heading("Document", size="3", as_="h2"),
            rx.cond(state.agent_state.contains("document"),
                    rx.text(text, class_name="ic-document", custom_attrs={"data-testid": "document-text"}),
                    rx.text("Nothing written yet.", color_scheme="gray",
                            custom_attrs={"data-testid": "document-text"})),
            custom_attrs={"data-testid": "document-card", "aria-live": "off"}, width="100%"),
        DOCUMENT.view(header=scenario_chip(state, "Write a story", "Write a story", "write")),
        spacing="3", width="100%",
    )
