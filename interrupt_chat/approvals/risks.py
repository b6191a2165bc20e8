"""``interrupt-risk`` (§6.4): how risky each request is, drawn on its card (chat, inbox, ``/decide``).

From the policy file's first rule that covers the call and names a risk (an enforced rule before a
shadow one), else from the app's ``ic.Chat(risk=fn)``: ``fn(request) -> ic.Risk | None``, given an
``ic.Request`` (its tool, arguments, message…). An app function that raises or answers something
else is logged and rates nothing: a card is never lost to it.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from ..agui import parse_expiry
from ..model import policies
from ..model.people import Request
from ..model.policy_file import LEVELS, Risk
from . import file_rules

if TYPE_CHECKING:
    from datetime import datetime

    from ag_ui.core import Interrupt

    from ..agui import AgentSession, Pending, Transcript

__all__ = ["annotate", "app_risk", "rate"]

log = logging.getLogger(__name__)


def _request(thread_id: str, transcript: Transcript, interrupt: Interrupt) -> Request:
    args = policies.call_args(interrupt, transcript)
    return Request(thread_id, interrupt.id, "", str(interrupt.reason or ""), policies.tool_name(interrupt, transcript),
                   args if isinstance(args, dict) else {} if args is None else {"value": args},
                   str(interrupt.message or ""), parse_expiry(interrupt.expires_at))


def app_risk(fn: Any, request: Request) -> Risk | None:
    """The app's ``risk`` function's rating of ``request`` (None when it gives none, or fails)."""
    try:
        found = fn(request)
    except Exception:
        log.exception("ic.Chat(risk=...) raised; the card is drawn without a risk")
        return None
    if isinstance(found, Risk) and found.level in LEVELS:
        return found
    if found is not None:
        log.warning("ic.Chat(risk=...) returned %s, not an ic.Risk(level in %s, why)", type(found).__name__, LEVELS)
    return None


def annotate(chat_cls: Any, session: AgentSession, cards: list[Any]) -> list[Any]:
    """The chat's cards, each with the risk of the call it asks about (``risk_level``, ``risk_why``), if known."""
    return rate(chat_cls, session.tracker.pending, session.transcript, session.thread_id, session.tracker.now(), cards)


def rate(chat_cls: Any, pending: Pending | None, transcript: Transcript, thread_id: str, now: datetime,
         cards: list[Any]) -> list[Any]:
    """``cards`` of ``pending``'s set with their risks (the inbox's and ``/decide``'s too)."""
    fn = getattr(chat_cls, "risk_fn", None)
    rules = file_rules.rules_of(chat_cls)
    if pending is None or pending.kind != "standard" or not cards or (not rules and fn is None):
        return cards
    rated = policies.surface(pending, (), transcript, [], thread_id, lambda _tool, _i: True, now,
                             file_rules=rules).risks
    by_id = {interrupt.id: interrupt for interrupt in pending.interrupts}
    out = []
    for card in cards:
        risk = rated.get(card.id)
        if risk is None and fn is not None and card.id in by_id:
            risk = app_risk(fn, _request(thread_id, transcript, by_id[card.id]))
        out.append(dataclasses.replace(card, risk_level=risk.level, risk_why=risk.why) if risk else card)
    return out
