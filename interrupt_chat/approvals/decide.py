"""The ``/decide/<token>`` page's state: one interrupt answered from a decision link (:mod:`.links`).

The page works in any browser, without the owner's cookie (``Chat(decide_requires_owner=True)``
asks for the app's own login there). It shows the request; an approval (a request that Approve /
Reject answers whole, :func:`~interrupt_chat.model.policies.approval_payload`) it answers on the server
through :mod:`.headless`: exactly once (the answer is claimed in the thread database like any
other, and the link is marked used), with the resume run even when no chat tab is open. Any other
request (a form, a choice) is shown with a link to open the app: an approve or reject sent for it
anyway is refused and nothing reaches the agent. A used, answered or expired link shows
``decide-done``; a tampered, unknown or foreign one ``decide-invalid``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast
from urllib.parse import urlsplit

import reflex as rx
from ag_ui.core import Interrupt
from reflex.istate.proxy import StateProxy
from sqlalchemy import select

from ..agui import interrupt_dict
from ..model.cards import REASON_MAX, Card, build_cards, tool_args
from ..model.policies import approval_payload
from ..model.protocols import StateLike
from ..store import secrets as stored_secrets
from ..store.audit import NOT_DECISIONS
from ..store.schema import threads_table
from ..store.threads_db import ThreadDB, ThreadDBError
from ..tab import persistence
from ..tab.answers import CALL_CHANGED
from ..workers import lane, sync
from ..workers.proxy_reads import tab_token
from . import headless, links, risks
from .people import deciding as people_deciding
from .people import views as people_views

__all__ = ["DecideState", "already"]

log = logging.getLogger(__name__)

INVALID = "This link is not valid. Open the request in the app instead."
LOGIN = "Sign in to the app as the person this request is for, then open the link again."
IN_APP = "Answer this request in the app."
_ACTIONS = {"resolved": "approved", "rejected": "rejected", "cancelled": "cancelled", "dismissed": "dismissed"}
_BY = {"person": "in the app", "bulk": "in a bulk decision from the inbox", "policy": "by a rule",
       "link": "through a decision link", "expiry": "when it expired"}


def already(action: str, at: datetime | None, by: str) -> str:
    """What a link that was answered before says: how, when (UTC) and by whom (the audit's ``by``)."""
    when = f" on {at.astimezone(UTC):%Y-%m-%d at %H:%M} UTC" if at is not None else ""
    if action == "expired":
        return f"This request expired{when}." if by in ("", "expiry") else f"This request was cancelled{when}."
    how = _ACTIONS.get(action, "answered")
    return f"This request was already answered: {how}{when} {_BY.get(by, 'in the app')}."


@dataclass
class _Found:
    """What a token leads to."""

    phase: str  # open | done | invalid | login
    action: str = ""
    card: Card | None = None
    chat_cls: Any = None
    owner_key: str = ""
    link: links.Link | None = None
    interrupt: Interrupt | None = None  # what Approve / Reject answer (only an approval: approval_payload)
    again: str = ""  # done before this page answered it: how, when and by whom (:func:`already`)
    viewer: str = ""  # people: whose decision this page gives (the link's recipient, else the signed-in person)


class DecideState(rx.State):
    """``/decide/<token>``: the request, and its answer."""

    phase: str = "loading"  # loading | open | done | invalid | login
    action: str = ""  # done: resolved | rejected | cancelled | expired | dismissed
    card: Card | None = None
    error: str = ""
    sending: bool = False
    again: str = ""  # done, and not by this page's own click: how, when and by whom

    def _token(self) -> str:
        path = urlsplit(str(self.router.url)).path.rstrip("/")
        return path.rsplit("/", 1)[-1] if "/decide/" in f"{path}/" else ""

    @rx.event(background=True)
    async def load(self):
        """The page's load: what the link asks, or why it cannot be answered."""
        async with self:
            token = self._token()
        found = await _find(self, token)
        async with self:
            self.error = ""
        await self._show(found)

    @rx.event(background=True)
    async def approve(self, shown: str = ""):
        """Approve an approval: ``{"approved": true}``, shaped as its schema asks.

        ``shown``: the call the page showed (its card's ``call_hash``, §6.4).
        """
        await self._answer("allow", "", str(shown or ""))

    @rx.event(background=True)
    async def reject(self, reason: str = "", shown: str = ""):
        """Reject an approval: ``{"approved": false}``, shaped as its schema asks.

        ``reason``: typed in ``interrupt-reject-reason`` or a reject option; sent as the answer's ``reason``
        when the schema takes one (the card's ``reason_box``), left out when blank.
        """
        await self._answer("deny", str(reason or ""), str(shown or ""))

    async def _answer(self, effect: str, reason: str = "", shown: str = "") -> None:
        """Answer the link's request, if Approve / Reject answer it whole; anything else is refused unsent.

        A person waits on this page: the other chats' streams on this worker wait until the agent has
        the resume (a hold, handed to the resume's run: docs/decisions/0037), as for a click in the app.
        """
        async with self:
            if self.sending:
                return
            self.sending, token = True, self._token()
        with lane.first(tab_token(self)):
            await self._decide(token, effect, reason, shown)

    async def _decide(self, token: str, effect: str, reason: str, shown: str) -> None:
        found = await _find(self, token)
        payload = approval_payload(found.interrupt, effect) if found.interrupt is not None else None
        if shown and found.card is not None and found.card.call_hash != shown:  # the agent changed it since (§6.4)
            await self._show(found)
            async with self:
                self.error = CALL_CHANGED
            return
        said = reason.strip()[:REASON_MAX] if effect == "deny" else ""
        if payload is not None and said and found.card is not None and found.card.reason_box:  # the schema takes it
            payload["reason"] = said
        if found.phase != "open" or found.link is None or payload is None:  # a form, a choice: typed in the app
            await self._show(found)
            if found.phase == "open":
                async with self:
                    self.error = IN_APP
            return
        link = found.link
        if found.card is not None and found.card.routed and found.card.assignee:  # people: the viewer decides, or none
            await self._as_person(found, token, payload, shown)
            return
        answered = await headless.answer(found.chat_cls, found.owner_key, link.thread_id, "resolve", payload,
                                         link.interrupt_id, link.run_id, "link", shown=shown)
        db = persistence.database()
        if answered.recorded and db is not None:
            with contextlib.suppress(ThreadDBError):  # the answer stands; the link reads as answered anyway
                await persistence.db_call(stored_secrets.use_once, db, link.use_id)
        found = await _find(self, token, fresh=True)
        if answered.recorded and found.phase == "done":  # this answer won: say which (its audit entry may lag)
            found.action, found.again = "rejected" if effect == "deny" else "resolved", ""
        await self._show(found)

    async def _as_person(self, found: _Found, token: str, payload: Any, shown: str = "") -> None:
        """A request between people: answered as the signed-in person, who must be one it waits for."""
        link = found.link
        assert link is not None
        viewer = found.viewer
        names = found.card.assignee_names if found.card is not None else ""
        refusal = await people_deciding.as_assignee(viewer, found.chat_cls, found.owner_key, link.thread_id,
                                                    link.interrupt_id, link.run_id, "resolve", payload, "link",
                                                    shown=shown) \
            if viewer and viewer != found.owner_key else people_deciding.NOT_YOURS.format(names=names)
        # not marked used: a partial approval leaves the request open, and a second click of one person counts once
        again = await _find(self, token, fresh=True)
        await self._show(again)
        async with self:
            self.error = refusal

    async def _show(self, found: _Found) -> None:
        async with self:
            self.phase, self.action, self.card, self.sending = found.phase, found.action, found.card, False
            self.again = found.again
            if found.phase == "open" and found.link is not None:  # answered elsewhere: this page follows (sync.py)
                sync.watch_page(found.owner_key, tab_token(self), self.get_full_name(),
                                found.link.thread_id)

    async def follow_notice(self) -> None:
        """Inside the lock (live sync): the thread changed elsewhere; show where the request stands now."""
        if self.phase not in ("open", "done") or self.sending:  # done: the audit entry may say more now
            return
        found = await _find(self, self._token())
        own = self.phase == "done" and not self.again  # this page's click answered it: it keeps saying so
        self.phase, self.action, self.card = found.phase, found.action, found.card
        self.again = "" if own else found.again


async def _find(state: StateLike, token: str, *, fresh: bool = False) -> _Found:
    """Where a token leads: the open request, or done (and how), or invalid."""
    link = links.parse(token) if token else None
    db = persistence.database()
    if link is None or db is None:
        return _Found("invalid")
    try:
        owner_key = await persistence.db_read(_owner_of, db, link)
        if owner_key is None:
            return _Found("invalid")
        chat_cls = _chat_of(owner_key)
        if chat_cls is None:
            return _Found("invalid")
        recipient = f"{link.person}|{chat_cls.get_full_name()}" if link.person else ""
        signed = await _viewer(state, chat_cls) \
            if chat_cls.decide_requires_owner or (chat_cls.people is not None and not recipient) else ""
        if chat_cls.decide_requires_owner and signed not in (owner_key, recipient):
            return _Found("login")
        decided = await persistence.db_read(db.decisions, owner_key, link.thread_id)
        record = next((d for d in reversed(decided) if d.interrupt_id == link.interrupt_id
                       and d.action not in NOT_DECISIONS), None)  # a shadow rule's verdict decided nothing
        action = record.action if record is not None else ""
        again = already(action or "resolved", record.at, record.by) if record is not None else ""
        if await persistence.db_call(stored_secrets.used, db, link.use_id):
            return _Found("done", action or "resolved", again=again or already("resolved", None, "link"))
        if action:
            return _Found("done", action, again=again)
        if link.expired:
            return _Found("done", "expired", again=already("expired", None, ""))
        stored = await persistence.db_read(db.read, owner_key, link.thread_id)
    except ThreadDBError:
        return _Found("invalid")
    session = stored.session if stored is not None else None
    pending = session.tracker.pending if session is not None else None
    if session is None or pending is None or (pending.run_id or "") != link.run_id \
            or link.interrupt_id not in pending.ids:
        return _Found("done", "resolved")
    entry = session.tracker.answers.get(link.interrupt_id)
    if entry is not None:  # answered, its audit entry not written yet: say how from the answer itself
        payload = entry.payload
        return _Found("done", "cancelled" if entry.status == "cancelled" else "rejected"
                      if isinstance(payload, dict) and payload.get("approved") is False else "resolved")
    card = next((c for c in build_cards(pending, session.tracker, session.transcript) if c.id == link.interrupt_id),
                None)
    if card is None:
        return _Found("done", "resolved")
    interrupt = next(i for i in pending.interrupts if i.id == link.interrupt_id)
    if card.tool_name and not card.edit_args:  # the page shows the call's arguments
        card = dataclasses.replace(card, edit_args=tool_args(interrupt_dict(interrupt), session.transcript))
    card = risks.rate(chat_cls, pending, session.transcript, link.thread_id, session.tracker.now(), [card])[0]
    viewer = recipient or signed
    if chat_cls.people is not None:  # a request between people: only its asker, assignees and delegates see it
        seen = await people_views.on_link(chat_cls, owner_key, link.thread_id, card, viewer)
        if seen is None:
            return _Found("login")
        card = seen
    return _Found("open", card=card, chat_cls=chat_cls, owner_key=owner_key, link=link, interrupt=interrupt,
                  viewer=viewer)


async def _viewer(state: StateLike, chat_cls: Any) -> str:
    """Who opened the page, as ``chat_cls`` names its person (their owner key; "" for nobody).

    The chat's state is read under the page's lock: a background event's proxy is entered for it (live
    sync's ``follow_notice`` holds the lock already).
    """
    if isinstance(state, StateProxy) and not state._is_mutable():
        async with state:
            return await persistence.owner_of(cast("Any", await state.get_state(chat_cls)))
    return await persistence.owner_of(cast("Any", await state.get_state(chat_cls)))


def _owner_of(db: ThreadDB, link: links.Link) -> str | None:
    """The owner key whose hash the link carries, among the owners of a thread with that id."""
    t = threads_table
    with db._transaction("find a link's thread") as conn:
        owners = [row[0] for row in conn.execute(select(t.c.owner).where(t.c.thread_id == link.thread_id))]
    return next((owner for owner in owners if hmac.compare_digest(links.owner_hash(owner).encode(),
                                                                 link.owner_hash.encode())), None)


def _chat_of(owner_key: str) -> Any:
    name = owner_key.rsplit("|", 1)[-1]
    try:
        chat_cls = rx.State.get_class_substate(name)
    except ValueError:
        return None
    return chat_cls if hasattr(chat_cls, "decide_requires_owner") else None
