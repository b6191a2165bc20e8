"""A card's risk (§6.4 ``interrupt-risk``): its level and why, from the policy file or ``ic.Chat(risk=...)``.

High is a solid red note at the top of the card, with an icon, so it cannot be missed; medium is
amber and low gray, both quiet. The text is the rationale (a default per level when none is given).
"""

from __future__ import annotations

from typing import Any

import reflex as rx

__all__ = ["risk_note"]

_ICONS = {"high": "octagon_alert", "medium": "triangle_alert", "low": "info"}
_DEFAULTS = {"high": "High risk", "medium": "Medium risk", "low": "Low risk"}


def risk_note(card: Any) -> rx.Component:
    """``interrupt-risk`` with ``data-level`` when ``card.risk_level`` is set; nothing otherwise."""
    text = rx.cond(card.risk_why != "", card.risk_why,
                   rx.match(card.risk_level, *_DEFAULTS.items(), "Risk"))

    def note(level: str) -> rx.Component:
        return rx.box(rx.icon(_ICONS[level], size=16 if level == "high" else 14, class_name="ic-risk-icon"),
                      rx.text.span(text, class_name="ic-risk-text"),
                      class_name=f"ic-risk ic-risk-{level}",
                      custom_attrs={"data-testid": "interrupt-risk", "data-level": level, "role": "note"})

    return rx.match(card.risk_level, *[(level, note(level)) for level in _ICONS], rx.fragment())
