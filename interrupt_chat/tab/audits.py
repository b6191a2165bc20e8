"""A decision captured for the audit trail inside the lock, and written after it (``saving.write``)."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..agui import AgentSession, is_expired
from ..model.requests import about

__all__ = ["ACTOR", "Audit", "expired_audits", "waited_ms"]

ACTOR: contextvars.ContextVar[str] = contextvars.ContextVar("interrupt_chat_actor", default="")
"""Who decides, by their public name, when not the thread's owner (an assignee: approvals/people)."""


@dataclass
class Audit:
    """One decision for the audit trail, captured inside the lock and written after it."""

    thread_id: str
    run_id: str | None
    interrupt_id: str
    reason: str | None
    action: str  # resolved | cancelled | rejected | expired | dismissed
    payload: Any = None
    schema: Any = None
    by: str = "person"  # person | bulk | policy | link | expiry
    detail: dict[str, Any] | None = None  # a policy's answer: {tool, rule, policyId, toolCallId}
    about: dict[str, str] = field(default_factory=dict)  # its message, tool, tool call (requests.about; not stored)
    waited_ms: int | None = None  # from the request surfacing to the answer (read at the claim; None: read later)



def waited_ms(since: datetime | None) -> int | None:
    """Milliseconds from ``since`` (a thread's ``pending_since``) to now; None when unknown."""
    return max(0, int((datetime.now(UTC) - since).total_seconds() * 1000)) if since is not None else None


def expired_audits(session: AgentSession, entries: list[Any]) -> list[Audit]:
    """Members of a submitted set sent as ``cancelled`` because they had expired (S11)."""
    pending = session.tracker.pending
    by_id = {i.id: i for i in pending.interrupts} if pending else {}
    now = session.tracker.now()
    return [Audit(session.thread_id, pending.run_id if pending else None, e.interrupt_id,
                  by_id[e.interrupt_id].reason, "expired", about=about(session, e.interrupt_id))
            for e in entries if e.status == "cancelled" and e.interrupt_id in by_id
            and is_expired(by_id[e.interrupt_id], now)]
