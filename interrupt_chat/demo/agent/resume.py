"""Resume handling, as a strict AG-UI 1.0 producer.

A ``resume`` list is checked against the thread's open interrupts, in this order:
``UNKNOWN_INTERRUPT_ID`` (an entry names no open interrupt), ``DUPLICATE_INTERRUPT_ID``,
``PARTIAL_RESUME`` (an open interrupt is not covered), then for each ``resolved`` entry
``INTERRUPT_EXPIRED`` (its ``expiresAt`` has passed: it may only be ``cancelled``) and
``INVALID_PAYLOAD`` (the payload fails the ``responseSchema``). A rejection ends the run
with RUN_ERROR and keeps the interrupts open so the client can retry. Error messages name
schema constraints and interrupt ids, never payload values.

The legacy channel resumes with ``forwardedProps.command.resume`` (ag-ui-langgraph style).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from ag_ui.core import BaseEvent, Interrupt, ResumeEntry, RunAgentInput
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from . import payments
from .context import RunContext
from .store import OpenInterrupts, PendingInterrupt

__all__ = [
    "LegacyResume",
    "ResumeRejection",
    "check_resume",
    "handle_legacy_resume",
    "handle_resume",
    "is_expired",
    "legacy_resume_of",
    "payload_problem",
]


@dataclass(frozen=True)
class ResumeRejection:
    """Why a resume is refused: the RUN_ERROR ``code`` and a message naming ids and constraints."""

    code: str
    message: str


@dataclass(frozen=True)
class LegacyResume:
    """A legacy resume's ``forwardedProps.command.resume`` value (None when only ``interruptEvent`` came)."""

    value: Any


# -- validation ---------------------------------------------------------------------------


def payload_problem(schema: dict[str, Any] | None, payload: Any) -> str | None:
    """Why ``payload`` fails ``schema`` (naming the constraint, not the value), or None."""
    if schema is None:
        return None
    error = best_match(Draft202012Validator(schema).iter_errors(payload))
    if error is None:
        return None
    where = "".join(f"/{part}" for part in error.absolute_path) or "/"
    return f"at {where}: expected {error.validator} {json.dumps(error.validator_value)}"


def is_expired(interrupt: Interrupt, now: datetime) -> bool:
    """``expiresAt`` parsed as ISO 8601 (naive = UTC) is at or before ``now``; unparseable never expires."""
    if not interrupt.expires_at:
        return False
    try:
        deadline = datetime.fromisoformat(interrupt.expires_at)
    except ValueError:
        return False
    if deadline.tzinfo is None:
        deadline = deadline.replace(tzinfo=UTC)
    return deadline <= now


def check_resume(
    open_set: OpenInterrupts | None, entries: list[ResumeEntry], now: datetime
) -> ResumeRejection | None:
    """The first reason to reject ``entries`` for ``open_set``, or None if the resume is valid."""
    pending = open_set.by_id() if open_set is not None else {}
    ids = [entry.interrupt_id for entry in entries]
    unknown = [i for i in ids if i not in pending]
    if unknown:
        return ResumeRejection("UNKNOWN_INTERRUPT_ID", f"No open interrupt with id {', '.join(unknown)}")
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        return ResumeRejection("DUPLICATE_INTERRUPT_ID", f"Interrupt answered twice: {', '.join(duplicated)}")
    missing = [i for i in pending if i not in ids]
    if missing:
        return ResumeRejection("PARTIAL_RESUME", f"Resume does not cover interrupt {', '.join(missing)}")
    for entry in entries:
        if entry.status != "resolved":
            continue
        interrupt = pending[entry.interrupt_id].interrupt
        if is_expired(interrupt, now):
            return ResumeRejection("INTERRUPT_EXPIRED", f"Interrupt {interrupt.id} has expired; cancel it instead")
        problem = payload_problem(interrupt.response_schema, entry.payload)
        if problem is not None:
            return ResumeRejection("INVALID_PAYLOAD", f"Invalid payload for interrupt {interrupt.id}: {problem}")
    return None


def legacy_resume_of(body: RunAgentInput) -> LegacyResume | None:
    """``forwardedProps.command.resume`` (a JSON string is parsed, as ag-ui-langgraph does).

    A ``command`` carrying only ``interruptEvent`` (a legacy resolve without payload) resumes with None.
    """
    props = body.forwarded_props
    command = props.get("command") if isinstance(props, dict) else None
    if not isinstance(command, dict) or not ({"resume", "interruptEvent"} & command.keys()):
        return None
    value = command.get("resume")
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return LegacyResume(value)


def _note_parent_run(ctx: RunContext, open_set: OpenInterrupts | None) -> None:
    if open_set is not None and ctx.body.parent_run_id != open_set.run_id:
        ctx.store.note(
            ctx.body.thread_id,
            ctx.body.run_id,
            f"parentRunId {ctx.body.parent_run_id!r} is not the interrupted run {open_set.run_id!r}",
        )


# -- continuation -------------------------------------------------------------------------


def handle_resume(ctx: RunContext) -> Iterator[BaseEvent]:
    """Validate ``ctx.body.resume``; continue per the answers, or RUN_ERROR."""
    open_set = ctx.thread.open
    entries = list(ctx.body.resume or [])
    _note_parent_run(ctx, open_set)
    rejection = check_resume(open_set, entries, datetime.now(UTC))
    if rejection is not None:
        yield ctx.ev.run_error(rejection.message, rejection.code)
        return
    assert open_set is not None  # a valid resume covers at least one open interrupt
    ctx.thread.open = None
    answers = {entry.interrupt_id: entry for entry in entries}
    lines = []
    for item in open_set.pending:
        line, tool_content = _continue(item, answers[item.interrupt.id])
        if tool_content is not None:
            assert item.interrupt.tool_call_id is not None  # only tool approvals have tool content
            yield ctx.ev.tool_result(item.interrupt.tool_call_id, tool_content)
        lines.append(line)
    yield ctx.snapshot(open_set.scenario)
    yield from ctx.ev.text_message("\n\n".join(lines))
    yield ctx.ev.run_finished()


def handle_legacy_resume(ctx: RunContext, resume: LegacyResume) -> Iterator[BaseEvent]:
    """Answer an open legacy interrupt; RUN_ERROR ``NO_PENDING_INTERRUPT`` if there is none."""
    open_set = ctx.thread.open
    _note_parent_run(ctx, open_set)
    if open_set is None or not open_set.has_legacy:
        yield ctx.ev.run_error("No legacy interrupt is open on this thread", "NO_PENDING_INTERRUPT")
        return
    ctx.thread.open = None
    yield from ctx.ev.text_message(f"Legacy answer: {json.dumps(resume.value, sort_keys=True)}")
    yield ctx.ev.run_finished(legacy=True)


def _continue(item: PendingInterrupt, entry: ResumeEntry) -> tuple[str, str | None]:
    """(summary line, TOOL_CALL_RESULT content or None) for one answered interrupt."""
    if item.kind == "payment":
        return payments.continue_payment(item, entry)
    is_tool = item.kind == "approval"
    if entry.status == "cancelled":
        return "Cancelled.", "cancelled by user" if is_tool else None
    # resolved, so check_resume validated it against the responseSchema: an object
    payload = cast(dict[str, Any], entry.payload)
    if is_tool:
        if not payload["approved"]:  # the reason a person gave goes back to the model (§6.4)
            why = payload.get("reason")
            return ("Rejected.", "denied by user") if not isinstance(why, str) or not why else \
                (f"Rejected: {why}", f"denied by user: {why}")
        args = payload.get("editedArgs", item.tool_args or {})
        result = _tool_outcome(item.tool_name or "tool", args)
        return f"Approved: {result}.", result
    if item.kind == "choice":
        return f"You picked {payload['color']}.", None
    if item.kind == "credential":
        return f"Credential received ({len(payload['api_key'])} characters).", None
    return ("Confirmed." if payload["approved"] else "Rejected."), None


def _tool_outcome(tool_name: str, args: dict[str, Any]) -> str:
    if {"count", "path"} <= args.keys():
        return f"deleted {args['count']} files in {args['path']}"
    return f"ran {tool_name} with {json.dumps(args, sort_keys=True)}"
