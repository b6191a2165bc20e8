"""``decide_page()``: the ``/decide/<token>`` page of decision links (docs/guides/approvals-outside-the-chat.md).

Add it to the app once: ``app.add_page(ic.decide_page, route="/decide/[token]")``. A request other than
an approval (a form, a choice) is not answered here: the page shows it with ``decide-open``, a link to the
app (``decide_page(app_path="/inbox")`` when the app has an inbox page).
"""

from __future__ import annotations

from typing import Any, cast

import reflex as rx

from ..approvals.decide import IN_APP, INVALID, LOGIN, DecideState
from ..model.cards import Card
from .chat import STYLESHEET
from .people import people_line
from .risk import risk_note
from .say_no import reason_text, reject_options, reject_reason

__all__ = ["decide_page"]

_DONE = {"resolved": "Approved: your answer was sent.", "rejected": "Rejected: your answer was sent.",
         "cancelled": "Cancelled.", "dismissed": "Dismissed.", "expired": "This request has expired."}


def _open(app_path: str) -> rx.Component:
    card: Any = cast("Any", DecideState.card).to(Card)
    busy = DecideState.sending
    # each answer names the call the page showed (card.call_hash); Reject reads the reason box when clicked
    buttons = rx.vstack(
        rx.hstack(
            rx.button("Approve", on_click=DecideState.approve(card.call_hash), disabled=busy,
                      custom_attrs={"data-testid": "decide-approve"}),
            rx.button("Reject", color_scheme="red", variant="soft", high_contrast=True,
                      on_click=DecideState.reject(reason_text(card), card.call_hash), disabled=busy,
                      custom_attrs={"data-testid": "decide-reject"}),
            spacing="2",
        ),
        rx.cond(card.reason_box, rx.box(
            reject_reason(card, busy),
            reject_options(card, lambda option: DecideState.reject(option, card.call_hash), busy),
            class_name="ic-say-no")),
        spacing="2", width="100%",
    )
    in_app = rx.vstack(  # a form or a choice: its fields are typed in the app, never through a link
        rx.text(IN_APP, size="2"),
        rx.link("Open the app", href=app_path, custom_attrs={"data-testid": "decide-open"}),
        spacing="2",
    )
    return rx.card(
        rx.vstack(
            risk_note(card),  # first: a high risk is read before anything is decided (§6.4)
            rx.heading(card.prompt, as_="h1", size="4", weight="medium"),
            people_line(card),  # who it waits for, its approvals so far (§6.2)
            rx.cond(card.tool_name != "", rx.text("Tool: ", rx.code(card.tool_name), size="2")),
            rx.cond(card.edit_args != "", rx.el.pre(card.edit_args, class_name="ic-args")),
            rx.cond(card.plain, buttons, in_app),
            rx.cond(DecideState.error != "", rx.callout(DecideState.error, color_scheme="red", size="1",
                                                        icon="triangle_alert", custom_attrs={"role": "alert"})),
            spacing="3", width="100%",
        ),
        class_name="ic-card",
        custom_attrs={"data-testid": "decide-card", "data-interrupt-id": card.id,
                      "data-reason": card.reason},
    )


def decide_page(app_path: str = "/") -> rx.Component:
    """The request a decision link names, with Approve / Reject; or why it cannot be answered here.

    An approval shows its risk, and (when its schema takes a reason) the reject reason box and the
    interrupt's reject options (§6.4); there is no rule editor here.

    Args:
        app_path: where the "open the app" link of a request that is not an approval leads.
    """
    done = rx.match(DecideState.action, *_DONE.items(), "Answered.")
    return rx.center(
        rx.el.link(rel="stylesheet", href=STYLESHEET),
        rx.el.main(
            rx.match(
                DecideState.phase,
                ("open", _open(app_path)),
                ("done", rx.callout(rx.cond(DecideState.again != "", DecideState.again, done), icon="check",
                                    custom_attrs={"data-testid": "decide-done", "data-action": DecideState.action,
                                                  "data-again": rx.cond(DecideState.again != "", "true", "false")})),
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
