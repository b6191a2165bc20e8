"""The denial limit (§6.4): an agent that keeps asking after three "no"s in a row is stopped.

A person's rejections of tool approvals in one thread are counted from its audit trail (the
Reject button, a reject option, the inbox's or a link's reject; a rule's deny, bulk, cancel and
expiry do not count; an approval ends the streak; a new message does not). The rejection that
reaches the limit is still sent: the run it resumes is stopped as it starts
(:meth:`interrupt_chat.agui.AgentSession.halt`), and the transcript says why (``denial-limit``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..model import policies
from ..store import audit as store_audit
from ..store.threads_db import ThreadDBError
from ..tab import pausing, persistence

if TYPE_CHECKING:
    from ..agui import AgentSession
    from ..model.protocols import ChatLike

__all__ = ["DEFAULT_LIMIT", "halt_for", "limit_of", "note"]

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 3


def note(count: int) -> str:
    """What the transcript says of a run the denial limit stopped."""
    return (f"Stopped: you rejected {count} requests in a row in this thread, so the agent was stopped before it "
            f"asked again. Tell it what to do instead in a new message.")


def limit_of(chat_cls: Any) -> int:
    """``ic.Chat(denial_limit=...)``: rejections in a row that stop the run (0: no limit), default 3."""
    limit = getattr(chat_cls, "denial_limit", None)
    return DEFAULT_LIMIT if limit is None else int(limit)


def _tool_approval(session: AgentSession, interrupt_id: str | None) -> bool:
    pending = session.tracker.pending
    if pending is None or pending.kind != "standard":
        return False
    found = pending.target(interrupt_id)
    return found is not None and policies.is_tool_approval(found, policies.tool_name(found, session.transcript))


async def halt_for(chat: ChatLike, session: AgentSession, verb: str, payload: Any, interrupt_id: str | None) -> str:
    """Inside the lock, before an answer is claimed: the halt reason when this rejection reaches the limit, else ""."""
    limit = limit_of(chat.__class__)
    rejecting = verb == "resolve" and isinstance(payload, dict) and payload.get("approved") is False
    if limit <= 0 or not rejecting or pausing.DECIDED_BY.get() not in ("person", "link"):
        return ""
    db = persistence.database()
    if db is None or not chat._owner_key or not _tool_approval(session, interrupt_id):
        return ""
    try:
        before = await persistence.db_read(store_audit.rejection_streak, db, chat._owner_key, session.thread_id)
    except ThreadDBError:
        return ""
    return note(before + 1) if before + 1 >= limit else ""
