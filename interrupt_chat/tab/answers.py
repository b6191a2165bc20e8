"""A person's answer, from the event handler to the resume run (S6–S15, S22, S23).

``InterruptState.resolve`` / ``cancel`` / the default slot's forms call in here. An answer is
checked before the tracker records it: JSON data, bounded in size and depth (anything else gets a
card error, never a resume). Whether it fits the ``responseSchema`` is the agent's to judge (S15).
Then the tracker decides (:class:`~interrupt_chat.agui.Decision`) and, when every open
interrupt has its answer, :mod:`.driver` runs the resume.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ag_ui.core import BaseEvent

from ..agui import AgentSession, Pending
from ..model.cards import shown_hash, steps_answer
from ..model.forms import FormError, check_answer, edited_approval, payload_from_form
from ..model.requests import about
from ..store.threads_db import ThreadDBError
from ..workers import lane
from ..workers.proxy_reads import tab_token
from . import claims, driver, hooks, persistence, routing, saving, trail
from .audits import Audit, expired_audits, waited_ms

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, SlotLike, StateLike

__all__ = ["ANSWERED_ELSEWHERE", "CALL_CHANGED", "EXPIRED_MESSAGE", "Outcome", "answer", "approve_edited",
           "audit_entry", "card_error", "conclude", "decide", "problem_with", "record", "submit_form"]

log = logging.getLogger(__name__)

EXPIRED_MESSAGE = "This request has expired; it can only be cancelled."
ANSWERED_ELSEWHERE = "This thread moved on in another window: here is where it stands now."
DELETED_ELSEWHERE = "That thread was deleted in another window."
CALL_CHANGED = "The agent changed this request since you saw it: look at it again before you answer."
HEADERS_FAILED = "The answer could not be sent (the request to the assistant could not be prepared). Try again."
CLAIM_ATTEMPTS = claims.CLAIM_ATTEMPTS


async def answer(config: SlotLike, verb: str, payload: Any, interrupt_id: str | None,
                 run_id: str = "", *, shown: str = "") -> None:
    """Resolve / cancel through the tracker; start the resume run if the decision says so.

    ``run_id``: the run that raised the set the person saw (the default slot's cards say it); an
    answer to a set that is no longer the thread's is refused, never applied to a newer one.
    ``shown``: the hash of the call the person saw (the card's ``call_hash``); an answer to a call
    that changed since is refused (§6.4).
    """
    chat_cls = config._chat()
    with lane.first(tab_token(config)) as hold:  # other chats' streams wait till the agent has the resume (0037)
        async with config:
            chat = await driver.ready(config, chat_cls)  # a click on a card a backend restart left on screen
            if not config.active or chat.signed_out:  # S16: a configuration that did not take the set does nothing
                return
            thread_id = chat.thread_id
            outcome, moved = await record(chat, thread_id, _expects(chat._sessions.get(thread_id), run_id), verb,
                                          payload, interrupt_id,
                                          lambda card_id, message: _set_card_error(config, card_id, message),
                                          shown=shown)
            payload = None  # S23: the tracker holds it now, in memory only (the audit masks it when it writes)
            session = chat._session()
            if outcome is None:
                if moved:  # answered or run on in another tab: show where it stands instead
                    await driver.publish(chat, session, full=True)
                    await routing.route(config, chat_cls, session)
                return
            resume = None
            if outcome.events is not None:  # claimed: the request leaves before the page is redrawn (0032)
                resume = asyncio.ensure_future(conclude(config, chat_cls, session, outcome))
                await asyncio.sleep(0)  # its first step writes the POST; its pushes wait for this lock
            await driver.publish(chat, session, full=True, starting=outcome.events is not None)
            await routing.route(config, chat_cls, session, keep_result=True)
            config.submitting = outcome.events is not None
        if resume is None:
            hold.close()  # nothing goes to the agent: the card is drawn, the audit entries can wait their turn
        await (resume if resume is not None else conclude(config, chat_cls, session, outcome))


def _still_shown(session: AgentSession, interrupt_id: str | None, shown: str) -> bool:
    """Whether the interrupt answered is still the call the person saw (its ``call_hash``)."""
    pending = session.tracker.pending
    if pending is None or pending.kind != "standard":
        return True
    found = pending.target(interrupt_id)
    return found is None or shown_hash(found, session.transcript) == shown


def _expects(copy: AgentSession | None, run_id: str) -> Callable[[Pending | None], bool]:
    """Which pending set an answer is for: the card's run when it names one, else the set this copy shows."""
    if run_id:
        return lambda pending: pending is not None and pending.run_id == run_id
    shown = persistence.set_identity(copy.tracker.pending) if copy is not None else None
    return lambda pending: shown is None or persistence.set_identity(pending) == shown


@dataclass
class Outcome:
    """What a recorded answer leads to: the resume run to drive, or nothing more; the audit entries."""

    events: AsyncGenerator[BaseEvent, None] | None
    audits: list[Audit]
    owner: str


async def record(chat: ChatLike, thread_id: str, expects: Callable[[Pending | None], bool], verb: str,
                 payload: Any, interrupt_id: str | None, card_error: Callable[[str, str], None], *,
                 shown: str = "") -> tuple[Outcome | None, bool]:
    """Inside the lock: bring the thread up to date, record the answer, and claim it in the database.

    Shared by the chat's slot and the approvals inbox. The answer is written conditionally on the
    revision the copy was read at (a partial answer too, so every tab sees it); a resume is
    claimed with the run marked in flight before its request leaves. Of two tabs, workers or
    restarted backends that answer the same set, exactly one resumes (S10 across processes).
    Returns the outcome (None: nothing follows) and whether the copy was replaced meanwhile.
    """
    moved = False
    if chat.signed_out or not chat._owner_key:  # nobody answers anything (I3)
        return None, False

    async def attempt(trust: bool = True) -> claims.Attempt[Outcome] | None:
        nonlocal moved
        fresh = await persistence.refresh(chat, thread_id, trust=trust)  # the claim below is the check (0032)
        session = chat._sessions.get(thread_id)
        moved = moved or fresh.replaced
        if session is None or fresh.deleted:
            chat.notice, moved = DELETED_ELSEWHERE, True
            return None
        pending = session.tracker.pending
        refused = ANSWERED_ELSEWHERE if fresh.busy or session.running or not expects(pending) else (
            CALL_CHANGED if shown and verb == "resolve" and not _still_shown(session, interrupt_id, shown) else "")
        if (refused or pending is None) and fresh.trusted:  # nothing to answer, or a refusal: on a checked copy
            return await attempt(trust=False)
        if refused:  # CALL_CHANGED: the new call is drawn; the person looks again
            chat.notice, moved = refused, True
            return None
        gate = await hooks.beyond.gate(chat, session, verb, payload, interrupt_id)  # people: who may, and counts
        if gate.refusal:
            card_error(interrupt_id or "", gate.refusal)
            return None
        if gate.handled:  # an approval counted towards the ones needed: nothing resumes yet
            return None
        outcome = await decide(chat, session, verb, payload, interrupt_id, card_error)
        if outcome is None:
            return None
        for audit in outcome.audits if gate.detail else ():
            audit.detail = {**(audit.detail or {}), **gate.detail}
        for audit in outcome.audits if fresh.pending_since else ():  # written after the resume leaves: read now
            audit.waited_ms = waited_ms(fresh.pending_since)
        halting = session.halting
        if gate.halt:
            session.halt(gate.halt)  # the denial limit: the run this answer resumes stops as it starts

        async def lost() -> None:  # another tab wrote first: the answer goes again, on top of theirs
            nonlocal moved
            if outcome.events is not None:
                await outcome.events.aclose()  # never started
            outcome.audits.clear()
            session.halt(halting)
            moved = True

        return claims.Attempt(session, outcome, in_flight=outcome.events is not None, undo=lost)

    claimed = await claims.claim(chat, attempt)
    return (claimed.value if claimed is not None else None), moved


async def decide(chat: ChatLike, session: AgentSession, verb: str, payload: Any, interrupt_id: str | None,
                 card_error: Callable[[str, str], None]) -> Outcome | None:
    """Inside the lock: check the answer, record it with the tracker, start the resume when all are answered.

    Returns None when nothing follows: a card error, an expired or an ignored answer (S9-S11), or
    headers (``chat(headers=fn)``) that failed: the set is un-sealed then, its answers kept (S15).
    """
    tracker = session.tracker
    if verb == "resolve" and tracker.pending is not None and not tracker.sealed:
        problem = problem_with(tracker.pending, payload, interrupt_id)
        if problem is not None:
            card_error(*problem)
            return None
    audit = audit_entry(session, verb, payload, interrupt_id)
    decision = tracker.resolve(payload, interrupt_id) if verb == "resolve" else tracker.cancel(interrupt_id)
    if decision.kind == "expired":
        card_error(decision.interrupt_id or "", EXPIRED_MESSAGE)
        return None
    if decision.kind == "ignored":
        return None
    audits = [audit, *expired_audits(session, decision.resume or [])] if audit else []
    if decision.sends:
        try:
            headers = await chat.agent_headers()
        except Exception:  # the app's function: the set opens again, nothing is sent
            log.exception("chat(headers=...) raised; the answers are kept and nothing was sent")
            tracker.submission_failed(HEADERS_FAILED)
            card_error(decision.interrupt_id or "", HEADERS_FAILED)
            chat.notice = HEADERS_FAILED
            return Outcome(None, audits[:0], chat._owner_key)  # the answers so far are saved, not sent
        if session.client is not None:
            session.client.headers = headers
    return Outcome(session.submit(decision) if decision.sends else None, audits, chat._owner_key)


async def conclude(state: StateLike, chat_cls: type[ChatLike], session: AgentSession, outcome: Outcome) -> None:
    """After the lock: drive the resume; the audit entries, notices and trail follow its request.

    The answer and the run's claim were written in the lock (the database decides which tab resumes),
    so nothing else need come before the request leaves: the audit entries (their wait was read at
    the claim), the other tabs' notice, the notifications and this tab's trail are written once the
    agent answered it (docs/decisions/0028). Without a resume they are written at once.
    """
    if outcome.events is None:
        await _written(state, chat_cls, outcome)
        return
    after: list[asyncio.Future[None]] = []
    try:
        await driver.drive(state, chat_cls, session, outcome.events, outcome.owner,
                           started=lambda: after.append(asyncio.ensure_future(_written(state, chat_cls, outcome))))
    finally:
        await (after[0] if after else _written(state, chat_cls, outcome))  # (a run that never started: now)


async def _written(state: StateLike, chat_cls: type[ChatLike], outcome: Outcome) -> None:
    """Write the audit entries (the thread was written in the lock), tell the other tabs, show the trail.

    The trail is read before the tab's lock: the follow-up's pushes, which need that lock, do not
    wait for the read.
    """
    notice = (await saving.write(outcome.owner, None, outcome.audits, origin=tab_token(state))).notice
    thread_id = outcome.audits[0].thread_id if outcome.audits else ""
    records, failed = None, None
    if thread_id and not notice:
        try:
            records = await trail.records_of(outcome.owner, thread_id)
        except ThreadDBError as exc:
            failed = exc
    if notice or failed or records is not None:
        async with state:
            chat = await routing.chat_of(state, chat_cls)
            chat.notice = notice or chat.notice
            if failed is not None:
                persistence.unavailable(chat, failed)
            elif records is not None and (chat.thread_id, chat._owner_key) == (thread_id, outcome.owner):
                chat.decisions = trail.rows_of(chat, records)
    outcome.audits.clear()  # they may hold an answer's payload: gone now that it is written (masked)


def audit_entry(session: AgentSession, verb: str, payload: Any, interrupt_id: str | None) -> Audit | None:
    """The audit entry for this answer (before the tracker records it: a legacy answer clears the set)."""
    pending = session.tracker.pending
    if pending is None:
        return None
    if pending.kind == "legacy":
        target, reason = "", "on_interrupt"
    else:
        target = interrupt_id if interrupt_id is not None else (pending.ids[0] if pending.ids else "")
        found = next((i for i in pending.interrupts if i.id == target), None)
        if found is None:
            return None
        reason = found.reason or ""
    if verb == "cancel":
        action = "dismissed" if pending.kind == "legacy" else "cancelled"
    else:
        action = "rejected" if isinstance(payload, dict) and payload.get("approved") is False else "resolved"
    return Audit(session.thread_id, pending.run_id, target, reason, action,
                 payload if verb == "resolve" else None, pending.schema_for(target or None),
                 about=about(session, target))


def problem_with(pending: Pending, payload: Any, interrupt_id: str | None) -> tuple[str, str] | None:
    """``(card id, message)`` when the answer cannot be sent as it is; None when it can.

    An id that names no open interrupt is left to the tracker, which ignores it (S9).
    """
    if pending.kind == "legacy":
        card_id = ""
    elif interrupt_id is None:
        card_id = pending.ids[0] if pending.ids else ""
    elif interrupt_id in pending.ids:
        card_id = interrupt_id
    else:
        return None
    try:
        check_answer(payload)
    except FormError as exc:
        return card_id, str(exc)
    return None


async def submit_form(config: SlotLike, form_data: dict[str, Any]) -> None:
    """The default slot's schema form: build the payload, then answer (S22; secrets never kept, S23)."""
    form = dict(form_data)
    interrupt_id = str(form.pop("__interrupt_id", "") or "")
    run_id = str(form.pop("__run_id", "") or "")
    form.pop("__thread_id", None)
    if form.pop("__steps", None):  # a legacy value's steps checklist: the dojo's sentence (issue 26 §5)
        await answer(config, "resolve", steps_answer(form), interrupt_id or None, run_id)
        return
    try:
        payload = payload_from_form(await _schema(config, interrupt_id), form)
    except FormError as exc:
        await _card_error(config, interrupt_id, str(exc))
        return
    finally:
        form.clear()  # drop our reference to typed secrets at once (S23)
    await answer(config, "resolve", payload, interrupt_id or None, run_id)


async def approve_edited(config: SlotLike, form_data: dict[str, Any]) -> None:
    """The default slot's "edit and approve": the edited arguments as JSON (S22)."""
    interrupt_id = str(form_data.get("__interrupt_id", "") or "")
    try:
        payload = edited_approval(await _schema(config, interrupt_id), form_data.get("edited_args", ""))
    except FormError as exc:
        await _card_error(config, interrupt_id, str(exc))
        return
    await answer(config, "resolve", payload, interrupt_id or None, str(form_data.get("__run_id", "") or ""))


async def _schema(config: SlotLike, interrupt_id: str) -> Any:
    """The responseSchema an answer to ``interrupt_id`` must satisfy (a fresh state restores the thread first)."""
    async with config:
        chat = await driver.ready(config, config._chat())
        session = await persistence.load_thread(chat, chat.thread_id)
        pending = session.tracker.pending if session is not None else None
    return pending.schema_for(interrupt_id) if pending is not None else None


async def _card_error(config: SlotLike, interrupt_id: str, message: str) -> None:
    async with config:
        _set_card_error(config, interrupt_id, message)


def card_error(config: SlotLike, interrupt_id: str, message: str) -> None:
    """Inside the lock: show ``message`` in the card of ``interrupt_id``."""
    _set_card_error(config, interrupt_id, message)


def _set_card_error(config: SlotLike, interrupt_id: str, message: str) -> None:
    config.cards = [dataclasses.replace(c, error=message) if c.id == interrupt_id else c for c in config.cards]
