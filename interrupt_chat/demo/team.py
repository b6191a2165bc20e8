"""The demo's people and its routing (``INTERRUPT_CHAT_DEMO_PEOPLE=1``; docs/guides/people.md).

alice (role staff), bob and dave (role finance), carol (role managers). On the main chat a tool approval
for ``pay_invoice`` goes to ``role:finance``; one of more than 10,000 needs two approvals; it is
reminded at half its time to expiry and goes up to ``role:managers`` at 80 %. Everything else stays with
the person who asked, and an anonymous visitor's requests always do.
"""

from __future__ import annotations

from typing import Any

import interrupt_chat as ic

__all__ = ["DEMO_IDS", "TEAM", "TWO_APPROVALS_ABOVE", "amount_of"]

DEMO_IDS = ("alice", "bob", "carol", "dave")
TWO_APPROVALS_ABOVE = 10_000
_ROLES = {"alice": ("staff",), "bob": ("finance",), "carol": ("managers",), "dave": ("finance",)}


def amount_of(request: ic.Request) -> float:
    """The ``amount`` argument of a payment (0 when it has none that reads as a number)."""
    value: Any = request.args.get("amount")
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _payment(request: ic.Request) -> bool:
    return request.tool == "pay_invoice" and bool(request.asker)  # an anonymous visitor's stays theirs


TEAM = ic.People(
    [ic.Person(pid, pid.capitalize(), f"{pid}@example.test", f"U{pid.upper()}", _ROLES[pid]) for pid in DEMO_IDS],
    assign=lambda r: ["role:finance"] if _payment(r) else [],
    approvals=lambda r: 2 if _payment(r) and amount_of(r) > TWO_APPROVALS_ABOVE else 1,
    escalation=lambda r: ic.Escalation(remind_at=0.5, escalate_at=0.8, to=("role:managers",)) if _payment(r) else None,
)
