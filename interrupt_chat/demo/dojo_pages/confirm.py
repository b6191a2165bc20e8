"""``/confirm``: an approval asked through a frontend tool, as Agno's AG-UI interface asks.

The agent calls ``delete_files``; Approve / Reject answer ``{"accepted": true|false}``, Cancel declines.
"""

from __future__ import annotations

from typing import Any, ClassVar

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip

__all__ = ["CONFIRM", "ConfirmTool", "confirm_chat"]


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
    return CONFIRM.view(header=scenario_chip(CONFIRM.state, "Clean up", "confirm", "confirm"))
