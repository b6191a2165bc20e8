"""A set surfaced: each request's assignees, approvals needed and reminders are fixed and stored with it."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ...agui import interrupt_dict, parse_expiry
from ...agui.interrupts import holds_secret
from ...model.cards import tool_args
from ...model.people import People, Request
from ...model.policies import tool_name
from ...store import requests as store
from ...store.requests import RequestRow
from ...store.threads_db import ThreadDBError
from ...tab import persistence
from . import core, notices

if TYPE_CHECKING:
    from ag_ui.core import Interrupt

    from ...agui import AgentSession

__all__ = ["routed", "saved", "surfaced"]

log = logging.getLogger(__name__)


def _request(people: People, asker: str, session: AgentSession, interrupt: Interrupt) -> Request:
    fields = interrupt_dict(interrupt)
    try:
        args = json.loads(tool_args(fields, session.transcript) or "{}")
    except ValueError:
        args = {}
    expiry = parse_expiry(fields.get("expiresAt"))
    return Request(session.thread_id, interrupt.id, asker, str(interrupt.reason or ""),
                   tool_name(interrupt, session.transcript), args if isinstance(args, dict) else {"value": args},
                   str(interrupt.message or ""), expiry)


def _row(people: People, owner: str, chat: str, asker: str, run_id: str, request: Request) -> RequestRow | None:
    """The request's routing; None when it stays with the asker with nothing more (stored then: nothing)."""
    assignees = people.assignees(request)
    need = people.needed(request)
    escalation = people.escalation(request)
    if assignees in ([], [asker]) and need == 1 and escalation is None:
        return None
    now = datetime.now(UTC)
    row = RequestRow(owner, request.thread_id, request.interrupt_id, run_id, chat, asker, assignees, need,
                     tool=request.tool, reason=request.reason, surfaced_at=now, expires_at=request.expires_at)
    if escalation is not None and request.expires_at is not None and request.expires_at > now:
        span = request.expires_at - now
        row.remind_at = now + span * escalation.remind_at if escalation.remind_at is not None else None
        row.escalate_at = now + span * escalation.escalate_at if escalation.escalate_at is not None else None
        row.escalate_to = list(escalation.to)
    return row


def _about(session: AgentSession, interrupt: Interrupt, request: Request) -> dict[str, Any]:
    """What mail and Slack may say of a request: never a field of one that asks for a secret (S23)."""
    title = next((m.content[:60] for m in session.transcript.messages
                  if m.role == "user" and isinstance(m.content, str) and m.content), "")
    masked = holds_secret(interrupt.response_schema)
    return {"message": request.message[:2000], "args": {} if masked else dict(request.args), "masked": masked,
            "title": str(title)}


async def surfaced(owner: str, session: AgentSession) -> dict[str, RequestRow]:
    """After the lock, before any card is drawn: store the routing of the set's open requests.

    Returns the stored rows by interrupt id (a request that stays with its asker has none). Its
    assignees hear of it once the thread is saved with it (:func:`saved`): until then neither an inbox
    nor a decision link can read the set.
    """
    chat_cls = core.chat_of_key(owner)
    people = core.people_of(chat_cls)
    pending = session.tracker.pending
    db = persistence.database()
    if people is None or db is None or pending is None or pending.kind != "standard" or session.running:
        return {}
    asker = core.public(owner, chat_cls) if people.person(core.person_of(owner)) is not None else ""
    rows: list[RequestRow] = []
    for interrupt in pending.interrupts:
        if interrupt.id in session.tracker.answers:
            continue
        try:
            request = _request(people, asker, session, interrupt)
            row = _row(people, owner, owner.rpartition("|")[2], asker, pending.run_id or "", request)
            if row is not None:
                row.about = _about(session, interrupt, request)
        except Exception:  # the app's routing function failed: the request stays with its asker
            log.exception("people: the app's routing failed for a request; it stays with the person who asked")
            continue
        if row is not None:
            rows.append(row)
    if not rows:
        return {}
    try:
        stored = await persistence.db_call(store.open_requests, db, rows)
    except ThreadDBError:
        return {}
    return {row.interrupt_id: row for row in stored}


async def saved(owner: str, session: AgentSession) -> None:
    """The thread is saved with its new set: every page that shows one of its open requests follows it.

    A request not changed since it surfaced (revision 1) is announced then (``assigned``: the webhook,
    mail, Slack), so its links lead to a saved request; the outbox sends each item once by its id.
    """
    people = core.people_of(core.chat_of_key(owner))
    pending = session.tracker.pending
    db = persistence.database()
    if people is None or db is None or pending is None or pending.kind != "standard":
        return
    try:
        rows = await persistence.db_read(store.of_thread, db, owner, session.thread_id, pending.run_id or "")
    except ThreadDBError:
        return
    for row in rows.values():
        if row.state == "open":
            if row.revision == 1:
                await notices.assigned(people, row, session)
            await core.tell(people, row)


def routed(rows: dict[str, RequestRow]) -> set[str]:
    """The requests a rule of the asker must not answer: assigned to others, or needing more approvals."""
    return {i for i, row in rows.items() if row.assignees not in ([], [row.asker]) or row.need > 1}

