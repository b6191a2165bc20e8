"""What the thread database hands out and raises: plain records, and its three exceptions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..agui.session import AgentSession

__all__ = ["DecisionRecord", "PendingItem", "SaveResult", "StoredThread", "ThreadConflict", "ThreadDBError",
           "ThreadDeleted", "ThreadHead", "ThreadSummary", "WaitingToolCall"]


class ThreadDBError(Exception):
    """The thread database failed: unreachable, locked, or holding a row that does not parse.

    The only exception :class:`ThreadDB` raises for database trouble (the SQLAlchemy, driver or
    :class:`~interrupt_chat.agui.records.RecordError` cause is chained as ``__cause__``). Invalid
    arguments (an unknown decision action) raise ``ValueError`` as usual.
    """


class ThreadConflict(Exception):
    """A conditional write lost: the thread is not at the revision the caller read.

    Another tab, worker or process wrote it since. Nothing of the write happened; read it again.

    Not a :class:`ThreadDBError`: the database works, the caller's copy is stale (docs/decisions/0016).
    """


class ThreadDeleted(ThreadConflict):
    """The thread was deleted (it has a tombstone): a save never brings it back."""


@dataclass(frozen=True)
class ThreadHead:
    """Where one thread stands in the database, read cheaply (:meth:`ThreadDB.head`).

    Attributes:
        revision: its revision; 0 when the owner has no such thread.
        deleted: it was deleted (a tombstone; ``revision`` is then 0).
        in_flight: a run was claimed on it and has not been saved as ended.
        updated_at: its last save (aware, UTC); None when there is no such thread.
        pending_since: since when it waits for the person (aware, UTC); None when it does not.
    """

    revision: int
    deleted: bool
    in_flight: bool = False
    updated_at: datetime | None = None
    pending_since: datetime | None = None


@dataclass(frozen=True)
class StoredThread:
    """One thread as read (:meth:`ThreadDB.read`): the session, its revision, and whether a run holds it."""

    session: AgentSession
    revision: int
    in_flight: bool
    updated_at: datetime | None = None


@dataclass(frozen=True)
class ThreadSummary:
    """One thread in an owner's list (:meth:`ThreadDB.threads`).

    Attributes:
        thread_id: the AG-UI ``threadId``.
        title: the person's title, else the first user message (at most 60 characters), else "".
        created_at: first save (aware, UTC).
        updated_at: last save (aware, UTC).
        pending: interrupts or frontend-tool calls are waiting for the person.
        pending_count: how many (a legacy interrupt counts one, so does each waiting tool call).
    """

    thread_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    pending: bool
    pending_count: int


@dataclass(frozen=True)
class PendingItem:
    """One pending interrupt of one of an owner's threads (:meth:`ThreadDB.pending`).

    Attributes:
        thread_id: the thread it belongs to.
        title: that thread's title.
        interrupt_id: the interrupt's id; "" for a legacy interrupt (it has none).
        reason: its ``reason`` ("" when it has none).
        message: the text for the person (a legacy value's ``message`` / ``question``, or the
            value itself when it is a string); None when there is none.
        expires_at: ``expiresAt`` parsed (S11); None when absent or unparseable.
        raised_at: when a save first saw this pending set (aware, UTC).
    """

    thread_id: str
    title: str
    interrupt_id: str
    reason: str
    message: str | None
    expires_at: datetime | None
    raised_at: datetime | None


@dataclass(frozen=True)
class WaitingToolCall:
    """A frontend-tool call that waits for the person in one of an owner's threads (S27).

    Listed by :meth:`ThreadDB.tool_waits`.

    Attributes:
        thread_id: the thread it belongs to.
        title: that thread's title.
        tool_call_id: the call's id.
        tool_name: the tool it calls.
        raised_at: when a save first saw the thread waiting (aware, UTC).
    """

    thread_id: str
    title: str
    tool_call_id: str
    tool_name: str
    raised_at: datetime | None


@dataclass(frozen=True)
class DecisionRecord:
    """One entry of the audit trail (:meth:`ThreadDB.decisions`); masked fields read ``[masked]``.

    Attributes:
        id: increasing with time, unique in the database.
        thread_id: the thread.
        run_id: the run that raised the interrupt.
        interrupt_id: the interrupt ("" for a legacy one).
        reason: the interrupt's reason.
        action: ``resolved``, ``cancelled``, ``rejected``, ``expired`` or ``dismissed``; with people also
            ``approved-partly`` (one of several needed approvals), ``reassigned`` and ``escalated``.
        payload: the answer as sent, masked fields replaced by :data:`MASKED`.
        at: when it was recorded (aware, UTC).
        by: who or what decided: ``person`` (a card in the chat or the inbox), ``bulk``, ``policy``,
            ``link`` or ``expiry``.
        detail: a policy's answer: ``{"tool", "rule", "policyId", "toolCallId"}``; with people
            ``{"actor", "onBehalfOf", "assignees"}`` (else None).
    """

    id: int
    thread_id: str
    run_id: str | None
    interrupt_id: str
    reason: str | None
    action: str
    payload: Any
    at: datetime
    by: str = "person"
    detail: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry as plain JSON data (camelCase keys, ``at`` in ISO 8601; ``detail`` when there is one)."""
        out = {"id": self.id, "threadId": self.thread_id, "runId": self.run_id, "interruptId": self.interrupt_id,
               "reason": self.reason, "action": self.action, "payload": self.payload, "at": self.at.isoformat(),
               "by": self.by}
        return {**out, "detail": self.detail} if self.detail else out

    @property
    def actor(self) -> str:
        """Who decided, by ``owner=`` id (people: ``detail["actor"]``), else ""."""
        return str((self.detail or {}).get("actor") or "")

    @property
    def on_behalf_of(self) -> str:
        """The assignee a delegate decided for, else ""."""
        return str((self.detail or {}).get("onBehalfOf") or "")


@dataclass(frozen=True)
class SaveResult:
    """What one :meth:`ThreadDB.save` wrote: message rows inserted, updated and deleted; the new revision."""

    inserted: int
    updated: int
    deleted: int
    revision: int = 0

    @property
    def written(self) -> int:
        """Message rows touched in all."""
        return self.inserted + self.updated + self.deleted
