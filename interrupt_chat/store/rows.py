"""How a session record becomes ``threads`` and ``messages`` rows, and how stored rows read back.

Pure functions (no connection): titles, searchable text, the pending counts and identity that
decide ``pending_since``, the inbox's items, and short error texts.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ..agui.interrupts import parse_expiry
from ..agui.records import RECORD_VERSION, message_digest, view_message
from ..agui.transcript import MessageView, Transcript
from .types import PendingItem, ThreadDBError

TITLE_CHARS = 60
CUSTOM_TITLE_CHARS = 200
_TEXT_ROLES = frozenset({"user", "assistant"})
#: The record keys kept in ``threads.meta`` (the others have columns or message rows).
_META_KEYS = ("toolCalls", "sealed", "trackerError", "status", "statusError", "toolWaits", "inFlight", "branches",
              "runs", "prediction")


_COLUMN_KEYS = frozenset({"version", "threadId", "messages", "state", "pending", "answers", "lastRunId", "error"})


def _message_row(transcript: Transcript, view: MessageView, digest: str) -> dict[str, Any]:
    body = view_message(transcript, view)
    if body is None:  # pragma: no cover - a message cannot turn UI-only; only a concurrent rewrite could do it
        raise ThreadDBError(f"thread database: message {view.id:.80} changed while the thread was being saved")
    if message_digest(body) != digest:  # changed since the scan (a run still streaming): write what it is now
        digest = message_digest(body)
    role = str(body.get("role", ""))
    return {"message_id": str(body.get("id", "")), "role": role, "body": body,
            "text": _plain_text(_content_text(body.get("content"))) if role in _TEXT_ROLES else "", "hash": digest}


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part["text"] for part in content
                        if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _plain_text(value: str) -> str:
    """Text any database stores: no NUL (PostgreSQL refuses it), no lone surrogate."""
    return value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _shorten(value: str, limit: int) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def _custom_title(title: str) -> str:
    return _shorten(_plain_text(title), CUSTOM_TITLE_CHARS)


def _thread_values(record: dict[str, Any], now: datetime) -> dict[str, Any]:
    """A session record's ``threads`` columns (title and ``pending_since`` aside)."""
    pending, meta = record["pending"], {k: record[k] for k in _META_KEYS if k in record}
    return {"updated_at": now, "version": RECORD_VERSION, "state": record["state"], "pending": pending,
            "answers": record["answers"], "meta": meta, "last_run_id": record["lastRunId"], "error": record["error"],
            "pending_count": _pending_count(pending, meta)}


def _person_waits(meta: Any) -> list[dict[str, Any]]:
    """The frontend-tool calls in ``meta`` that wait for a person (not for a server-side handler, S30)."""
    waits = meta.get("toolWaits") if isinstance(meta, dict) else None
    return [w for w in waits or [] if isinstance(w, dict) and not w.get("handled")]


def _pending_count(pending: dict[str, Any] | None, meta: Any = None) -> int:
    """How many answers the person owes: each interrupt (a legacy one counts one) and each waiting tool call."""
    interrupts = (0 if pending is None else 1 if pending.get("kind") == "legacy"
                  else len(pending.get("interrupts") or []))
    return interrupts + len(_person_waits(meta))


def _pending_identity(pending: Any, meta: Any = None) -> tuple[Any, frozenset[str]]:
    """What the person owes.

    The pending set (its run, its interrupts' ids or legacy value) and the waiting tool calls' ids.
    """
    waits = frozenset(str(w.get("toolCallId")) for w in _person_waits(meta))
    if not isinstance(pending, dict):
        return None, waits
    run_id = pending.get("runId", pending.get("run_id"))
    interrupts = pending.get("interrupts") or []
    ids = [i.get("id") for i in interrupts if isinstance(i, dict)]
    raw = pending.get("rawValue", pending.get("raw_value"))
    return (pending.get("kind"), run_id, ids, json.dumps(raw, sort_keys=True, default=str)), waits


def _still_owed(before: tuple[Any, frozenset[str]], now: tuple[Any, frozenset[str]]) -> bool:
    """Nothing new is asked: the same pending set, and no tool call that was not waiting before.

    The thread then keeps the time it started waiting (answering one call of several does not move it).
    """
    return before[0] == now[0] and now[1] <= before[1]


def _pending_items(thread_id: str, title: str, pending: Any, raised_at: datetime | None) -> list[PendingItem]:
    if pending is None:  # only tool calls wait
        return []
    if not isinstance(pending, dict):
        raise ValueError("the pending set is not an object")
    if pending.get("kind") == "legacy":
        event = pending.get("event")
        value = event.get("value") if isinstance(event, dict) else pending.get("rawValue", pending.get("raw_value"))
        reason, message = "", None
        if isinstance(value, dict):
            reason = str(value.get("reason") or "")
            found = value.get("message") or value.get("question")
            message = str(found) if found is not None else None
        elif isinstance(value, str):
            message = value
        return [PendingItem(thread_id, title, "", reason, message, None, raised_at)]
    items = []
    for interrupt in pending["interrupts"]:
        message = interrupt.get("message")
        items.append(PendingItem(thread_id, title, str(interrupt["id"]), str(interrupt.get("reason") or ""),
                                 str(message) if message is not None else None,
                                 parse_expiry(interrupt.get("expiresAt")), raised_at))
    return items


def _aware(moment: datetime | None) -> Any:
    """SQLite gives naive datetimes back: every stored time is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _short(exc: BaseException) -> str:
    """A SQLAlchemy error's first line, without the SQL statement and parameters it appends."""
    original = getattr(exc, "orig", None)
    message = str(original if original is not None else exc).strip().splitlines()
    return f"{type(original or exc).__name__}: {message[0] if message else ''}"[:300]
