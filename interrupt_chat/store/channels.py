"""Where each person wants requests (app, mail, Slack, both), and the Slack messages sent about a request."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import and_, delete, select

from .schema import channel_prefs_table, slack_messages_table

if TYPE_CHECKING:
    from .threads_db import ThreadDB

__all__ = ["CHOICES", "DEFAULT_CHOICE", "SlackMessage", "choice_of", "save_slack_message", "set_choice",
           "slack_messages"]

CHOICES = ("app", "mail", "slack", "both")
DEFAULT_CHOICE = "both"  # a person who chose nothing gets mail and Slack where the app has them


def choice_of(db: ThreadDB, person: str) -> str:
    """``person``'s choice, else :data:`DEFAULT_CHOICE`."""
    t = channel_prefs_table
    with db._transaction("read a person's channels") as conn:
        found = conn.execute(select(t.c.choice).where(t.c.person == person)).scalar()
    return found if found in CHOICES else DEFAULT_CHOICE


def set_choice(db: ThreadDB, person: str, choice: str) -> None:
    """Keep ``person``'s choice (one of :data:`CHOICES`)."""
    if choice not in CHOICES:
        raise ValueError(f"unknown channel choice {choice!r}")
    t = channel_prefs_table
    with db._transaction("set a person's channels", write=True) as conn:
        conn.execute(delete(t).where(t.c.person == person))
        conn.execute(t.insert().values(person=person, choice=choice, set_at=datetime.now(UTC)))


@dataclass(frozen=True)
class SlackMessage:
    """One Slack message about a request: where it is (``channel``, ``ts``), to whom, and why it was sent."""

    person: str
    kind: str
    channel: str
    ts: str


def save_slack_message(db: ThreadDB, owner: str, thread_id: str, interrupt_id: str, message: SlackMessage) -> None:
    """Remember a posted message (a second post of the same kind for the same person replaces it)."""
    t = slack_messages_table
    key = and_(t.c.owner == owner, t.c.thread_id == thread_id, t.c.interrupt_id == interrupt_id,
               t.c.person == message.person, t.c.kind == message.kind)
    with db._transaction("remember a Slack message", write=True) as conn:
        conn.execute(delete(t).where(key))
        conn.execute(t.insert().values(owner=owner, thread_id=thread_id, interrupt_id=interrupt_id,
                                       person=message.person, kind=message.kind, channel=message.channel,
                                       ts=message.ts, posted_at=datetime.now(UTC)))


def slack_messages(db: ThreadDB, owner: str, thread_id: str, interrupt_id: str) -> list[SlackMessage]:
    """The Slack messages sent about one request."""
    t = slack_messages_table
    with db._transaction("read a request's Slack messages") as conn:
        rows = conn.execute(select(t).where(and_(t.c.owner == owner, t.c.thread_id == thread_id,
                                                 t.c.interrupt_id == interrupt_id))).all()
    return [SlackMessage(r.person, r.kind, r.channel, r.ts) for r in rows]
