"""The composer: Enter sends, Shift+Enter is a newline, locked while interrupts are pending (S21)."""

from __future__ import annotations

import reflex as rx

from ..assembly.state import ChatState
from .attachments import attach_button, attachment_chips, attachment_script, drop_zone

__all__ = ["COMPOSER_ID", "composer"]

#: The message box's element id: the target of a "skip to the message box" link (``href="#ic-composer"``).
COMPOSER_ID = "ic-composer"


def composer(state: type[ChatState]) -> rx.Component:
    """The message box with Send and Stop, and the hint shown while the agent waits for an answer."""
    running = state.status == "running"
    blocked = state.locked | state.signed_out  # S21, or nobody to send as (chat-signin)
    return drop_zone(state, rx.form(
        rx.el.textarea(
            name="text",
            rows=2,
            id=COMPOSER_ID,
            placeholder=rx.cond(state.locked, "Answer or cancel the agent's request above first.",
                                rx.cond(state.signed_out, "Sign in to use this chat.", "Message the agent…")),
            disabled=blocked,
            class_name="ic-composer-input",
            custom_attrs={"data-testid": "chat-input", "aria-label": "Message the agent",
                          "aria-disabled": rx.cond(blocked, "true", "false")},
        ),
        rx.vstack(
            rx.hstack(attach_button(), rx.button(rx.icon("send", size=14), "Send", type="submit",
                      disabled=blocked | running, custom_attrs={"data-testid": "chat-send"}), spacing="1"),
            rx.button(rx.icon("square", size=14), "Stop", type="button", color_scheme="gray",
                      variant="soft", high_contrast=True, on_click=state.stop, disabled=~running,
                      custom_attrs={"data-testid": "chat-stop"}),
            spacing="1", class_name="ic-composer-buttons",
        ),
        attachment_chips(state),
        rx.cond(state.locked, rx.text("The agent is waiting for your answer above — answer or cancel it to continue.",
                                      size="1", color_scheme="amber", high_contrast=True, class_name="ic-hint",
                                      custom_attrs={"data-testid": "chat-locked-hint"})),
        rx.cond(state.notice != "", rx.text(state.notice, size="1", color_scheme="gray",
                                            class_name="ic-hint", custom_attrs={"role": "status"})),
        on_submit=state.send,
        reset_on_submit=True,
        class_name="ic-composer",
        custom_attrs={"aria-label": "Message the agent"},
    ), attachment_script())
