"""The cards as a viewer sees them: who a request waits for, its approvals so far, and whether they may decide."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ...model.cards import Card
from ...store import pools
from ...store import requests as store
from ...store.threads_db import ThreadDBError
from ...tab import persistence
from . import core

if TYPE_CHECKING:
    from ...agui import AgentSession
    from ...model.people import People
    from ...model.protocols import ChatLike
    from ...store.requests import RequestRow

__all__ = ["annotate", "on_link", "seen_by"]


async def annotate(chat: ChatLike, session: AgentSession, cards: list[Card]) -> list[Card]:
    """The asker's own cards (in the chat and the inbox), with who each waits for."""
    people = core.people_of(chat.__class__)
    pending = session.tracker.pending
    db = persistence.database()
    if people is None or not cards:
        return cards
    rows: dict[str, RequestRow] = {}
    if db is not None and chat._owner_key and pending is not None and pending.kind == "standard":
        try:
            with pools.first():  # a card on its way to a person's screen (decision 0029; it starts no task)
                rows = await persistence.db_read(store.of_thread, db, chat._owner_key, session.thread_id,
                                                 pending.run_id or "")
        except ThreadDBError:
            rows = {}
    return [await seen_by(people, chat, card, rows.get(card.id)) for card in cards]


async def seen_by(people: People, chat: ChatLike, card: Card, row: RequestRow | None, *,
                  foreign: bool = False) -> Card:
    """One card as the person of ``chat`` sees it (``foreign``: someone else's request, in their inbox)."""
    person = core.person_of(chat._owner_key)
    own = core.public(chat._owner_key, chat.__class__) if people.person(person) is not None else ""
    if row is None or row.state != "open":
        return dataclasses.replace(card, routed=True, assignee=own, assignee_names=people.name(own) if own else "",
                                   can_decide=True)
    if foreign:
        may = await core.decider(people, person, row) is not None
    else:
        may = not row.assignees or row.assignees == [row.asker] or await core.decider(people, person, row) is not None
    return dataclasses.replace(
        card, routed=True, assignee=" ".join(row.assignees), assignee_names=core.names(people, row.assignees),
        can_decide=may, need=row.need, have=len(row.approvals), approvers=core.names(people, row.approvers),
        reassignable=may and bool(row.assignees) and people.person(person) is not None and person != row.asker,
        asker=people.name(row.asker) if foreign and row.asker else "")


async def on_link(chat_cls: type[ChatLike], owner_key: str, thread_id: str, card: Card, viewer: str) -> Card | None:
    """A decision link's card: who it waits for and its approvals so far (``/decide``).

    None when ``viewer`` (the page's owner key) may not see it: a request between people is shown only
    to its asker, its assignees and their delegates, whoever holds the link.
    """
    people = core.people_of(chat_cls)
    db = persistence.database()
    if people is None or db is None:
        return card
    try:
        row = await persistence.db_read(store.get, db, owner_key, thread_id, card.id)
    except ThreadDBError:
        return card
    if row is None or row.state != "open":
        return card
    if viewer != owner_key and (not viewer or await core.decider(people, core.person_of(viewer), row) is None):
        return None
    return dataclasses.replace(card, routed=True, assignee=" ".join(row.assignees),
                               assignee_names=core.names(people, row.assignees), need=row.need,
                               have=len(row.approvals), approvers=core.names(people, row.approvers),
                               asker=people.name(row.asker) if row.asker else "")
