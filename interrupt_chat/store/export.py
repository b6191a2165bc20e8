"""One thread as a file the person keeps: Markdown to read, JSON to process (``ThreadDB.export``).

Both hold the shown version of the thread (its messages in order, tool calls with their arguments and
results), what still waits for the person, and the thread's audit trail (answers masked as stored, S23).
The JSON's ``messages`` are AG-UI 1.0 messages (``ag_ui.core`` models, as the next run would send them);
attachments appear as the references the thread keeps, not their bytes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..agui.interrupts import interrupt_dict
from . import audit
from .schema import threads_table
from .types import DecisionRecord

if TYPE_CHECKING:
    from ..agui.session import AgentSession
    from .threads_db import ThreadDB

__all__ = ["EXPORT_FORMATS", "export", "thread_json", "thread_markdown"]

EXPORT_FORMATS = ("markdown", "json")
RESULT_CHARS = 4_000  # a tool result longer than this is shortened in the Markdown (the JSON keeps it whole)
ROLES = {"user": "You", "assistant": "Assistant", "system": "System", "developer": "Developer",
         "reasoning": "Reasoning"}


def _waiting(session: AgentSession) -> list[dict[str, Any]]:
    pending = session.tracker.pending
    rows: list[dict[str, Any]] = []
    if pending is not None and pending.kind == "legacy":
        rows.append({"kind": "legacy", "value": pending.event.get("value") if pending.event else None})
    elif pending is not None:
        answered = session.tracker.answers
        rows += [{"kind": "interrupt", **interrupt_dict(i)} for i in pending.interrupts if i.id not in answered]
    rows += [{"kind": "tool", "toolCallId": w.tool_call_id, "name": w.name, "args": w.args}
             for w in session.tool_waits]
    return rows


def thread_json(session: AgentSession, title: str, decisions: list[DecisionRecord],
                now: datetime | None = None) -> str:
    """The thread as JSON: ``{threadId, title, exportedAt, messages, waiting, decisions}``."""
    document = {
        "threadId": session.thread_id, "title": title,
        "exportedAt": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "messages": [m.model_dump(mode="json", by_alias=True, exclude_none=True)
                     for m in session.transcript.to_messages()],
        "state": session.transcript.state,
        "waiting": _waiting(session),
        "decisions": [entry.to_json() for entry in decisions],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _fenced(text: str, language: str = "") -> str:
    fence = "```"
    while fence in text:  # a fence longer than any run of backticks inside
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


def _tool_calls(session: AgentSession, call_ids: list[str]) -> list[str]:
    lines: list[str] = []
    for call_id in call_ids:
        call = session.transcript.tool_calls.get(call_id)
        if call is None:
            continue
        args = call.args
        shown = json.dumps(args, ensure_ascii=False, indent=2) if args is not None else call.args_text
        lines += [f"*Tool call* `{call.name}`", "", _fenced(shown, "json"), ""]
        if call.result is not None:
            result = call.result if len(call.result) <= RESULT_CHARS else call.result[:RESULT_CHARS] + " …"
            lines += ["*Result*", "", _fenced(result), ""]
    return lines


def thread_markdown(session: AgentSession, title: str, decisions: list[DecisionRecord],
                    now: datetime | None = None) -> str:
    """The thread as Markdown: a heading per message, tool calls fenced, then what waits and the decisions."""
    moment = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# {title or 'Untitled thread'}", "", f"Thread `{session.thread_id}`, exported {moment}.", ""]
    for message in session.transcript.messages:
        if message.role in ("tool", "activity"):
            continue  # results are shown under their calls
        lines += [f"## {ROLES.get(message.role, message.role)}", ""]
        if message.content:
            lines += [message.content, ""]
        lines += _tool_calls(session, message.tool_call_ids)
    waiting = _waiting(session)
    if waiting:
        lines += ["## Waiting for you", ""]
        for w in waiting:
            what, prompt = w.get("reason") or w.get("name") or w["kind"], w.get("message")
            lines.append(f"- {what}: {prompt}" if prompt else f"- {what}")
        lines.append("")
    if decisions:
        lines += ["## Decisions", ""]
        lines += [f"- {entry.at.strftime('%Y-%m-%d %H:%M:%S UTC')}: {entry.action} by {entry.by}"
                  f" ({entry.reason or 'request'})" for entry in decisions]
        lines.append("")
    return "\n".join(lines)


def export(db: ThreadDB, owner: str, thread_id: str,
           formats: tuple[str, ...] = EXPORT_FORMATS) -> dict[str, str] | None:
    """``owner``'s thread in each of ``formats``, from one read of it; None if there is no such thread.

    Raises:
        ValueError: a format is not one of :data:`EXPORT_FORMATS`.
        ThreadDBError: the database failed.
    """
    unknown = [fmt for fmt in formats if fmt not in EXPORT_FORMATS]
    if unknown:
        raise ValueError(f"export format {unknown[0]!r}: one of {', '.join(EXPORT_FORMATS)}")
    stored = db.read(owner, thread_id)
    if stored is None:
        return None
    t = threads_table
    with db._transaction("read a thread's title") as conn:
        title = conn.execute(select(t.c.title).where((t.c.owner == owner) & (t.c.thread_id == thread_id))).scalar()
    decisions = audit.decisions(db, owner, thread_id)
    write = {"markdown": thread_markdown, "json": thread_json}
    return {fmt: write[fmt](stored.session, title or "", decisions) for fmt in formats}
