"""A thread's audit trail as the chat shows it: who decided what, and when (the ``audit-entry`` rows)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..agui.sanitize import short_text
from ..store.threads_db import ThreadDBError
from .persistence import database, db_read, unavailable

if TYPE_CHECKING:
    from ..model.protocols import ChatLike
    from ..store.types import DecisionRecord

__all__ = ["decision_rows", "policy_detail", "records_of", "rows_of", "show_trail"]


async def show_trail(chat: ChatLike) -> None:
    """Inside the lock: the shown thread's audit trail and the ratings of its answers."""
    from .feedback import show

    chat.decisions = await decision_rows(chat)
    await show(chat)


async def decision_rows(chat: ChatLike) -> list[dict[str, str]]:
    """The shown thread's audit trail as rows (inside the lock): who decided what, and when."""
    if not chat._owner_key or not chat.thread_id:
        return []
    try:
        records = await records_of(chat._owner_key, chat.thread_id)
    except ThreadDBError as exc:
        unavailable(chat, exc)
        return []
    return rows_of(chat, records)


async def records_of(owner: str, thread_id: str) -> list[DecisionRecord]:
    """A thread's audit entries as stored (no lock needed; none without a database). Raises ThreadDBError."""
    db = database()
    if db is None or not owner or not thread_id:
        return []
    return await db_read(db.decisions, owner, thread_id)


def rows_of(chat: ChatLike, records: list[DecisionRecord]) -> list[dict[str, str]]:
    """The shown thread's audit entries (:func:`records_of`) as its trail's rows (inside the lock)."""
    session = chat._sessions.get(chat.thread_id)
    hidden = session.branches.hidden_runs() if session is not None else set()  # another version's entries
    return [{"interrupt_id": r.interrupt_id, "action": r.action, "reason": r.reason or "", "by": r.by,
             "at": r.at.strftime("%Y-%m-%d %H:%M:%S"),
             "payload": short_text(json.dumps(r.payload, ensure_ascii=False), 160) if r.payload is not None else "",
             "actor": short_text(r.actor, 128), "on_behalf_of": short_text(r.on_behalf_of, 128),
             **policy_detail(r.detail)}
            for r in records if not (hidden and r.run_id in hidden)]


def policy_detail(detail: Any) -> dict[str, str]:
    """A policy answer's tool, rule and tool call, for the transcript's ``policy-note``; a shadow rule's verdict.

    Each "" for the other entries.
    """
    detail = detail if isinstance(detail, dict) else {}
    return {key: short_text(str(detail.get(name) or ""), 120)
            for key, name in (("tool", "tool"), ("rule", "rule"), ("call_id", "toolCallId"), ("shadow", "shadow"))}

