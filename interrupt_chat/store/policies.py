"""The owners' rules (:mod:`interrupt_chat.model.policies`) in the thread database: made, listed, revoked.

A rule is a row; a revoke stamps ``revoked_at`` rather than deleting it, so the audit export
says when each rule was made and revoked. Making a rule for a tool and scope that already has
one replaces it (the old one is revoked in the same transaction).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..model.policies import EFFECTS, SCOPES, Rule
from .schema import decisions_table, policies_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["add", "answered", "events", "revoke", "rules"]


def _rule(row: Any) -> Rule:
    created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    return Rule(row.id, row.tool, row.scope, row.effect, row.thread_id, created)


def add(db: ThreadDB, owner: str, tool: str, scope: str, effect: str, thread_id: str = "") -> Rule:
    """Make a rule for ``owner`` (replacing the one of the same tool, scope and thread).

    Raises:
        ValueError: an unknown scope or effect, no tool, or a thread rule without its thread.
    """
    if scope not in SCOPES or effect not in EFFECTS or not tool or (scope == "thread" and not thread_id):
        raise ValueError(f"not a rule: tool={tool!r} scope={scope!r} effect={effect!r} thread={thread_id!r}")
    thread_id = thread_id if scope == "thread" else ""
    t, now = policies_table, datetime.now(UTC)
    with db._transaction("make a rule", write=True) as conn:
        conn.execute(t.update().where((t.c.owner == owner) & (t.c.tool == tool) & (t.c.scope == scope)
                                      & (t.c.thread_id == thread_id) & t.c.revoked_at.is_(None))
                     .values(revoked_at=now))
        key = conn.execute(t.insert().values(owner=owner, tool=tool, scope=scope, effect=effect,
                                             thread_id=thread_id, created_at=now)).inserted_primary_key
    return Rule(int(key[0]) if key else 0, tool, scope, effect, thread_id, now)


def rules(db: ThreadDB, owner: str, thread_id: str | None = None) -> list[Rule]:
    """``owner``'s rules in force, newest first (with ``thread_id``: the always rules and that thread's)."""
    t = policies_table
    query = select(t).where((t.c.owner == owner) & t.c.revoked_at.is_(None))
    if thread_id is not None:
        query = query.where((t.c.scope == "always") | (t.c.thread_id == thread_id))
    with db._transaction("read the rules") as conn:
        return [_rule(row) for row in conn.execute(query.order_by(t.c.id.desc())).all()]


def revoke(db: ThreadDB, owner: str, rule_id: int) -> bool:
    """Revoke one of ``owner``'s rules; False when it is not theirs or was revoked already."""
    t = policies_table
    with db._transaction("revoke a rule", write=True) as conn:
        done = conn.execute(t.update().where((t.c.owner == owner) & (t.c.id == rule_id) & t.c.revoked_at.is_(None))
                            .values(revoked_at=datetime.now(UTC)))
    return bool(done.rowcount)


def events(db: ThreadDB, owner: str) -> list[dict[str, Any]]:
    """Each rule's making and revoking, oldest first, as the audit export's lines (``kind: "policy"``)."""
    t = policies_table
    with db._transaction("read the rules' history") as conn:
        rows = conn.execute(select(t).where(t.c.owner == owner).order_by(t.c.id)).all()
    out = []
    for row in rows:
        rule = _rule(row)
        base = {"kind": "policy", "policyId": rule.id, "tool": rule.tool, "scope": rule.scope, "effect": rule.effect,
                "threadId": rule.thread_id}
        out.append({**base, "event": "created", "at": rule.created_at.isoformat() if rule.created_at else ""})
        if row.revoked_at is not None:
            revoked = row.revoked_at if row.revoked_at.tzinfo else row.revoked_at.replace(tzinfo=UTC)
            out.append({**base, "event": "revoked", "at": revoked.isoformat()})
    return sorted(out, key=lambda line: line["at"])


def answered(db: ThreadDB, owner: str, run_id: str) -> set[str]:
    """The interrupts of the set ``run_id`` raised that a rule answered (their audit entries say ``policy``)."""
    d = decisions_table
    with db._transaction("read the rules' answers") as conn:
        return set(conn.execute(select(d.c.interrupt_id).where(
            (d.c.owner == owner) & (d.c.run_id == run_id) & (d.c.decided_by == "policy"))).scalars())
