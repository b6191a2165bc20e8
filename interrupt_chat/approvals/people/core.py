"""What the people modules share: a chat's people, whose request a row is, and who hears of a change."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ...model.people import ROLE_PREFIX, People, may_decide
from ...store import requests as store
from ...store.threads_db import ThreadDBError
from ...tab import hooks, persistence, server_secret
from ...workers import sync

if TYPE_CHECKING:
    from ...store.requests import RequestRow

__all__ = ["ACTING", "PEOPLE_NOTICE", "Acting", "chat_of_key", "decider", "names", "people_of", "person_of",
           "recipients", "tell"]

log = logging.getLogger(__name__)

PEOPLE_NOTICE = "#people"  # the sync notice's thread id for "a request assigned to you changed"


@dataclass(frozen=True)
class Acting:
    """An assignee deciding someone else's request: who they are, for whom (a delegate), and that it is final."""

    actor: str
    on_behalf_of: str = ""


ACTING: contextvars.ContextVar[Acting | None] = contextvars.ContextVar("interrupt_chat_people_acting", default=None)


def people_of(chat_cls: Any) -> People | None:
    """The chat's ``people`` (None: every request stays with the person who asked, as without people)."""
    found = getattr(chat_cls, "people", None)
    return found if isinstance(found, People) else None


def chat_of_key(owner_key: str) -> Any:
    """The chat state class an owner key (``<owner>|<chat name>``) belongs to, or None."""
    name = owner_key.rpartition("|")[2]
    chats: list[Any] = list(hooks.CHATS.values())
    return next((cls for cls in chats if cls.get_full_name() == name), None) if name else None


def person_of(owner_key: str) -> str:
    """The person part of an owner key (the ``owner=`` id; an anonymous visitor's is their browser's key)."""
    return owner_key.rpartition("|")[0]


def public(owner_key: str, chat_cls: Any = None) -> str:
    """How the person of ``owner_key`` is named outside the server (never a browser's key)."""
    return server_secret.public_person(owner_key, chat_cls)


def names(people: People, assignees: Iterable[str]) -> str:
    """Assignees as a card says them: "Bob, finance"."""
    return ", ".join(people.name(a) for a in assignees)


async def decider(people: People, person: str, row: RequestRow) -> str | None:
    """For whom ``person`` may decide ``row``: "" (themselves), a delegator's id, or None (they may not)."""
    if may_decide(person, people.roles(person), row.assignees, row.asker, people.self_approval):
        return ""
    db = persistence.database()
    if db is None or person == row.asker:
        return None
    try:
        delegators = await persistence.db_read(store.delegators_of, db, person, datetime.now(UTC))
    except ThreadDBError:
        return None
    return next((d for d in delegators if d != row.asker
                 and may_decide(d, people.roles(d), row.assignees, row.asker, people.self_approval)), None)


async def recipients(people: People, assignees: Sequence[str]) -> list[str]:
    """The people an assignment reaches: the named ones, the roles' members, and their delegates."""
    found: list[str] = []
    for who in assignees:
        found += people.members(who.removeprefix(ROLE_PREFIX)) if who.startswith(ROLE_PREFIX) else [who]
    db = persistence.database()
    if db is not None:
        now = datetime.now(UTC)
        for person in list(found):
            try:
                delegation = await persistence.db_read(store.delegation_of, db, person, now)
            except ThreadDBError:
                break
            if delegation is not None:
                found.append(delegation.delegate)
    return list(dict.fromkeys(p for p in found if p))


async def tell(people: People, row: RequestRow, before: Sequence[str] = ()) -> None:
    """Every page that shows the request follows it: the asker's tabs, and the inboxes of whom it reaches."""
    await sync.changed(row.owner, row.thread_id)
    for person in await recipients(people, [*row.assignees, *before]):
        await sync.changed(f"{person}|{row.chat}", PEOPLE_NOTICE)
