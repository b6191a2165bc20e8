"""``decide_page()``: the ``/decide/<token>`` page of decision links (README, "Approvals outside the chat").

Add it to the app once: ``app.add_page(ic.decide_page, route="/decide/[token]")``.
"""

from __future__ import annotations

from typing import Any, cast

import reflex as rx

from ..cards import Card
from ..decide import INVALID, LOGIN, DecideState
from .chat import STYLESHEET
from .interrupt_slot import _field

__all__ = ["decide_page"]

_DONE = {"resolved": "Approved: your answer was sent.", "rejected": "Rejected: your answer was sent.",
         "cancelled": "Cancelled.", "dismissed": "Dismissed.", "expired": "This request has expired."}


def _open() -> rx.Component:
    card: Any = cast("Any", DecideState.card).to(Card)
    busy = DecideState.sending
    buttons = rx.hstack(
        rx.button("Approve", on_click=DecideState.approve, disabled=busy,
                  custom_attrs={"data-testid": "decide-approve"}),
        rx.button("Reject", color_scheme="red", variant="soft", high_contrast=True, on_click=DecideState.reject,
                  disabled=busy, custom_attrs={"data-testid": "decide-reject"}),
        spacing="2",
    )
    form = rx.form(
        rx.foreach(card.fields, _field),
        rx.hstack(rx.button("Send", type="submit", disabled=busy, custom_attrs={"data-testid": "decide-submit"}),
                  rx.button("Reject", type="button", color_scheme="red", variant="soft", high_contrast=True,
                            on_click=DecideState.reject, disabled=busy,
                            custom_attrs={"data-testid": "decide-reject"}),
                  spacing="2"),
        on_submit=DecideState.submit, class_name="ic-form",
    )
    return rx.card(
        rx.vstack(
            rx.heading(card.prompt, as_="h1", size="4", weight="medium"),
            rx.cond(card.tool_name != "", rx.text("Tool: ", rx.code(card.tool_name), size="2")),
            rx.cond(card.edit_args != "", rx.el.pre(card.edit_args, class_name="ic-args")),
            rx.cond(card.kind == "form", form, buttons),
            rx.cond(DecideState.error != "", rx.callout(DecideState.error, color_scheme="red", size="1",
                                                        icon="triangle_alert", custom_attrs={"role": "alert"})),
            spacing="3", width="100%",
        ),
        class_name="ic-card",
        custom_attrs={"data-testid": "decide-card", "data-interrupt-id": card.id,
                      "data-reason": card.reason},
    )


def decide_page() -> rx.Component:
    """The request a decision link names, with Approve / Reject (or its form); or why it cannot be answered."""
    done = rx.match(DecideState.action, *_DONE.items(), "Answered.")
    return rx.center(
        rx.el.link(rel="stylesheet", href=STYLESHEET),
        rx.el.main(
            rx.match(
                DecideState.phase,
                ("open", _open()),
                ("done", rx.callout(done, icon="check", custom_attrs={"data-testid": "decide-done",
                                                                      "data-action": DecideState.action})),
                ("invalid", rx.callout(INVALID, icon="triangle_alert", color_scheme="red",
                                       custom_attrs={"data-testid": "decide-invalid"})),
                ("login", rx.callout(LOGIN, icon="lock", custom_attrs={"data-testid": "decide-login"})),
                rx.text("Loading…", color_scheme="gray"),
            ),
            class_name="ic-decide", id="main",
        ),
        on_mount=DecideState.load,
        padding="2rem",
    )
