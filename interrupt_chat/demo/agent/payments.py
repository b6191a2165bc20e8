"""The ``pay`` scenario: a ``pay_invoice`` tool call that waits for a tool approval, with an expiry.

"pay invoice 12000", "pay 250 to ACME", "pay invoice 12000 expires 30": the agent calls
``pay_invoice`` with ``{"invoice": "INV-<n>", "payee", "amount", "currency": "EUR"}`` and raises a
``tool_call`` interrupt for it (as the ``approval`` scenario does), ``expiresAt`` N seconds ahead when
the message says "expires N", else :data:`DEFAULT_EXPIRES_IN` (so reminders and escalation have an
expiry to work from). Approved: "Paid INV-… (<amount> EUR)."; rejected or cancelled: "Payment INV-…
was not made."
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from typing import Any, cast

from ag_ui.core import BaseEvent, ResumeEntry

from . import interrupts
from .context import RunContext, last_user_text
from .events import new_id
from .store import PendingInterrupt

__all__ = ["DEFAULT_AMOUNT", "DEFAULT_EXPIRES_IN", "DEFAULT_PAYEE", "TOOL", "continue_payment", "pay",
           "payment_args"]

TOOL = "pay_invoice"
DEFAULT_AMOUNT = 500
DEFAULT_PAYEE = "ACME Ltd"
DEFAULT_EXPIRES_IN = 600.0  # seconds to expiresAt unless the message says "expires N"
CURRENCY = "EUR"

_EXPIRES = re.compile(r"\bexpires?\s+(\d+(?:\.\d+)?)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_INVOICE = re.compile(r"\binvoice\s+#?(?:INV-)?(\d+)", re.IGNORECASE)


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def payment_args(text: str) -> tuple[dict[str, Any], float]:
    """The ``pay_invoice`` arguments a message asks for, and the seconds until the request expires.

    Args:
        text: the user's message ("pay invoice 12000 to Globex expires 30").

    Returns:
        ``({"invoice", "payee", "amount", "currency"}, expires_in)``: the amount is the first number
        (not counting "expires N"; default :data:`DEFAULT_AMOUNT`), the invoice number the one after
        "invoice" (else the amount's), the payee the word after "to" (default :data:`DEFAULT_PAYEE`).
    """
    expires = _EXPIRES.search(text)
    expires_in = float(expires.group(1)) if expires else DEFAULT_EXPIRES_IN
    rest = _EXPIRES.sub(" ", text)
    first = _NUMBER.search(rest)
    amount = _number(first.group()) if first else DEFAULT_AMOUNT
    invoice = _INVOICE.search(rest)
    number = invoice.group(1) if invoice else str(int(amount))
    words = rest.split()
    payee = next((words[i + 1].strip(string.punctuation) for i, word in enumerate(words[:-1])
                  if word.lower() == "to"), "") or DEFAULT_PAYEE
    return {"invoice": f"INV-{number}", "payee": payee, "amount": amount, "currency": CURRENCY}, expires_in


def pay(ctx: RunContext) -> Iterator[BaseEvent]:
    """Text, a streamed ``pay_invoice`` call and its tool approval (``expiresAt`` set)."""
    args, expires_in = payment_args(last_user_text(ctx.body))
    message_id, tool_call_id = new_id("msg"), new_id("call")
    yield ctx.ev.step_started("plan")
    yield from ctx.ev.text_message(f"I can pay {args['invoice']} now. I need your approval first.", message_id)
    yield from ctx.ev.tool_call(tool_call_id, TOOL, args, message_id)
    yield ctx.ev.step_finished("plan")
    pending = interrupts.approval(
        tool_call_id, TOOL, args, kind="payment", expires_in=expires_in,
        message=f"Pay {args['invoice']}: {_amount(args)} to {args['payee']}?",
    )
    # the reasons a person may give for a "no" with one click (interrupt-reject-option)
    pending.interrupt = pending.interrupt.model_copy(update={"rejectOptions": list(REJECT_OPTIONS)})
    yield ctx.snapshot("pay")
    yield from ctx.interrupt("pay", [pending])


REJECT_OPTIONS = ("Wrong amount", "Wrong payee", "Not now")


def continue_payment(item: PendingInterrupt, entry: ResumeEntry) -> tuple[str, str]:
    """(summary line, TOOL_CALL_RESULT content) for an answered ``pay_invoice`` approval.

    Args:
        item: the open ``payment`` interrupt.
        entry: its answer (validated against the response schema when resolved).
    """
    original = item.tool_args or {}
    invoice = original.get("invoice", "INV-?")
    if entry.status == "cancelled":
        return f"Payment {invoice} was not made.", "cancelled by user"
    payload = cast(dict[str, Any], entry.payload)
    if not payload["approved"]:
        why = payload.get("reason")
        line = f"Payment {invoice} was not made." + (f" Reason: {why}" if isinstance(why, str) and why else "")
        return line, line
    args = {**original, **payload.get("editedArgs", {})}
    line = f"Paid {args.get('invoice', invoice)} ({_amount(args)})."
    return line, line


def _amount(args: dict[str, Any]) -> str:
    return f"{args.get('amount', '?')} {args.get('currency', CURRENCY)}"
