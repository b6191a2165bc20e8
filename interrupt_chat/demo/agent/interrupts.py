"""The interrupts the scripted scenarios raise, with their response schemas."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from ag_ui.core import Interrupt

from .events import new_id
from .store import PendingInterrupt

__all__ = [
    "APPROVAL_SCHEMA",
    "CHOICE_SCHEMA",
    "COLORS",
    "CONFIRMATION_SCHEMA",
    "CREDENTIAL_SCHEMA",
    "DELETE_ARGS",
    "approval",
    "choice",
    "confirmation",
    "credential",
    "expires_at",
    "legacy_value",
]

COLORS = ["red", "green", "blue"]

#: Arguments of the scripted ``delete_files`` tool call.
DELETE_ARGS: dict[str, Any] = {"path": "/tmp/reports", "count": 3}

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["approved"],
    "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}},
}
CONFIRMATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["approved"],
    "properties": {"approved": {"type": "boolean"}},
}
CHOICE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["color"],
    "properties": {"color": {"type": "string", "enum": COLORS}},
}
CREDENTIAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["api_key"],
    "properties": {"api_key": {"type": "string", "format": "password", "writeOnly": True}},
}


def approval(tool_call_id: str, tool_name: str, args: dict[str, Any], *, message: str | None = None,
             expires_in: float | None = None, kind: str = "approval") -> PendingInterrupt:
    """A ``tool_call`` interrupt (pydantic-ai style id ``int-<toolCallId>``), approve-with-edits.

    Args:
        tool_call_id: the tool call it approves.
        tool_name: the tool's name.
        args: the call's arguments.
        message: the question; default: the ``delete_files`` one (``Delete <count> files in <path>?``).
        expires_in: seconds from now to ``expiresAt``; None: no expiry.
        kind: the continuation on resume (``approval``; ``payment`` for ``pay_invoice``).
    """
    interrupt = Interrupt(
        id=f"int-{tool_call_id}",
        reason="tool_call",
        tool_call_id=tool_call_id,
        message=message or f"Delete {args['count']} files in {args['path']}?",
        response_schema=APPROVAL_SCHEMA,
        expires_at=expires_at(expires_in),
    )
    return PendingInterrupt(interrupt, kind, tool_name=tool_name, tool_args=dict(args))


def choice() -> PendingInterrupt:
    """An ``input_required`` interrupt: pick one of :data:`COLORS`."""
    interrupt = Interrupt(
        id=new_id("int"), reason="input_required", message="Pick a color", response_schema=CHOICE_SCHEMA
    )
    return PendingInterrupt(interrupt, "choice")


def credential() -> PendingInterrupt:
    """An ``input_required`` interrupt asking for a masked ``api_key``."""
    interrupt = Interrupt(
        id=new_id("int"), reason="input_required", message="Enter your API key", response_schema=CREDENTIAL_SCHEMA
    )
    return PendingInterrupt(interrupt, "credential")


def confirmation(message: str, *, expires_in: float | None = None, langgraph_id: bool = False) -> PendingInterrupt:
    """A yes/no ``confirmation``; ``expires_in`` seconds sets ``expiresAt`` (ISO 8601, UTC offset)."""
    interrupt = Interrupt(
        id=uuid.uuid4().hex if langgraph_id else new_id("int"),
        reason="confirmation",
        message=message,
        response_schema=CONFIRMATION_SCHEMA,
        expires_at=expires_at(expires_in),
    )
    return PendingInterrupt(interrupt, "confirmation")


def expires_at(seconds: float | None) -> str | None:
    """``expiresAt`` for ``seconds`` from now (ISO 8601 with the UTC offset), or None."""
    if seconds is None:
        return None
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def legacy_value(message: str, **extra: Any) -> str:
    """The JSON string a LangGraph-style producer puts in ``CUSTOM on_interrupt``."""
    return json.dumps({**extra, "message": message, "responseSchema": CONFIRMATION_SCHEMA})
