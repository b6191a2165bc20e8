"""The ``/decide/<token>`` page's state: one interrupt answered from a decision link (:mod:`.links`).

The page works in any browser, without the owner's cookie (``Chat(decide_requires_owner=True)``
asks for the app's own login there). It shows the request, and answers it on the server through
:mod:`.headless`: exactly once (the answer is claimed in the thread database like any other, and
the link is marked used), with the resume run even when no chat tab is open. A used, answered or
expired link shows ``decide-done``; a tampered, unknown or foreign one ``decide-invalid``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import reflex as rx
from sqlalchemy import select

from . import headless, links, persistence, sync
from .agui import interrupt_dict
from .cards import Card, build_cards, tool_args
from .forms import FormError, payload_from_form
from .proxy_reads import tab_token
from .store import secrets as stored_secrets
from .store.schema import threads_table
from .threads_db import ThreadDB, ThreadDBError

__all__ = ["DecideState"]

log = logging.getLogger(__name__)

INVALID = "This link is not valid. Open the request in the app instead."
LOGIN = "Sign in to the app as the person this request is for, then open the link again."


@dataclass
class _Found:
    """What a token leads to."""

    phase: str  # open | done | invalid | login
    action: str = ""
    card: Card | None = None
    chat_cls: Any = None
    owner_key: str = ""
    link: links.Link | None = None
    schema: Any = None  # the interrupt's responseSchema (a form's answer is checked against it)


class DecideState(rx.State):
    """``/decide/<token>``: the request, and its answer."""

    phase: str = "loading"  # loading | open | done | invalid | login
    action: str = ""  # done: resolved | rejected | cancelled | expired | dismissed
    card: Card | None = None
    error: str = ""
    sending: bool = False

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
    async def approve(self):
        """``{"approved": true}``."""
        await self._answer("resolve", {"approved": True})

    @rx.event(background=True)
    async def reject(self):
        """``{"approved": false}``."""
        await self._answer("resolve", {"approved": False})

    @rx.event(background=True)
    async def submit(self, form_data: dict[str, Any]):
        """A schema form's answer (S22); no link is made for one with a secret (S23)."""
        form = {k: v for k, v in dict(form_data).items() if not str(k).startswith("__")}
        async with self:
            token = self._token()
        found = await _find(self, token)
        if found.phase != "open" or found.card is None:
            await self._show(found)
            return
        try:
            payload = payload_from_form(found.schema, form)
        except FormError as exc:
            async with self:
                self.error = str(exc)
            return
        await self._answer("resolve", payload)

    async def _answer(self, verb: str, payload: Any) -> None:
        async with self:
            if self.sending:
                return
            self.sending, token = True, self._token()
        found = await _find(self, token)
        if found.phase != "open" or found.link is None:
            await self._show(found)
            return
        link = found.link
        answered = await headless.answer(found.chat_cls, found.owner_key, link.thread_id, verb, payload,
                                         link.interrupt_id, link.run_id, "link")
        payload = None
        db = persistence.database()
        if answered.recorded and db is not None:
            with contextlib.suppress(ThreadDBError):  # the answer stands; the link reads as answered anyway
                await persistence.db_call(stored_secrets.use_once, db, links.token_id(token))
        if not answered.recorded and found.card is not None and found.card.kind == "form":
            async with self:
                self.error, self.sending = answered.message, False
            return
        await self._show(await _find(self, token, fresh=True))

    async def _show(self, found: _Found) -> None:
        async with self:
            self.phase, self.action, self.card, self.sending = found.phase, found.action, found.card, False
            if found.phase == "open" and found.link is not None:  # answered elsewhere: this page follows (sync.py)
                sync.watch_page(found.owner_key, tab_token(self), self.get_full_name(),
                                found.link.thread_id)

    async def follow_notice(self) -> None:
        """Inside the lock (live sync): the thread changed elsewhere; show where the request stands now."""
        if self.phase not in ("open", "done") or self.sending:  # done: the audit entry may say more now
            return
        found = await _find(self, self._token())
        self.phase, self.action, self.card = found.phase, found.action, found.card


async def _find(state: rx.State, token: str, *, fresh: bool = False) -> _Found:
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
        if chat_cls.decide_requires_owner:
            chat = await state.get_state(chat_cls)
            if await persistence.owner_of(cast("Any", chat)) != owner_key:
                return _Found("login")
        decided = await persistence.db_read(db.decisions, owner_key, link.thread_id)
        action = next((d.action for d in reversed(decided) if d.interrupt_id == link.interrupt_id), "")
        if await persistence.db_call(stored_secrets.used, db, links.token_id(token)):
            return _Found("done", action or "resolved")
        if action:
            return _Found("done", action)
        if link.expired:
            return _Found("done", "expired")
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
    if card.tool_name and not card.edit_args:  # the page shows the call's arguments
        interrupt = next(i for i in pending.interrupts if i.id == link.interrupt_id)
        card = dataclasses.replace(card, edit_args=tool_args(interrupt_dict(interrupt), session.transcript))
    return _Found("open", card=card, chat_cls=chat_cls, owner_key=owner_key, link=link,
                  schema=pending.schema_for(link.interrupt_id))


def _owner_of(db: ThreadDB, link: links.Link) -> str | None:
    """The owner key whose hash the link carries, among the owners of a thread with that id."""
    t = threads_table
    with db._transaction("find a link's thread") as conn:
        owners = [row[0] for row in conn.execute(select(t.c.owner).where(t.c.thread_id == link.thread_id))]
    return next((owner for owner in owners if links.owner_hash(owner) == link.owner_hash), None)


def _chat_of(owner_key: str) -> Any:
    name = owner_key.rsplit("|", 1)[-1]
    try:
        chat_cls = rx.State.get_class_substate(name)
    except ValueError:
        return None
    return chat_cls if hasattr(chat_cls, "decide_requires_owner") else None
