"""Who hears of a request, through which channel, and with which links (each recipient's own).

An item is queued in the notification outbox with ``channel`` set; the courier hands it to the
channel's deliverer (:data:`DELIVERERS`, filled by :mod:`.mail` and :mod:`.slack`). A deliverer is
given the item's body: the request as mail and Slack may say it (``about``: never a field of a request
that asks for a secret), the recipient's own decision links, and ``_owner`` (the asker's key: for the
server's own look-ups only, never to be written into a message). An item about a request that was
decided meanwhile is dropped unsent (:func:`still_open`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...store import channels as store_channels
from ...store import requests as store_requests
from ...store.threads_db import ThreadDBError
from ...tab import persistence, server_secret
from .. import links, notifier

if TYPE_CHECKING:
    from ...model.people import People, Person
    from ...store.requests import RequestRow

__all__ = ["DELIVERERS", "INBOX_PATH_ENV", "MAIL_FROM_ENV", "SLACK_TOKEN_ENV", "SMTP_URL_ENV", "decided",
           "deliver", "mail_configured", "reach", "slack_configured", "still_open"]

log = logging.getLogger(__name__)

SMTP_URL_ENV = "INTERRUPT_CHAT_SMTP_URL"
MAIL_FROM_ENV = "INTERRUPT_CHAT_MAIL_FROM"
SLACK_TOKEN_ENV = "INTERRUPT_CHAT_SLACK_BOT_TOKEN"
INBOX_PATH_ENV = "INTERRUPT_CHAT_INBOX_PATH"  # where a person opens their requests in the app (default /inbox)

Deliverer = Callable[[dict[str, Any]], Awaitable[bool]]
DELIVERERS: dict[str, Deliverer] = {}  # "mail", "slack", "slack-update" -> sends one item; True when done with it


def mail_configured() -> bool:
    """Mail is on: an SMTP URL and a sender."""
    return bool(os.environ.get(SMTP_URL_ENV, "").strip() and os.environ.get(MAIL_FROM_ENV, "").strip())


def slack_configured() -> bool:
    """Slack is on: a bot token."""
    return bool(os.environ.get(SLACK_TOKEN_ENV, "").strip())


def _wants(choice: str, channel: str) -> bool:
    return choice == "both" or choice == channel


def _links(row: RequestRow, person: str) -> dict[str, str]:
    """The recipient's own decision links (none for a request that asks for a secret: typed in the app)."""
    base = links.public_base()
    inbox = base + (os.environ.get(INBOX_PATH_ENV, "").strip() or "/inbox")
    if row.about.get("masked"):
        return {"open_url": inbox}
    expires = time.time() + links._hours() * 3600
    if row.expires_at is not None:
        expires = min(expires, row.expires_at.timestamp())
    url = base + links.DECIDE_PATH + links.make(row.owner, row.thread_id, row.interrupt_id, row.run_id, expires,
                                                person)
    return {"open_url": inbox, "decide_url": url, "approve_url": url + "?answer=approve",
            "reject_url": url + "?answer=reject"}


def _body(event: str, people: People, row: RequestRow, person: Person) -> dict[str, Any]:
    about = row.about or {}
    masked = bool(about.get("masked"))
    return {"event": event, "person": person.id, "person_name": person.name,
            "asker": people.name(row.asker) if row.asker else "someone", "asker_id": row.asker,
            "title": str(about.get("title") or ""), "thread_id": row.thread_id, "interrupt_id": row.interrupt_id,
            "tool": "" if masked else row.tool, "args": {} if masked else dict(about.get("args") or {}),
            "message": str(about.get("message") or ""), "masked": masked, "reason": row.reason,
            "expires_at": row.expires_at.isoformat() if row.expires_at else "",
            "assignees": list(row.assignees), "assignee_names": [people.name(a) for a in row.assignees],
            "need": row.need, "have": len(row.approvals), "_owner": row.owner, **_links(row, person.id)}


def _item_id(channel: str, event: str, row: RequestRow, person: str) -> str:
    said = json.dumps([channel, event, row.owner, row.thread_id, row.interrupt_id, row.run_id, person,
                       row.assignees])
    return hashlib.sha256(said.encode()).hexdigest()[:32]


async def reach(event: str, people: People, row: RequestRow, recipients: Sequence[str]) -> None:
    """Queue one mail and one Slack message per recipient (not the asker), as each chose."""
    mail, slack, db = mail_configured(), slack_configured(), persistence.database()
    if not (mail or slack) or db is None:
        return
    await server_secret.ready()
    items: list[dict[str, Any]] = []
    for person_id in dict.fromkeys(recipients):
        person = people.person(person_id)
        if person is None or person_id == row.asker:
            continue
        try:
            choice = await persistence.db_read(store_channels.choice_of, db, person_id)
        except ThreadDBError:
            choice = store_channels.DEFAULT_CHOICE
        body = _body(event, people, row, person)
        if mail and person.email and _wants(choice, "mail"):
            items.append({**body, "channel": "mail", "to": person.email,
                          "id": _item_id("mail", event, row, person_id)})
        if slack and person.slack and _wants(choice, "slack"):
            items.append({**body, "channel": "slack", "to": person.slack,
                          "id": _item_id("slack", event, row, person_id)})
    await notifier.queue(row.chat, items)


async def still_open(body: dict[str, Any]) -> bool:
    """Whether the request an item is about still waits (a request decided anywhere gets no more messages)."""
    db = persistence.database()
    if db is None:
        return True
    row = await persistence.db_read(store_requests.get, db, str(body.get("_owner") or ""),
                                    str(body.get("thread_id") or ""), str(body.get("interrupt_id") or ""))
    return row is not None and row.state == "open"


async def deliver(body: dict[str, Any]) -> bool:
    """The courier's side: hand one channel item to its deliverer; True when done with it (sent or dropped)."""
    channel = str(body.get("channel") or "")
    deliverer = DELIVERERS.get(channel)
    if deliverer is None:
        log.warning("channels: no deliverer for %r; the item is dropped", channel)
        return True
    if body.get("event") in ("assigned", "reminder", "escalated"):
        try:
            if not await still_open(body):
                return True
        except ThreadDBError:
            return False
    return await deliverer(body)


async def decided(row: RequestRow, action: str, actor: str, people: People) -> None:
    """A request was decided: every Slack message about it is updated in place to the outcome (no buttons)."""
    db = persistence.database()
    if db is None or not slack_configured():
        return
    try:
        messages = await persistence.db_read(store_channels.slack_messages, db, row.owner, row.thread_id,
                                             row.interrupt_id)
    except ThreadDBError:
        return
    outcome = {"resolved": "Approved", "rejected": "Rejected", "cancelled": "Withdrawn", "expired": "Expired",
               "dismissed": "Dismissed"}.get(action, action.capitalize())
    who = f" by {people.name(actor)}" if actor and action in ("resolved", "rejected") else ""
    items = [{"channel": "slack-update", "to": m.channel, "ts": m.ts, "event": "decided", "outcome": outcome,
              "text": f"{outcome}{who}: {row.tool or row.reason or 'a request'} asked by "
                      f"{people.name(row.asker) if row.asker else 'someone'}",
              "thread_id": row.thread_id, "interrupt_id": row.interrupt_id, "person": m.person,
              "id": hashlib.sha256(json.dumps(["slack-update", m.channel, m.ts]).encode()).hexdigest()[:32]}
             for m in messages]
    await notifier.queue(row.chat, items)
