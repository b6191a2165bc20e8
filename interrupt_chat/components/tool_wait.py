"""The frontend-tool slot: every call waiting for a person (S27), drawn by its tool's ``render`` or a default card.

Each waiting call is a ``tool-wait`` element (``data-tool-call-id``, ``data-tool-name``). The
default card shows the arguments and asks for a result (JSON, or plain text): ``tool-respond``
sends it, ``tool-cancel`` declines (S31) where the tool allows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import reflex as rx
from reflex.event import EventSpec
from reflex.vars import ObjectVar

from ..tab.tools import FrontendToolState

if TYPE_CHECKING:
    from ..assembly.state import ChatState

__all__ = ["ToolCall", "tool_slot"]


@dataclass(frozen=True)
class ToolCall:
    """What a tool's ``render(call)`` gets: one waiting call (vars) and the events that answer it.

    Attributes:
        row: the call's row (``id``, ``name``, ``args``, ``args_json``, ``cancellable``).
        tool: the tool's state class.
    """

    row: ObjectVar
    tool: type[FrontendToolState]

    @property
    def id(self) -> rx.Var:
        """The tool call id."""
        return self.row["id"]

    @property
    def args(self) -> ObjectVar:
        """The call's arguments: an object var, validated against the tool's parameters (``.to(...)`` its fields)."""
        return self.row["args"].to(dict[str, Any])

    def respond(self, result: Any) -> EventSpec:
        """The event that answers the call with ``result`` (S28)."""
        return self.tool.respond(self.row["id"], result)

    def decline(self) -> EventSpec:
        """The event that declines the call (S31)."""
        return self.tool.decline(self.row["id"])

    def form(self, *children: rx.Component, **props: Any) -> rx.Component:
        """A form whose submit answers the call with its fields (shaped by the tool's ``result``)."""
        return rx.form(rx.el.input(type="hidden", name="tool_call_id", value=self.row["id"]), *children,
                       on_submit=self.tool.submit, reset_on_submit=False, **props)


def tool_slot(state: type[ChatState]) -> rx.Component:
    """The waiting calls of the chat's frontend tools, in the order the agent made them."""
    tools = state.tool_states
    if not tools:
        return rx.fragment()

    def one(row: ObjectVar) -> rx.Component:
        cases = [(tool.tool_name, _wait(row, _render(ToolCall(row, tool)))) for tool in tools]
        return rx.match(row["name"], *cases, rx.fragment())

    return rx.box(rx.foreach(state.tool_waits, one), class_name="ic-tool-slot",
                  custom_attrs={"aria-live": "polite"})


def _render(call: ToolCall) -> rx.Component:
    render = getattr(call.tool, "render", None)
    return render(call) if callable(render) else default_tool_card(call)


def _wait(row: ObjectVar, body: rx.Component) -> rx.Component:
    attrs = {"data-testid": "tool-wait", "data-tool-call-id": row["id"], "data-tool-name": row["name"],
             "role": "group", "aria-label": "The agent asks you to answer a tool call"}
    return rx.card(body, class_name="ic-card ic-tool-wait", custom_attrs=attrs)


def default_tool_card(call: ToolCall) -> rx.Component:
    """The card for a tool without a render: its arguments, a result field, Respond and Decline."""
    field_id = "tool-result-" + call.row["id"].to(str)
    return call.form(
        rx.vstack(
            rx.heading(rx.text.span("The agent calls "), rx.code(call.row["name"]), size="3", as_="h2"),
            rx.el.pre(call.row["args_json"], class_name="ic-args"),
            rx.el.label("Result (JSON or text)", html_for=field_id, class_name="ic-hint"),
            rx.text_area(name="result", id=field_id, width="100%"),
            rx.hstack(
                rx.button("Respond", type="submit", custom_attrs={"data-testid": "tool-respond"}),
                rx.cond(call.row["cancellable"],
                        rx.button("Decline", type="button", variant="soft", color_scheme="gray",
                                  on_click=call.decline(), custom_attrs={"data-testid": "tool-cancel"})),
                spacing="2",
            ),
            spacing="2", align="start", width="100%",
        ),
    )
