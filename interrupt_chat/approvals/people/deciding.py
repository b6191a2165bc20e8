"""A decision on a request between people: who may, the two-person rule, and exactly one resume.

Every path an answer takes (the asker's chat, an inbox, a bulk action, a decision link) reaches
:func:`gate`, called by :func:`interrupt_chat.tab.answers.record` before it claims the thread. For a
request stored with assignees (:mod:`.assign`) the gate refuses whoever may not decide it, and
counts an approval that is not yet the last one needed (``approved-partly``, a conditional write on
the request's row: of two at once, one is counted first and the other after it). The approval that
completes the count, a rejection or a withdrawal goes on as any answer does: claimed on the thread,
so exactly one resumes whatever the order of clicks, tabs and workers.

An assignee answers another person's thread with :func:`as_assignee`: through the server-side path
(:mod:`..headless`), under :data:`.core.ACTING`, which names them (and the delegator they act for).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...store import requests as store
from ...store.threads_db import ThreadDBError
from ...tab import audits, persistence
from ...tab.hooks import Gate
from .. import headless
from . import core

if TYPE_CHECKING:
    from ...agui import AgentSession
    from ...model.people import People
    from ...model.protocols import ChatLike
    from ...store.requests import RequestRow

__all__ = ["Gate", "as_assignee", "count", "gate", "partial_audit"]

log = logging.getLogger(__name__)

ALREADY = "This request was already decided."
NOT_YOURS = "This request waits for {names}: you may not decide it."
COUNTED = "Your approval is counted; it waits for {left} more."
ATTEMPTS = 5


def rejects(verb: str, payload: Any) -> bool:
    """A rejection or a withdrawal (never counted: one rejection rejects)."""
    return verb != "resolve" or (isinstance(payload, dict) and payload.get("approved") is False)


async def count(people: People, row: RequestRow, actor: str, on_behalf_of: str) -> str:
    """One approval of ``row`` by ``actor``: ``final`` (it completes the count), ``counted``, ``again`` or ``gone``."""
    db = persistence.database()
    if db is None:
        return "final"
    for _ in range(ATTEMPTS):
        if row.state != "open":
            return "gone"
        if actor in row.approvers:
            return "again"  # a second click of the same person changes nothing
        if len(row.approvers) + 1 >= row.need:
            return "final"
        written = await persistence.db_call(store.add_approval, db, row, actor, on_behalf_of)
        if written is not None:
            await partial_audit(written, actor, on_behalf_of)
            await core.tell(people, written)
            return "counted"
        fresh = await persistence.db_read(store.get, db, *row.key)
        if fresh is None:
            return "final"
        row = fresh
    return "again"


async def partial_audit(row: RequestRow, actor: str, on_behalf_of: str, action: str = "approved-partly",
                        by: str = "person") -> None:
    """An audit entry of the people's own (``approved-partly``, ``reassigned``, ``escalated``) in the asker's trail."""
    db = persistence.database()
    if db is None:
        return
    detail = {"actor": actor, "onBehalfOf": on_behalf_of, "assignees": list(row.assignees),
              "have": len(row.approvals), "need": row.need}
    try:
        await persistence.db_call(db.record_decision, row.owner, row.thread_id, row.run_id, row.interrupt_id,
                                  row.reason, action, None, None, by, detail, tool=row.tool, decider=actor)
    except ThreadDBError:
        log.warning("people: an audit entry (%s) could not be written", action)


async def gate(chat: ChatLike, session: AgentSession, verb: str, payload: Any, interrupt_id: str | None) -> Gate:
    """Inside the lock, before an answer is claimed: may this person give it, and is it the one that resumes?"""
    people = core.people_of(chat.__class__)
    pending = session.tracker.pending
    db = persistence.database()
    if people is None or db is None or pending is None or pending.kind != "standard":
        return Gate()
    try:
        rows = await persistence.db_read(store.of_thread, db, chat._owner_key, session.thread_id, pending.run_id or "")
    except ThreadDBError:
        return Gate()
    ids = [interrupt_id] if interrupt_id else [i.id for i in pending.interrupts if i.id not in session.tracker.answers]
    acting = core.ACTING.get()
    own = core.public(chat._owner_key, chat.__class__)
    actor = acting.actor if acting is not None else own
    detail = {"actor": actor, "onBehalfOf": acting.on_behalf_of if acting is not None else ""}
    for row in (rows[i] for i in ids if i in rows and rows[i].state == "open"):
        detail["assignees"] = list(row.assignees)  # type: ignore[assignment]
        if acting is not None:
            continue  # checked and counted by as_assignee
        if verb == "cancel":
            continue  # the asker withdraws it (audited as a cancel)
        if not row.assignees and not row.asker:
            continue  # an anonymous asker's own (escalation only)
        person = core.person_of(chat._owner_key)
        if not (row.assignees == [row.asker] or (await core.decider(people, person, row)) is not None):
            return Gate(NOT_YOURS.format(names=core.names(people, row.assignees)))
        if not rejects(verb, payload):
            said = await count(people, row, own, "")
            if said in ("counted", "again"):
                return Gate(handled=True)
            if said == "gone":
                return Gate(ALREADY)
    return Gate(detail=detail)


async def as_assignee(viewer: str, chat_cls: type[ChatLike], asker_key: str, thread_id: str, interrupt_id: str,
                      run_id: str, verb: str, payload: Any, by: str = "person", *, shown: str = "") -> str:
    """An assignee (or their delegate), ``viewer`` (their owner key), answers another person's request.

    Returns "" when done, else why not.

    An approval that is not the last one needed is counted and nothing resumes; the last one, a
    rejection or a cancel is answered on the server (the asker's tabs and every inbox follow live).
    """
    people = core.people_of(chat_cls)
    db = persistence.database()
    person = core.person_of(viewer)
    if people is None or db is None or people.person(person) is None or core.chat_of_key(asker_key) is not chat_cls:
        return NOT_YOURS.format(names="someone else")
    try:
        row = await persistence.db_read(store.get, db, asker_key, thread_id, interrupt_id)
    except ThreadDBError:
        return "The request could not be read; try again."
    if row is None or row.state != "open" or (run_id and row.run_id != run_id):
        return ALREADY
    behalf = await core.decider(people, person, row)
    if behalf is None:
        return NOT_YOURS.format(names=core.names(people, row.assignees))
    actor = core.public(viewer, chat_cls)
    if not rejects(verb, payload):
        said = await count(people, row, actor, behalf)
        if said == "gone":
            return ALREADY
        if said != "final":
            return ""
    token, named = core.ACTING.set(core.Acting(actor, behalf)), audits.ACTOR.set(actor)
    try:
        answered = await headless.answer(chat_cls, asker_key, thread_id, verb, payload, interrupt_id, row.run_id, by,
                                         shown=shown)
    finally:
        audits.ACTOR.reset(named)
        core.ACTING.reset(token)
    return "" if answered.recorded else (answered.message or ALREADY)
