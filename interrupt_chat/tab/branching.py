"""Edit a sent message, regenerate an answer, switch between versions (the tree is agui/branches.py).

Each action is a claim like a send (docs/decisions/0016): the copy is refreshed, the new path and
the hidden version are written in one conditional save, and only the winner runs. Nothing is
offered while a run or a request (an interrupt, a waiting tool call) is open; a switch is refused
only while a run is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import reflex as rx

from ..agui import AgentSession
from ..agui.branches import BranchError, branch_off, switch
from ..agui.records import session_from_record, session_record
from ..store import branches as store
from ..store.branches import BranchWrite
from ..store.threads_db import ThreadDBError
from . import claims, driver, persistence, trail
from .sending import refreshed, set_headers

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, StateLike

__all__ = ["BUSY_NOTICE", "OPEN_NOTICE", "BranchHandlers"]

BUSY_NOTICE = "Wait for the current answer, or stop it."
OPEN_NOTICE = "Answer or cancel the agent's request first."
MAX_EDIT_CHARS = 100_000


def _blocked(chat: ChatLike, session: AgentSession, fresh: persistence.Fresh, *, requests: bool = True) -> str:
    if fresh.busy or session.running or chat.status == "running":
        return BUSY_NOTICE
    if requests and (session.tracker.pending is not None or session.tool_waits):
        return OPEN_NOTICE
    return ""


def _rebuilt(chat: ChatLike, old: AgentSession, record: dict[str, Any]) -> AgentSession:
    """The thread as ``record`` says, in place of ``old`` (same revision: the save is conditional on it)."""
    new = session_from_record(record, chat._client())
    new.revision, new.branches = old.revision, old.branches  # the forks as the plan changed them
    new.context, new.forwarded_props = old.context, old.forwarded_props
    chat._sessions = {**chat._sessions, new.thread_id: new}
    return chat._session()


def _hidden_tail(chat: ChatLike, session: AgentSession, branch_id: str) -> dict[str, Any] | None:
    """Synchronously, off the loop: a hidden version from the database, else from memory."""
    db = persistence.database()
    if db is not None and chat._owner_key:
        found = store.load(db, chat._owner_key, session.thread_id, branch_id)
        if found is not None:
            return found
    return session.branches.local.get(branch_id)


#: ``plan(chat, session)``: (the new session, the branch write, the run's events or None), a notice, or None.
Plan = Callable[["ChatLike", AgentSession], Awaitable["tuple[AgentSession, BranchWrite, Any] | str | None"]]


async def _act(state: StateLike, plan: Plan, *, requests: bool = True) -> None:
    """Refresh, plan the new path, write it with its hidden versions, then run (if the plan starts one).

    ``plan(chat, session)`` returns (the new session, the branch write, the run's events or None),
    a notice to show, or None (nothing to do: ids from the page that do not fit the thread).
    """
    chat_cls = cast("type[ChatLike]", state.__class__)
    async with state:
        chat = await driver.ready(state, chat_cls)

        async def attempt() -> claims.Attempt[Any] | None:
            fresh = await refreshed(chat)
            if fresh is None:
                return None
            session = chat._session()
            chat.notice = _blocked(chat, session, fresh, requests=requests)
            if chat.notice:
                await driver.publish(chat, session, full=fresh.replaced)
                return None
            planned = await plan(chat, session)
            if not isinstance(planned, tuple):
                chat.notice = planned or ""
                return None
            new, write, events = planned
            # (undo: never started); an edit resent or an answer regenerated is a new run: the pause refuses it
            return claims.Attempt(new, events, in_flight=events is not None, branches=write,
                                  undo=None if events is None else events.aclose, unless_paused=requests)

        claimed = await claims.claim(chat, attempt)  # another tab moved it on: plan again on theirs
        if claimed is None:
            return
        new, events = claimed.session, claimed.value
        chat.editing_id = ""
        await driver.publish(chat, new, full=True, starting=events is not None)
        await trail.show_trail(chat)
    if events is not None:
        await driver.drive(chat, chat_cls, new, events)


def _index(session: AgentSession, message_id: str, role: str) -> int | None:
    return next((i for i, m in enumerate(session.transcript.messages) if m.id == message_id and m.role == role), None)


def _edit(message_id: str, text: str) -> Plan:
    async def plan(chat: ChatLike, session: AgentSession) -> tuple[AgentSession, BranchWrite, Any] | str | None:
        index = _index(session, message_id, "user")
        if index is None or not text:
            return None
        if not chat._client().url:
            return None
        raw = session.transcript.messages[index].raw_content  # its files stay with the new version
        files = [part for part in raw or [] if getattr(part, "source", None) is not None]
        record, tail = branch_off(session_record(session), session.branches, index)
        new = _rebuilt(chat, session, record)
        if not await set_headers(chat, new):
            return None
        return new, BranchWrite(put=[tail]), new.send(text, files=files)
    return plan


def _regenerate(message_id: str) -> Plan:
    async def plan(chat: ChatLike, session: AgentSession) -> tuple[AgentSession, BranchWrite, Any] | str | None:
        messages = session.transcript.messages
        last_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
        last_answer = next((m.id for m in reversed(messages) if m.role == "assistant"), None)
        if last_user is None or last_user + 1 >= len(messages) or last_answer != message_id:
            return None  # only the last answer, and only when there is one after the last user message
        record, tail = branch_off(session_record(session), session.branches, last_user + 1)
        new = _rebuilt(chat, session, record)
        if not await set_headers(chat, new):
            return None
        return new, BranchWrite(put=[tail]), new.rerun()
    return plan


def _switch(message_id: str, step: int) -> Plan:
    async def plan(chat: ChatLike, session: AgentSession) -> tuple[AgentSession, BranchWrite, Any] | str | None:
        index = next((i for i, m in enumerate(session.transcript.messages) if m.id == message_id), None)
        if index is None:
            return None  # ids come from the page
        fork = session.branches.forks.get(session.transcript.messages[index - 1].id if index else "")
        if fork is None or not 0 <= fork.shown + step < len(fork.versions):
            return None
        target = fork.shown + step
        try:
            stored = await persistence.db_call(_hidden_tail, chat, session, fork.versions[target])
            record, hidden, wanted = switch(session_record(session), session.branches, message_id, target,
                                            lambda _id: stored)
        except ThreadDBError as exc:
            persistence.unavailable(chat, exc)
            return chat.notice
        except BranchError as exc:
            return f"That version cannot be shown: {exc}."
        return _rebuilt(chat, session, record), BranchWrite(put=[hidden], drop=[wanted]), None
    return plan


class BranchHandlers(rx.State, mixin=True):
    """The chat state's edit, regenerate and version switch (a mixin of ``ChatState``)."""

    branch_nav: dict[str, str] = {}  # message id -> "shown/count" (messages with other versions)
    editing_id: str = ""  # the user message whose edit box is open
    regenerate_id: str = ""  # the answer that can be regenerated (the last one)

    @rx.event
    def start_edit(self, message_id: str):
        """Open the edit box of a user message."""
        self.editing_id = str(message_id)

    @rx.event
    def cancel_edit(self):
        """Close the edit box; nothing changes."""
        self.editing_id = ""

    @rx.event(background=True)
    async def save_edit(self, form_data: dict[str, Any]):
        """Send the edited text as a new version of the message (form: ``message_id``, ``text``)."""
        text = str(form_data.get("text") or "").strip()[:MAX_EDIT_CHARS]
        await _act(self, _edit(str(form_data.get("message_id") or ""), text))

    @rx.event(background=True)
    async def regenerate(self, message_id: str):
        """Answer the last user message again; the old answer stays as a version."""
        await _act(self, _regenerate(str(message_id)))

    @rx.event(background=True)
    async def previous_branch(self, message_id: str):
        """Show the previous version of this message (and what followed it)."""
        await _act(self, _switch(str(message_id), -1), requests=False)

    @rx.event(background=True)
    async def next_branch(self, message_id: str):
        """Show the next version of this message (and what followed it)."""
        await _act(self, _switch(str(message_id), 1), requests=False)
