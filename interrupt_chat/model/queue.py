"""The inbox as a work queue: its order ("expires soonest" or "oldest first") and its filters (reason, tool).

Framework-free: plain functions over the inbox's :class:`~interrupt_chat.model.cards.Card` rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..agui import parse_expiry
from .cards import Card

__all__ = ["SORTS", "arrange"]

SORTS = ("expires", "oldest")


def _expires(card: Card) -> tuple[int, str, str]:
    moment = parse_expiry(card.expires_at)
    return (0, moment.isoformat(), card.raised) if moment is not None else (1, "", card.raised)


def arrange(cards: Sequence[Card], sort: str = "expires", reason: str = "", tool: str = "") -> list[Card]:
    """The cards to list: those of ``reason`` and ``tool`` ("" = any), by ``sort``.

    ``expires``: the soonest to expire first (those that never expire last, oldest first among
    them); ``oldest``: the longest waiting first. Cards of one set keep their order.
    """
    shown = [c for c in cards if (not reason or c.reason == reason) and (not tool or c.tool_name == tool)]
    if sort == "oldest":
        return sorted(shown, key=lambda c: c.raised or "~")  # stable: a set's cards stay in order
    return sorted(shown, key=_expires)
