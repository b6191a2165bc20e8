"""A person's answer, from the event handler to the resume run (S6–S15, S22, S23).

``InterruptState.resolve`` / ``cancel`` / the default slot's forms call in here. An answer is
checked before the tracker records it: JSON data, bounded in size and depth (anything else gets a
card error, never a resume). Whether it fits the ``responseSchema`` is the agent's to judge (S15).
Then the tracker decides (:class:`~interrupt_chat.agui.Decision`) and, when every open
interrupt has its answer, :mod:`.driver` runs the resume.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import reflex as rx
from ag_ui.core import BaseEvent

from . import driver, persistence, routing
from .agui import AgentSession, Pending
from .forms import FormError, check_answer, edited_approval, payload_from_form

if TYPE_CHECKING:
    from .state import ChatState, InterruptState

__all__ = ["EXPIRED_MESSAGE", "Outcome", "answer", "approve_edited", "audit_entry", "conclude", "decide",
           "problem_with", "submit_form"]

EXPIRED_MESSAGE = "This request has expired; it can only be cancelled."
ANSWERED_ELSEWHERE = "This thread moved on in another window: here is where it stands now."


async def answer(config: InterruptState, verb: str, payload: Any, interrupt_id: str | None) -> None:
    """Resolve / cancel through the tracker; start the resume run if the decision says so."""
    chat_cls = config._chat()
    async with config:
        chat = await driver.ready(config, chat_cls)  # a click on a card a backend restart left on screen
        if not config.active:  # S16: a configuration that did not take the set does nothing
            return
        if persistence.refresh(chat, chat.thread_id):  # answered or run on in another tab: show that instead
            chat.notice = ANSWERED_ELSEWHERE
            await driver.publish(chat, chat._session(), full=True)
            await routing.route(config, chat_cls, chat._session())
            return
        session = chat._session()
        outcome = await decide(chat, session, verb, payload, interrupt_id,
                               lambda card_id, message: _set_card_error(config, card_id, message))
        payload = None  # S23: the tracker holds it now, in memory only (the audit masks it when it writes)
        if outcome is None:
            return
        await driver.publish(chat, session, full=True, starting=outcome.events is not None)
        await routing.route(config, chat_cls, session, keep_result=True)
        config.submitting = outcome.events is not None
    await conclude(config, chat_cls, session, outcome)


@dataclass
class Outcome:
    """What a recorded answer leads to: the resume run to drive, or the thread to save; the audit entries."""

    events: AsyncGenerator[BaseEvent, None] | None
    audits: list[persistence.Audit]
    owner: str


async def decide(chat: ChatState, session: AgentSession, verb: str, payload: Any, interrupt_id: str | None,
                 card_error: Callable[[str, str], None]) -> Outcome | None:
    """Inside the lock: check the answer, record it with the tracker, start the resume when all are answered.

    Shared by the chat's slot and the approvals inbox (one tracker per thread, so exactly once across
    both). Returns None when nothing follows: a card error, an expired or an ignored answer (S9-S11).
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
    audits = [audit, *persistence.expired_audits(session, decision.resume or [])] if audit else []
    if decision.sends and session.client is not None:
        session.client.headers = await chat.agent_headers()
    return Outcome(session.submit(decision) if decision.sends else None, audits, chat._owner_key)


async def conclude(state: rx.State, chat_cls: type[ChatState], session: AgentSession, outcome: Outcome) -> None:
    """After the lock: save the thread (or leave it to the resume run) and the audit, then drive the resume."""
    notice = persistence.write(outcome.owner, None if outcome.events is not None else session, outcome.audits)
    if notice or outcome.audits:
        async with state:
            chat = await routing.chat_of(state, chat_cls)
            chat.notice = notice or chat.notice
            chat.decisions = persistence.decision_rows(chat)
    outcome.audits.clear()  # they may hold an answer's payload: gone now that it is written (masked)
    if outcome.events is not None:
        await driver.drive(state, chat_cls, session, outcome.events)


def audit_entry(session: AgentSession, verb: str, payload: Any, interrupt_id: str | None) -> persistence.Audit | None:
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
    return persistence.Audit(session.thread_id, pending.run_id, target, reason, action,
                             payload if verb == "resolve" else None, pending.schema_for(target or None))


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


async def submit_form(config: InterruptState, form_data: dict[str, Any]) -> None:
    """The default slot's schema form: build the payload, then answer (S22; secrets never kept, S23)."""
    form = dict(form_data)
    interrupt_id = str(form.pop("__interrupt_id", "") or "")
    form.pop("__thread_id", None)
    try:
        payload = payload_from_form(await _schema(config, interrupt_id), form)
    except FormError as exc:
        await _card_error(config, interrupt_id, str(exc))
        return
    finally:
        form.clear()  # drop our reference to typed secrets at once (S23)
    await answer(config, "resolve", payload, interrupt_id or None)


async def approve_edited(config: InterruptState, form_data: dict[str, Any]) -> None:
    """The default slot's "edit and approve": the edited arguments as JSON (S22)."""
    interrupt_id = str(form_data.get("__interrupt_id", "") or "")
    try:
        payload = edited_approval(await _schema(config, interrupt_id), form_data.get("edited_args", ""))
    except FormError as exc:
        await _card_error(config, interrupt_id, str(exc))
        return
    await answer(config, "resolve", payload, interrupt_id or None)


async def _schema(config: InterruptState, interrupt_id: str) -> Any:
    """The responseSchema an answer to ``interrupt_id`` must satisfy."""
    async with config:
        pending = (await config.get_state(config._chat()))._session().tracker.pending
    return pending.schema_for(interrupt_id) if pending is not None else None


async def _card_error(config: InterruptState, interrupt_id: str, message: str) -> None:
    async with config:
        _set_card_error(config, interrupt_id, message)


def _set_card_error(config: InterruptState, interrupt_id: str, message: str) -> None:
    config.cards = [dataclasses.replace(c, error=message) if c.id == interrupt_id else c for c in config.cards]
