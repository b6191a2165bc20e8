"""Who is who, and who decides what (``ic.Chat(people=ic.People(...))``): framework-free.

A person is named by the ``owner=`` id the app's login gives (``Chat(owner=fn)``). ``People`` says
who they are (display name, mail, Slack id, roles), who must decide each request (its
*assignees*: person ids and ``role:<name>``), how many distinct people must approve it, when its
assignees are reminded and to whom it goes up. The routing itself (what the database keeps, who
may decide, the two-person rule) lives in :mod:`interrupt_chat.approvals.people`; this module is
the app's side of it and the pure rules both sides share.

.. code-block:: python

    team = ic.People(
        [ic.Person("alice", "Alice", roles=("staff",)), ic.Person("bob", "Bob", roles=("finance",))],
        assign=lambda r: ["role:finance"] if r.tool == "pay_invoice" else [],
        approvals=lambda r: 2 if float(r.args.get("amount") or 0) > 10_000 else 1,
        escalation=lambda r: ic.Escalation(remind_at=0.5, escalate_at=0.8, to=("role:managers",)),
    )
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["ANONYMOUS", "ROLE_PREFIX", "Escalation", "People", "Person", "Request", "assignee_ids", "clean_assignees",
           "may_decide"]

ROLE_PREFIX = "role:"
MAX_ASSIGNEES = 32  # assignees one request holds at most (what the app's function gives is cut there)
_ID = re.compile(r"^[^\s|]{1,128}$")  # a person id or role name: no blank and no "|" (the owner key's separator)


class _Anonymous(str):
    """What ``owner=fn`` returns for a visitor without the app's login: the browser's anonymous identity."""

    __slots__ = ()

    def __repr__(self) -> str:
        """Its name in the package."""
        return "interrupt_chat.ANONYMOUS"


ANONYMOUS = _Anonymous("")
"""``owner=fn`` may return it: this tab's person is its browser's anonymous identity (as without ``owner=``)."""


@dataclass(frozen=True)
class Person:
    """One of the app's people, named by the ``owner=`` id its login gives.

    Attributes:
        id: the app's user id (what ``Chat(owner=fn)`` returns for them).
        display: the name shown ("Bob Stone"); default: the id.
        email: where mail reaches them (the mail channel).
        slack: their Slack user id (``U…``).
        roles: the roles they hold (``"finance"``); a request assigned to ``role:finance`` is theirs to decide.
    """

    id: str
    display: str = ""
    email: str = ""
    slack: str = ""
    roles: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The display name, else the id."""
        return self.display or self.id


@dataclass(frozen=True)
class Request:
    """One request as the app's routing functions see it (when its set surfaces).

    Attributes:
        thread_id: the asker's thread.
        interrupt_id: the interrupt ("" for a legacy one).
        asker: the person who asked (their ``owner=`` id; "" for an anonymous visitor).
        reason: the interrupt's ``reason`` (``tool_call``, ``input_required``, …).
        tool: the tool a tool approval asks about ("" otherwise).
        args: that call's arguments (masked fields never reach here: they are answers, not arguments).
        message: the text for the person.
        expires_at: when it expires (aware), None when it does not.
    """

    thread_id: str
    interrupt_id: str
    asker: str
    reason: str = ""
    tool: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    message: str = ""
    expires_at: datetime | None = None


@dataclass(frozen=True)
class Escalation:
    """When a request's assignees are reminded, and when (and to whom) it goes up.

    Shares are of the time from surfacing to expiry (a request without an expiry is neither
    reminded nor escalated). ``None`` leaves a step out.

    Attributes:
        remind_at: the share at which the assignees get a reminder (default: halfway).
        escalate_at: the share at which ``to`` are added to the assignees (the others can still decide).
        to: person ids and ``role:<name>`` it goes up to.
    """

    remind_at: float | None = 0.5
    escalate_at: float | None = 0.8
    to: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Check the shares, and that an escalation names whom it goes to."""
        for name in ("remind_at", "escalate_at"):
            share = getattr(self, name)
            if share is not None and not (isinstance(share, (int, float)) and 0 < share < 1):
                raise ValueError(f"Escalation.{name} must be a share of the time to expiry, between 0 and 1: {share!r}")
        if self.escalate_at is not None and not self.to:
            raise ValueError("Escalation.escalate_at needs someone to escalate to (to=('role:managers',))")


AssignFn = Callable[[Request], Iterable[str] | None]
CountFn = Callable[[Request], int]
EscalationFn = Callable[[Request], Escalation | None]


class People:
    """The app's people and its routing of requests: ``ic.Chat(people=ic.People(...))``.

    Args:
        people: the people (``Person``), or ``fn(person_id) -> Person | None`` for a directory of the app's own.
        assign: ``fn(request) -> ids`` (person ids and ``"role:<name>"``); empty or None: the person who asked.
        approvals: ``fn(request) -> int``: how many distinct people must approve it (default 1).
        escalation: ``fn(request) -> Escalation | None``: reminders and escalation (default none).
        self_approval: whether the asker's own approval counts for a request assigned to others
            (to a role they hold). Default False: four eyes.
        members: ``fn(role) -> person ids`` for a directory (default: the listed people holding it).
    """

    def __init__(self, people: Iterable[Person] | Callable[[str], Person | None] = (), *,
                 assign: AssignFn | None = None, approvals: CountFn | None = None,
                 escalation: EscalationFn | None = None, self_approval: bool = False,
                 members: Callable[[str], Iterable[str]] | None = None) -> None:
        """Check and keep the app's people and routing functions."""
        if callable(people):
            self._lookup: Callable[[str], Person | None] = people
            self._listed: dict[str, Person] = {}
        else:
            listed = list(people)
            bad = [p for p in listed if not isinstance(p, Person) or not _ID.match(p.id)
                   or p.id.startswith(ROLE_PREFIX)]
            if bad:
                raise TypeError("People takes ic.Person values with an id of no blank and no '|', not starting "
                                f"with 'role:': {bad[0]!r}")
            self._listed = {p.id: p for p in listed}
            self._lookup = self._listed.get
        for name, fn in (("assign", assign), ("approvals", approvals), ("escalation", escalation),
                         ("members", members)):
            if fn is not None and not callable(fn):
                raise TypeError(f"People({name}=...) must be a function, not {type(fn).__name__}")
        self._assign, self._approvals, self._escalation = assign, approvals, escalation
        self._members = members
        self.self_approval = bool(self_approval)

    def person(self, person_id: str) -> Person | None:
        """The person with this id, or None (an anonymous visitor, someone the app does not list)."""
        return self._lookup(person_id) if person_id else None

    def name(self, person_id: str) -> str:
        """How a person or ``role:<name>`` is shown: the display name, ``finance`` (role), else the id."""
        if person_id.startswith(ROLE_PREFIX):
            return person_id.removeprefix(ROLE_PREFIX)
        found = self.person(person_id)
        return found.name if found is not None else person_id

    def roles(self, person_id: str) -> tuple[str, ...]:
        """The roles a person holds."""
        found = self.person(person_id)
        return found.roles if found is not None else ()

    def members(self, role: str) -> list[str]:
        """The ids of the people holding ``role`` (the ones the app lists, or its ``members`` function)."""
        if self._members is not None:
            return [str(p) for p in self._members(role)]
        return [p.id for p in self._listed.values() if role in p.roles]

    def assignees(self, request: Request) -> list[str]:
        """Who must decide ``request``: the app's ``assign``, else the person who asked (none when anonymous)."""
        chosen = clean_assignees(self._assign(request) if self._assign is not None else None)
        return chosen or ([request.asker] if request.asker else [])

    def needed(self, request: Request) -> int:
        """How many distinct approvals ``request`` needs (at least 1)."""
        count = self._approvals(request) if self._approvals is not None else 1
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"People(approvals=...) must return an int, not {type(count).__name__}")
        return max(1, min(count, MAX_ASSIGNEES))

    def escalation(self, request: Request) -> Escalation | None:
        """When ``request`` is reminded and escalated (None: never)."""
        found = self._escalation(request) if self._escalation is not None else None
        if found is not None and not isinstance(found, Escalation):
            raise TypeError(f"People(escalation=...) must return an ic.Escalation or None, not {type(found).__name__}")
        return found

    def people(self) -> list[Person]:
        """The listed people (empty for a directory function)."""
        return list(self._listed.values())


def clean_assignees(chosen: Iterable[str] | None) -> list[str]:
    """Assignees as stored: strings of no blank and no ``|``, each once, in order, at most :data:`MAX_ASSIGNEES`."""
    if chosen is None or isinstance(chosen, (str, bytes)):
        chosen = [chosen] if isinstance(chosen, str) and chosen else []
    out: list[str] = []
    for item in chosen:
        text = str(item).strip()
        if _ID.match(text) and text not in out and text != ROLE_PREFIX:
            out.append(text)
    return out[:MAX_ASSIGNEES]


def assignee_ids(person: str, roles: Sequence[str]) -> list[str]:
    """The assignee values that name ``person``: their id and each of their roles."""
    return [person, *(ROLE_PREFIX + r for r in roles)] if person else []


def may_decide(person: str, roles: Sequence[str], assignees: Sequence[str], asker: str,
               self_approval: bool = False) -> bool:
    """Whether ``person`` (holding ``roles``) is one a request's ``assignees`` name.

    The asker counts only where a request names them by id (one that stays with them), or where
    the app allows self-approval: holding the assigned role is not enough (four eyes).
    """
    if not person:
        return False
    if person == asker and not self_approval:
        return person in assignees
    return any(a in assignees for a in assignee_ids(person, roles))
