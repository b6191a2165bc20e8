"""Saying no with a reason (§6.4): the reject reason box, the reject options, and Reject's answer.

The box is uncontrolled: what is typed stays in the page until Reject is clicked, and the click reads
it then (a JavaScript expression evaluated inside the click's handler, by the box's unique DOM id),
so nothing is sent to the server while the person types. Drawn on tool approvals whose schema takes
a string ``reason`` (``card.reason_box``); without the box, Reject sends ``{"approved": false}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx
from reflex.vars.base import Var

from ..model.cards import REASON_MAX
from .page_vars import js_var as _js

__all__ = ["reason_text", "reject_options", "reject_reason", "rejection"]



def _reason_id(card: Any) -> Any:
    """The box's DOM id: one per thread and interrupt, so the inbox's many cards never share one."""
    return "ic-reason-" + card.thread_id.to(str) + "-" + card.id.to(str)


def reason_text(card: Any) -> Var:
    """The typed reason, trimmed, read when the click happens ("" without a box or when it is blank)."""
    box = _reason_id(card)
    return _js(f'(({card.reason_box}) ? String(document.getElementById({box})?.value ?? "").trim()'
               f'.slice(0, {REASON_MAX}) : "")', str, card, box)


def rejection(card: Any) -> Var:
    """Reject's answer, built at click time: ``{"approved": false, "reason": <text>}``, no ``reason`` when blank."""
    return _js(f"((ic_reason) => (ic_reason ? ({{ approved: false, reason: ic_reason }}) : ({{ approved: false }})))"
               f"({reason_text(card)})", dict[str, Any], card)


def reject_reason(card: Any, disabled: Any) -> rx.Component:
    """The ``interrupt-reject-reason`` box (only on a card with ``reason_box``).

    Keyed by its id: a new card at the same place gets an empty box, never the last card's text.
    """
    box = _reason_id(card)
    return rx.cond(card.reason_box, rx.el.input(
        type="text", id=box, key=box, placeholder="Why not? (sent to the agent)", max_length=REASON_MAX,
        auto_complete="off", disabled=disabled, class_name="ic-input ic-reject-reason",
        custom_attrs={"data-testid": "interrupt-reject-reason",
                      "aria-label": "Why not? The reason is sent to the agent with Reject"},
    ))


def reject_options(card: Any, reject: Callable[[Any], Any], disabled: Any) -> rx.Component:
    """One ``interrupt-reject-option`` button per ``card.reject_options``; ``reject(option)`` is its click's event."""
    return rx.foreach(card.reject_options, lambda option: rx.button(
        option, type="button", size="1", variant="soft", color_scheme="red", high_contrast=True, disabled=disabled,
        on_click=reject(option), class_name="ic-reject-option",
        custom_attrs={"data-testid": "interrupt-reject-option", "data-option": option,
                      "aria-label": "Reject: " + option.to(str)},
    ))
