"""A transcript row: a user or assistant message (sanitized markdown), a tool result, tool-call cards."""

from __future__ import annotations

from typing import Any

import reflex as rx

__all__ = ["message_row", "safe_markdown", "tool_call_card"]

_STATUS_COLOR = {
    "streaming": "gray",
    "running": "blue",
    "awaiting_approval": "amber",
    "complete": "green",
    "failed": "red",
}


def safe_markdown(source: Any) -> rx.Component:
    """Agent text as markdown with raw HTML off (S24); react-markdown drops ``javascript:`` URLs."""
    return rx.markdown(source, use_raw=False, use_math=False, use_katex=False, class_name="ic-markdown")


def tool_call_card(call: Any) -> rx.Component:
    """One tool call (a ``ToolCallRow`` var): name, status badge, arguments and result."""
    status = call.status
    return rx.box(
        rx.hstack(
            rx.icon("wrench", size=14),
            rx.text(call.name, weight="medium", size="2", class_name="ic-mono"),
            rx.spacer(),
            rx.cond(
                call.rejected,
                rx.badge("rejected", color_scheme="red", variant="soft", size="1"),
                rx.match(
                    status,
                    *[(s, rx.badge(s.replace("_", " "), color_scheme=c, variant="soft", size="1"))
                      for s, c in _STATUS_COLOR.items()],
                    rx.badge(status, variant="soft", size="1"),
                ),
            ),
            align="center",
            width="100%",
        ),
        rx.el.pre(call.args, class_name="ic-args"),
        rx.cond(  # the tool's result message, drawn here rather than as a row of its own (shown once)
            call.result_id != "",
            rx.text("→ ", call.result, size="1", color_scheme="gray", class_name="ic-result",
                    custom_attrs={"data-testid": "message", "data-role": "tool", "data-message-id": call.result_id}),
        ),
        class_name="ic-tool-call",
        custom_attrs={"data-testid": "tool-call", "data-tool-call-id": call.id, "data-status": status,
                      "data-rejected": rx.cond(call.rejected, "true", "false")},
    )


def _bubble(row: Any, body: rx.Component, role: str) -> rx.Component:
    return rx.box(
        body,
        rx.foreach(row.tool_calls, tool_call_card),
        class_name=f"ic-message ic-{role}",
        custom_attrs={"data-testid": "message", "data-role": role, "data-message-id": row.id},
    )


def message_row(row: Any) -> rx.Component:
    """Draw one row by role. Agent strings are text or sanitized markdown only (S24)."""
    return rx.match(
        row.role,
        ("user", _bubble(row, rx.text(row.content, class_name="ic-user-text"), "user")),
        ("tool", _bubble(row, rx.text(row.content, size="2", class_name="ic-mono"), "tool")),
        ("reasoning", rx.box(rx.text(row.content, size="1", color_scheme="gray"), class_name="ic-reasoning",
                             custom_attrs={"data-testid": "reasoning"})),
        _bubble(row, rx.cond(row.content != "", safe_markdown(row.content)), "assistant"),
    )
