"""The owners' rules (:mod:`interrupt_chat.model.policies`) in the thread database: made, listed, revoked.

A rule is a row; a revoke stamps ``revoked_at`` rather than deleting it, so the audit export
says when each rule was made and revoked. Making a rule for a tool, scope and conditions that
already has one replaces it (the old one is revoked in the same transaction). A rule past its
``expires_at`` is not read: it answers nothing and leaves the list (§6.4).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..model.conditions import When, check
from ..model.policies import EFFECTS, SCOPES, Rule
from . import chain
from .schema import decisions_table, pauses_table, policies_table, threads_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["add", "answered", "events", "paused_since", "revoke", "rules", "running_threads", "set_pause"]


def _aware(moment: datetime | None) -> datetime | None:
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def _rule(row: Any) -> Rule:
    return Rule(row.id, row.tool, row.scope, row.effect, row.thread_id, _aware(row.created_at),
                conditions=dict(row.conditions or {}), expires_at=_aware(row.expires_at),
                schema_hash=row.schema_hash or "")


def add(db: ThreadDB, owner: str, tool: str, scope: str, effect: str, thread_id: str = "", *,
        conditions: When | None = None, expires_at: datetime | None = None, schema_hash: str = "") -> Rule:
    """Make a rule for ``owner`` (replacing the one of the same tool, scope, thread and conditions).

    Args:
        db: the thread database.
        owner: whose rule (an owner key).
        tool: the tool it answers for.
        scope: ``thread`` or ``always``.
        effect: ``allow`` or ``deny``.
        thread_id: the thread of a ``thread`` rule.
        conditions: what the call's arguments must meet (:mod:`interrupt_chat.model.conditions`); none: any call.
        expires_at: when it stops answering (None: until revoked).
        schema_hash: the tool's fingerprint when it was made (:func:`~interrupt_chat.model.policies.fingerprint`);
            a call whose tool changed since is not answered ("": any).

    Raises:
        ValueError: an unknown scope, effect or condition, no tool, or a thread rule without its thread.
    """
    if scope not in SCOPES or effect not in EFFECTS or not tool or (scope == "thread" and not thread_id):
        raise ValueError(f"not a rule: tool={tool!r} scope={scope!r} effect={effect!r} thread={thread_id!r}")
    when = check(conditions or {})
    thread_id = thread_id if scope == "thread" else ""
    t, now, public = policies_table, datetime.now(UTC), chain.public_of(db, owner)
    with db._transaction("make a rule", write=True) as conn:
        same = [row.id for row in conn.execute(select(t.c.id, t.c.conditions).where(
            (t.c.owner == owner) & (t.c.tool == tool) & (t.c.scope == scope) & (t.c.thread_id == thread_id)
            & t.c.revoked_at.is_(None))).all() if dict(row.conditions or {}) == when]
        if same:
            conn.execute(t.update().where(t.c.id.in_(same)).values(revoked_at=now))
            for old in same:
                chain.append_event(conn, db, owner, public, "rule-revoked",
                                   {"policyId": old, "tool": tool, "replaced": True})
        key = conn.execute(t.insert().values(owner=owner, tool=tool, scope=scope, effect=effect, thread_id=thread_id,
                                             created_at=now, conditions=when or None, expires_at=expires_at,
                                             schema_hash=schema_hash or None)).inserted_primary_key
        rule = Rule(int(key[0]) if key else 0, tool, scope, effect, thread_id, now, conditions=when,
                    expires_at=expires_at, schema_hash=schema_hash)
        chain.append_event(conn, db, owner, public, "rule-made", {
            "policyId": rule.id, "tool": tool, "scope": scope, "effect": effect, "conditions": when,
            "expiresAt": expires_at.isoformat() if expires_at else None}, thread_id)
    return rule


def rules(db: ThreadDB, owner: str, thread_id: str | None = None) -> list[Rule]:
    """``owner``'s rules in force, newest first (with ``thread_id``: the always rules and that thread's).

    A rule whose ``expires_at`` has come is left out (the boundary counts as expired).
    """
    t = policies_table
    query = select(t).where((t.c.owner == owner) & t.c.revoked_at.is_(None)
                            & (t.c.expires_at.is_(None) | (t.c.expires_at > datetime.now(UTC))))
    if thread_id is not None:
        query = query.where((t.c.scope == "always") | (t.c.thread_id == thread_id))
    with db._transaction("read the rules") as conn:
        return [_rule(row) for row in conn.execute(query.order_by(t.c.id.desc())).all()]


def revoke(db: ThreadDB, owner: str, rule_id: int) -> bool:
    """Revoke one of ``owner``'s rules; False when it is not theirs or was revoked already."""
    t, public = policies_table, chain.public_of(db, owner)
    with db._transaction("revoke a rule", write=True) as conn:
        tool = conn.execute(select(t.c.tool).where((t.c.owner == owner) & (t.c.id == rule_id)
                                                   & t.c.revoked_at.is_(None))).scalar()
        if tool is None:
            return False
        conn.execute(t.update().where(t.c.id == rule_id).values(revoked_at=datetime.now(UTC)))
        chain.append_event(conn, db, owner, public, "rule-revoked", {"policyId": rule_id, "tool": tool})
    return True


def events(db: ThreadDB, owner: str) -> list[dict[str, Any]]:
    """Each rule's making and revoking, oldest first, as the audit export's lines (``kind: "policy"``)."""
    t = policies_table
    with db._transaction("read the rules' history") as conn:
        rows = conn.execute(select(t).where(t.c.owner == owner).order_by(t.c.id)).all()
    out, now = [], datetime.now(UTC)
    for row in rows:
        rule = _rule(row)
        base = {"kind": "policy", "policyId": rule.id, "tool": rule.tool, "scope": rule.scope, "effect": rule.effect,
                "threadId": rule.thread_id, "conditions": rule.conditions,
                "expiresAt": rule.expires_at.isoformat() if rule.expires_at else None}
        out.append({**base, "event": "created", "at": rule.created_at.isoformat() if rule.created_at else ""})
        if row.revoked_at is not None:
            out.append({**base, "event": "revoked", "at": (_aware(row.revoked_at) or now).isoformat()})
    return sorted(out, key=lambda line: line["at"])


def answered(db: ThreadDB, owner: str, run_id: str) -> set[str]:
    """The interrupts of the set ``run_id`` raised that a rule answered (their audit entries say ``policy``)."""
    d = decisions_table
    with db._transaction("read the rules' answers") as conn:
        return set(conn.execute(select(d.c.interrupt_id).where(
            (d.c.owner == owner) & (d.c.run_id == run_id) & (d.c.decided_by == "policy")
            & (d.c.action != "shadow"))).scalars())  # a shadow rule's entry answers nothing


def paused_since(db: ThreadDB, owner: str) -> datetime | None:
    """When ``owner`` (a person: the pause holds for all of their chats) paused their agents, else None."""
    with db._transaction("read the pause") as conn:
        found = conn.execute(select(pauses_table.c.since).where(pauses_table.c.owner == owner)).scalar()
    return _aware(found)


def set_pause(db: ThreadDB, owner: str, on: bool) -> bool:
    """Turn ``owner``'s pause on or off; False when it already was so (two tabs: one of them changes it)."""
    t = pauses_table
    with db._transaction("pause" if on else "end the pause", write=True) as conn:
        if not on:
            return bool(conn.execute(t.delete().where(t.c.owner == owner)).rowcount)
        if conn.execute(select(t.c.owner).where(t.c.owner == owner)).first() is not None:
            return False
        conn.execute(t.insert().values(owner=owner, since=datetime.now(UTC)))
    return True


def running_threads(db: ThreadDB, owners: list[str]) -> list[tuple[str, str]]:
    """``(owner key, thread)`` of the runs in flight (their claim's mark) of ``owners``: the pause stops them.

    ``owners``: a person's owner keys, one per chat (``"<person>|<chat>"``).
    """
    t = threads_table
    with db._transaction("read the runs in flight") as conn:
        rows = conn.execute(select(t.c.owner, t.c.thread_id, t.c.meta).where(t.c.owner.in_(owners))).all()
    return [(row.owner, row.thread_id) for row in rows if isinstance(row.meta, dict) and row.meta.get("inFlight")]
