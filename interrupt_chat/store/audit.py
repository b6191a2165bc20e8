"""The audit trail: what was decided about each interrupt, by whom, append-only; and its JSON Lines export."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from . import chain as store_chain
from . import feedback as store_feedback
from . import policies as store_policies
from .masking import mask_secrets
from .rows import _aware
from .schema import decisions_table, threads_table
from .types import DecisionRecord

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["CHAIN_ONLY", "DECIDED_BY", "DECISION_ACTIONS", "NOT_DECISIONS", "decisions", "export_jsonl", "record",
           "rejection_streak"]

DECISION_ACTIONS = ("resolved", "cancelled", "rejected", "expired", "dismissed",
                    "approved-partly", "reassigned", "escalated",  # people (docs/decisions/0025)
                    "shadow", "paused", "unpaused",  # rules that fit (§6.4): a shadow rule's verdict, the pause
                    "rule-made", "rule-revoked", "delegated", "delegation-ended")  # chained only (issue 44)
DECIDED_BY = ("person", "bulk", "policy", "link", "expiry")
NOT_DECISIONS = ("shadow", "paused", "unpaused")  # audit entries that answer nothing (nothing is notified of them)
CHAIN_ONLY = ("rule-made", "rule-revoked", "delegated", "delegation-ended")  # in the chain, not in a trail's list


def record(db: ThreadDB, owner: str, thread_id: str, run_id: str | None, interrupt_id: str | None,
           reason: str | None, action: str, payload: Any = None, schema: Any = None, by: str = "person",
           detail: dict[str, Any] | None = None, *, tool: str = "", decider: str = "",
           waited_ms: int | None = None) -> DecisionRecord:
    """Append what was decided about one interrupt to the audit trail.

    Args:
        db: the thread database.
        owner: whose thread.
        thread_id: the thread.
        run_id: the run that raised the interrupt (the resume's ``parentRunId``).
        interrupt_id: the interrupt's id (None or "" for a legacy interrupt).
        reason: the interrupt's ``reason``.
        action: one of :data:`DECISION_ACTIONS`.
        payload: the answer; every masked field (per ``schema``) is stored as ``MASKED`` (S23).
        schema: the interrupt's ``responseSchema``.
        by: who or what decided, one of :data:`DECIDED_BY`.
        detail: what more to say of it (a policy's answer: the tool, the rule, the tool call).
        tool: the tool the request was about ("" when none): what ``/insights`` groups by.
        decider: who decided when not the owner, by their public name (an assignee, a delegate).
        waited_ms: how long the request waited, when the caller read it (a tab reads it at the claim);
            else it is read here.

    The owner is stored by their public name too (``db.public_name``, set by the app: an ``owner=`` id
    or an HMAC), and the time the request waited (from the thread's ``pending_since``, read in the
    same transaction; a rule's answer before the card surfaced waited 0).

    Returns:
        The entry as stored.

    Raises:
        ValueError: ``action`` is not one of :data:`DECISION_ACTIONS`, or ``by`` not one of :data:`DECIDED_BY`.
        ThreadDBError: the database failed.
    """
    if action not in DECISION_ACTIONS:
        raise ValueError(f"unknown decision action {action!r} (expected one of {', '.join(DECISION_ACTIONS)})")
    if by not in DECIDED_BY:
        raise ValueError(f"unknown decider {by!r} (expected one of {', '.join(DECIDED_BY)})")
    masked = mask_secrets(payload, schema)
    at = db._stamp()
    public = store_chain.public_of(db, owner)  # before the transaction: naming may read the server secret
    with db._transaction("record the decision", write=True) as conn:
        t, waited = threads_table, waited_ms
        if waited is None:
            since = _aware(conn.execute(select(t.c.pending_since).where(
                (t.c.owner == owner) & (t.c.thread_id == thread_id))).scalar()) if thread_id else None
            waited = max(0, int((at - since).total_seconds() * 1000)) if since else 0 if by == "policy" else None
        key = store_chain.append(conn, {  # the chain's next entry (store/chain.py)
            "owner": owner, "thread_id": thread_id, "run_id": run_id, "interrupt_id": interrupt_id or "",
            "reason": reason, "action": action, "payload": masked, "at": at, "decided_by": by, "detail": detail,
            "owner_public": public, "decider": decider or public, "tool": tool or "", "waited_ms": waited})
    return DecisionRecord(key, thread_id, run_id, interrupt_id or "", reason, action, masked, at, by, detail)


def decisions(db: ThreadDB, owner: str, thread_id: str | None = None) -> list[DecisionRecord]:
    """``owner``'s audit trail (one thread's, when given), oldest first.

    Raises:
        ThreadDBError: the database failed.
    """
    d = decisions_table
    query = select(d).where((d.c.owner == owner) & d.c.action.not_in(CHAIN_ONLY))
    if thread_id is not None:
        query = query.where(d.c.thread_id == thread_id)
    with db._transaction("read the audit trail") as conn:
        rows = conn.execute(query.order_by(d.c.id)).all()
    return [DecisionRecord(r.id, r.thread_id, r.run_id, r.interrupt_id, r.reason, r.action, r.payload,
                           _aware(r.at), r.decided_by or "person", r.detail) for r in rows]


def export_jsonl(db: ThreadDB, owner: str) -> str:
    """``owner``'s audit trail as JSON Lines, oldest first.

    One ``DecisionRecord.to_json`` object a line, one ``{"kind": "policy", "event": "created" | "revoked",
    "policyId", "tool", "scope", "effect", "threadId", "at"}`` line each time a rule was made or revoked, and
    one ``{"kind": "feedback", …}`` line per rated message.

    Raises:
        ThreadDBError: the database failed.
    """
    lines = ([d.to_json() for d in decisions(db, owner)] + store_policies.events(db, owner)
             + [f.to_json() for f in store_feedback.of_owner(db, owner)])
    lines.sort(key=lambda line: str(line["at"]))
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


APPROVAL_REASONS = ("tool_call", "confirmation")  # the reasons of tool approvals (what the denial limit counts)


def rejection_streak(db: ThreadDB, owner: str, thread_id: str, look_back: int = 200) -> int:
    """A person's rejections of tool approvals in a row, newest first, in one thread (the denial limit, §6.4).

    Counted: ``rejected`` by a person or through a link. A person's approval (``resolved``,
    ``approved-partly``, in the app or through a link) ends the streak; anything else (a rule's answer,
    bulk, cancel, expiry, a shadow entry) neither counts nor ends it.
    """
    d = decisions_table
    with db._transaction("read the rejections") as conn:
        rows = conn.execute(select(d.c.action, d.c.decided_by, d.c.reason)
                            .where((d.c.owner == owner) & (d.c.thread_id == thread_id))
                            .order_by(d.c.id.desc()).limit(look_back)).all()
    count = 0
    for row in rows:
        if row.reason not in APPROVAL_REASONS:
            continue
        if (row.decided_by or "person") not in ("person", "link"):
            continue
        if row.action in ("resolved", "approved-partly"):
            break
        if row.action == "rejected":
            count += 1
    return count
