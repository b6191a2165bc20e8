"""The inbox of a chat with people: what is assigned to me, what I asked, or both (``inbox-scope``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ...model.cards import Card
from ...model.people import ROLE_PREFIX, People, assignee_ids
from ...store import requests as store
from ...store.threads_db import ThreadDBError
from ...tab import persistence
from . import core, views

if TYPE_CHECKING:
    from ...model.protocols import ChatLike
    from ...store.requests import RequestRow

__all__ = ["SCOPES", "Listing", "listing"]

SCOPES = ("mine", "asked", "all")


@dataclass
class Listing:
    """One inbox load's view of the people's requests."""

    people: People
    scope: str
    own: dict[tuple[str, str], RequestRow] = field(default_factory=dict)  # (thread, interrupt) -> my requests' rows
    foreign: list[RequestRow] = field(default_factory=list)  # others' requests I may decide

    def shows_own(self, thread_id: str, interrupt_id: str) -> bool:
        """Whether a request of my own threads is listed in this scope."""
        if self.scope != "mine":
            return True
        row = self.own.get((thread_id, interrupt_id))
        return row is None or not row.assignees or row.assignees == [row.asker] or row.asker in row.assignees

    async def seen(self, chat: ChatLike, card: Card, foreign: bool) -> Card:
        """A listed card as the viewer sees it."""
        if foreign:
            row = next((r for r in self.foreign if (r.thread_id, r.interrupt_id) == (card.thread_id, card.id)), None)
            shown = await views.seen_by(self.people, chat, card, row, foreign=True)
            return dataclasses.replace(shown, rememberable=False)
        return await views.seen_by(self.people, chat, card, self.own.get((card.thread_id, card.id)))


async def names_of(people: People, person: str) -> list[str]:
    """What assignees name ``person``: their id, their roles, and those of whom they are the delegate."""
    names = assignee_ids(person, people.roles(person))
    db = persistence.database()
    if db is not None:
        for delegator in await persistence.db_read(store.delegators_of, db, person, datetime.now(UTC)):
            names += assignee_ids(delegator, people.roles(delegator))
    return list(dict.fromkeys(names))


async def listing(chat: ChatLike) -> Listing | None:
    """Inside the lock: the requests the inbox lists for this person and scope (None: the chat has no people)."""
    people = core.people_of(chat.__class__)
    db = persistence.database()
    if people is None:
        return None
    from .handlers import show

    await show(chat, people)
    scope = chat.inbox_scope if chat.inbox_scope in SCOPES else "mine"
    found = Listing(people, scope)
    owner, person = chat._owner_key, core.person_of(chat._owner_key)
    if db is None or not owner:
        return found
    try:
        found.own = {(r.thread_id, r.interrupt_id): r for r in await persistence.db_read(store.asked, db, owner)}
        if scope != "asked" and people.person(person) is not None:
            chat_name = owner.rpartition("|")[2]
            rows = await persistence.db_read(store.mine, db, chat_name, await names_of(people, person))
            found.foreign = [r for r in rows if r.owner != owner
                             and await core.decider(people, person, r) is not None]
    except ThreadDBError as exc:
        persistence.unavailable(chat, exc)
    return found


def choices(people: People, person: str) -> list[dict[str, str]]:
    """Whom a request can go to: the listed people (not oneself) and their roles."""
    out = [{"value": p.id, "label": p.name} for p in people.people() if p.id != person]
    roles = sorted({r for p in people.people() for r in p.roles})
    return out + [{"value": ROLE_PREFIX + r, "label": f"{r} (role)"} for r in roles]
