"""The chat state's people handlers (a mixin of ``ChatState``): the inbox's scope, reassign, delegate.

Every argument comes from the browser: a scope is one of three, a person or role to hand a request
to must be one of the app's, a request must be one the caller may decide, and a delegation names
one of the app's people, until a date within a year.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, cast

import reflex as rx

from ...store import requests as store
from ...store.threads_db import ThreadDBError
from ...tab import driver, persistence
from . import core, listing, notices
from .deciding import NOT_YOURS, partial_audit

if TYPE_CHECKING:
    from ...model.people import People
    from ...model.protocols import ChatLike

__all__ = ["MAX_DELEGATION_DAYS", "PeopleHandlers", "delegate", "reassign"]

log = logging.getLogger(__name__)

MAX_DELEGATION_DAYS = 366
GONE = "This request is not waiting any more."


async def reassign(chat: ChatLike, thread_id: str, interrupt_id: str, to: str) -> str:
    """Inside the lock: hand a request to another person or role; "" when done, else why not (audited)."""
    people = core.people_of(chat.__class__)
    db = persistence.database()
    person = core.person_of(chat._owner_key)
    if people is None or db is None or people.person(person) is None:
        return NOT_YOURS.format(names="someone else")
    if to not in {c["value"] for c in listing.choices(people, "")}:
        return "Choose one of the people or roles listed."
    asker = chat._inbox_foreign.get(thread_id, chat._owner_key)
    for _ in range(3):
        row = await persistence.db_read(store.get, db, asker, thread_id, interrupt_id)
        if row is None or row.state != "open":
            return GONE
        if person == row.asker or await core.decider(people, person, row) is None:
            return NOT_YOURS.format(names=core.names(people, row.assignees))
        moved = await persistence.db_call(store.reassign, db, row, [to])
        if moved is not None:
            await partial_audit(moved, core.public(chat._owner_key, chat.__class__), "", action="reassigned")
            await notices.later("assigned", moved)
            await core.tell(people, moved, row.assignees)
            return ""
    return "The request kept changing; try again."


def _until(text: str) -> datetime | None:
    try:
        day = datetime.strptime(text.strip()[:10], "%Y-%m-%d").date()
    except ValueError:
        return None
    until = datetime.combine(day, time.max, tzinfo=UTC)
    now = datetime.now(UTC)
    return until if now < until <= now + timedelta(days=MAX_DELEGATION_DAYS) else None


async def delegate(chat: ChatLike, people: People, to: str, until_text: str) -> str:
    """Inside the lock: while away, my assigned requests also reach ``to`` until ``until_text``; "" or why not."""
    db = persistence.database()
    person = core.person_of(chat._owner_key)
    if db is None or people.person(person) is None:
        return "Sign in as one of the team to delegate."
    if to == person or people.person(to) is None:
        return "Choose someone else of the team."
    until = _until(until_text)
    if until is None:
        return f"Choose a date after today, within {MAX_DELEGATION_DAYS} days."
    await persistence.db_call(store.set_delegation, db, person, to, until)
    await show(chat, people)
    await _tell_delegate(chat, to)
    return ""


async def show(chat: ChatLike, people: People) -> None:
    """Inside the lock: the people vars of the inbox (who is who, my delegation)."""
    state = cast("Any", chat)
    person = core.person_of(chat._owner_key)
    state.people_on = True
    state.people_choices = listing.choices(people, person)
    db = persistence.database()
    found = None
    if db is not None and people.person(person) is not None:
        try:
            found = await persistence.db_read(store.delegation_of, db, person, datetime.now(UTC))
        except ThreadDBError:
            found = None
    state.delegation = {"to": found.delegate, "to_name": people.name(found.delegate),
                        "until": found.until.strftime("%Y-%m-%d")} if found is not None else {}


async def _tell_delegate(chat: ChatLike, delegate_id: str) -> None:
    from ...workers import sync

    await sync.changed(f"{delegate_id}|{chat._owner_key.rpartition('|')[2]}", core.PEOPLE_NOTICE)


def _chat(state: Any) -> type[ChatLike]:
    return cast("type[ChatLike]", state.__class__)


class PeopleHandlers(rx.State, mixin=True):
    """People: the inbox's scope, reassigning a request, delegating while away."""

    people: ClassVar[Any] = None  # Chat(people=ic.People(...)): who decides what
    people_on: bool = False  # the chat has people (Chat(people=...)): scope and delegation are drawn
    inbox_scope: str = "mine"  # mine | asked | all
    people_choices: list[dict[str, str]] = []  # {"value", "label"}: people and roles a request can go to
    delegation: dict[str, str] = {}  # my delegation in force: {"to", "to_name", "until"}, else {}
    reassign_open: str = ""  # the inbox card (its key) whose reassign editor is open
    people_error: str = ""  # why a delegation was refused

    async def _refill(self) -> None:
        from ..inbox import fill

        await fill(await driver.ready(self, _chat(self)))

    @rx.event(background=True)
    async def inbox_set_scope(self, scope: str):
        """Show what is assigned to me (``mine``), what I asked (``asked``), or ``all``."""
        async with self:
            self.inbox_scope = scope if scope in listing.SCOPES else "mine"
            self.inbox_page = 0
            await self._refill()

    @rx.event
    def inbox_reassign_open(self, key: str):
        """Open (or close) a card's reassign editor."""
        self.reassign_open = "" if self.reassign_open == key or not isinstance(key, str) else key

    @rx.event(background=True)
    async def inbox_reassign(self, thread_id: str, interrupt_id: str, to: str):
        """Hand a request assigned to me to another person or role (``reassigned`` in the audit)."""
        async with self:
            chat = await driver.ready(self, _chat(self))
            refusal = await reassign(chat, str(thread_id), str(interrupt_id), str(to or ""))
            self.reassign_open = ""
            await self._refill()
            if refusal:
                from ..inbox import _card_error

                _card_error(chat, str(thread_id), str(interrupt_id), refusal)

    @rx.event(background=True)
    async def delegate_save(self, form_data: dict[str, Any]):
        """While away, my assigned requests also reach a person until a date (``to``, ``until``: YYYY-MM-DD)."""
        async with self:
            chat = await driver.ready(self, _chat(self))
            people = core.people_of(_chat(self))
            data = form_data if isinstance(form_data, dict) else {}
            self.people_error = await delegate(chat, people, str(data.get("to") or ""), str(data.get("until") or "")) \
                if people is not None and not chat.signed_out else "Sign in to delegate."

    @rx.event(background=True)
    async def delegate_clear(self):
        """End my delegation."""
        async with self:
            chat = await driver.ready(self, _chat(self))
            people, db = core.people_of(_chat(self)), persistence.database()
            if people is None or db is None or chat.signed_out:
                return
            before = dict(self.delegation)
            await persistence.db_call(store.clear_delegation, db, core.person_of(chat._owner_key))
            await show(chat, people)
            if before.get("to"):
                await _tell_delegate(chat, before["to"])
