"""The approvals inbox: what waits for the owner, across threads.

Every interrupt is answered in place; every frontend-tool call waiting for the owner is listed
with a way to its thread (the tool's own UI belongs to the chat that declares it).

The inbox works on the chat state's own copy of each thread (``chat._sessions``), so an answer
given here and one given in the chat meet the same tracker: the exactly-once rules hold across
both (S7, S10), and a thread another tab moved on is refreshed first.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

import reflex as rx

from . import driver, persistence, queue, routing, rule_answers
from .answers import conclude, record
from .bulk import decide_all, item_key
from .cards import Card, build_cards, steps_answer
from .forms import FormError, edited_approval, payload_from_form
from .policies import remember_fn
from .threads_db import PendingItem, ThreadDBError, WaitingToolCall
from .views import InboxSet, InboxToolRow, tool_rows, waits_for_person

if TYPE_CHECKING:
    from .state import ChatState

__all__ = ["InboxHandlers", "answer", "approve_edited", "bulk_decide", "fill", "load", "remember", "submit_form"]

ANY = "any"  # a filter's "any" option (a select's value cannot be empty)


async def load(state: rx.State, chat_cls: type[ChatState]) -> None:
    """Fill ``inbox`` with one card per waiting interrupt of the owner, newest thread first."""
    async with state:
        chat = await driver.ready(state, chat_cls)
        chat._inbox_shown = True  # live sync fills it again when a thread of the owner changes (sync.py)
        await fill(chat)


async def fill(chat: ChatState) -> None:
    """Inside the lock: the waiting threads (from the database and from memory) as cards and tool rows."""
    db, waiting = persistence.database(), dict[str, PendingItem | WaitingToolCall]()
    if db is not None and chat._owner_key:
        try:  # the thread ids, titles and waiting times; the cards come from the threads themselves
            waiting = {item.thread_id: item for item in await persistence.db_read(db.waiting, chat._owner_key)}
        except ThreadDBError as exc:
            persistence.unavailable(chat, exc)
    thread_ids = [*waiting, *(t for t, s in chat._sessions.items() if waits_for_person(s) and t not in waiting)]
    cards: list[Card] = []
    sets: list[InboxSet] = []
    tools: list[InboxToolRow] = []
    chat_cls = _chat(chat)
    for thread_id in thread_ids:
        session = await persistence.load_thread(chat, thread_id)
        if session is None or not waits_for_person(session):
            continue
        item = waiting.get(thread_id)
        raised = item.raised_at.strftime("%Y-%m-%d %H:%M") if item and item.raised_at else ""
        title = (item.title if item else "") or next(
            (m.content[:60] for m in session.transcript.messages if m.role == "user"), "New chat")
        pending = session.tracker.pending
        own = [dataclasses.replace(c, thread_id=thread_id, thread_title=title, raised=raised,
                                   key=item_key(thread_id, c.id))
               for c in build_cards(pending, session.tracker, session.transcript,
                                    await rule_answers.answered_by_rule(chat._owner_key, pending)
                                    if session.tracker.answers else (),
                                    remember_fn(chat_cls.remember))]
        slot = await routing.taker(chat, chat_cls, pending) if pending is not None and chat_cls.renderers else None
        if (pending is not None and slot is not None and slot.get_full_name() in chat_cls.renderers
                and (await chat.get_state(slot)).render_in_chat):  # S18: drawn outside the chat: the default card
            wire = pending.wire_interrupts  # the set as the chat's slot sees it (S19)
            sets.append(InboxSet(thread_id, title, raised, pending.run_id or "", slot.get_full_name(),
                                 pending.wire_event, wire[0] if wire else None, wire, own,
                                 own[0].id if own else "", own[0].reason if own else ""))
        else:
            cards += own
        tools += [InboxToolRow(thread_id, title, raised, row.id, row.name, row.args_json) for row in tool_rows(session)]
    chat.inbox_reasons = sorted({c.reason for c in cards if c.reason})
    chat.inbox_tool_names = sorted({c.tool_name for c in cards if c.tool_name})
    cards = queue.arrange(cards, chat.inbox_sort, chat.inbox_reason, chat.inbox_tool)
    # a selected request answered elsewhere meanwhile stays selected: a bulk action reports it as skipped
    chat._inbox_listed = {**{k: c for k, c in chat._inbox_listed.items() if k in chat.inbox_selected},
                          **{c.key: c for c in cards}}
    chat.inbox, chat.inbox_sets, chat.inbox_tools = cards, sets, tools


async def answer(state: rx.State, chat_cls: type[ChatState], verb: str, thread_id: str, payload: Any,
                 interrupt_id: str | None, run_id: str = "") -> None:
    """Resolve / cancel one interrupt of one thread from the inbox; resume once all are answered.

    ``run_id`` is the set the card showed (its raising run): a card left on screen while the
    thread moved on to a newer set answers nothing, even a legacy one (whose id is always "").
    The thread must be one of the owner's (ids come from the page).
    """
    async with state:
        chat = await driver.ready(state, chat_cls)
        copy = await persistence.load_thread(chat, thread_id)
        if copy is None or copy.tracker.pending is None:
            await fill(chat)
            return
        expected = run_id or copy.tracker.pending.run_id or ""
        outcome, _moved = await record(chat, thread_id, lambda pending: pending is not None and
                                       (pending.run_id or "") == expected, verb, payload, interrupt_id,
                                       lambda card_id, message: _card_error(chat, thread_id, card_id, message))
        payload = None  # S23: the tracker holds it now, in memory only
        session = chat._sessions.get(thread_id)
        if outcome is None or session is None:
            if _moved:
                await fill(chat)
            return
        if chat.thread_id == thread_id:  # the chat shows this thread: keep it in step
            await driver.publish(chat, session, full=True, starting=outcome.events is not None)
            await routing.route(state, chat_cls, session, keep_result=True)
        await fill(chat)
    await conclude(state, chat_cls, session, outcome)
    await load(state, chat_cls)


async def submit_form(state: rx.State, chat_cls: type[ChatState], form_data: dict[str, Any]) -> None:
    """An inbox card's schema form (S22); the typed secret goes straight into the answer (S23)."""
    form = dict(form_data)
    interrupt_id = str(form.pop("__interrupt_id", "") or "")
    thread_id = str(form.pop("__thread_id", "") or "")
    run_id = str(form.pop("__run_id", "") or "")
    if form.pop("__steps", None):  # a legacy value's steps checklist (issue 26 §5)
        await answer(state, chat_cls, "resolve", thread_id, steps_answer(form), interrupt_id or None, run_id)
        return
    try:
        payload = payload_from_form(await _schema(state, chat_cls, thread_id, interrupt_id), form)
    except FormError as exc:
        async with state:
            _card_error(await routing.chat_of(state, chat_cls), thread_id, interrupt_id, str(exc))
        return
    finally:
        form.clear()
    await answer(state, chat_cls, "resolve", thread_id, payload, interrupt_id or None, run_id)


async def approve_edited(state: rx.State, chat_cls: type[ChatState], form_data: dict[str, Any]) -> None:
    """An inbox card's "edit and approve" (S22)."""
    interrupt_id = str(form_data.get("__interrupt_id", "") or "")
    thread_id = str(form_data.get("__thread_id", "") or "")
    try:
        payload = edited_approval(await _schema(state, chat_cls, thread_id, interrupt_id),
                                  form_data.get("edited_args", ""))
    except FormError as exc:
        async with state:
            _card_error(await routing.chat_of(state, chat_cls), thread_id, interrupt_id, str(exc))
        return
    await answer(state, chat_cls, "resolve", thread_id, payload, interrupt_id or None,
                 str(form_data.get("__run_id", "") or ""))


async def _schema(state: rx.State, chat_cls: type[ChatState], thread_id: str, interrupt_id: str) -> Any:
    async with state:  # a fresh state (a restart) restores the owner's threads first: the schema is theirs
        session = await persistence.load_thread(await driver.ready(state, chat_cls), thread_id)
    pending = session.tracker.pending if session is not None else None
    return pending.schema_for(interrupt_id) if pending is not None else None


def _card_error(chat: ChatState, thread_id: str, interrupt_id: str, message: str) -> None:
    chat.inbox = [dataclasses.replace(c, error=message) if (c.thread_id, c.id) == (thread_id, interrupt_id) else c
                  for c in chat.inbox]


async def remember(state: rx.State, chat_cls: type[ChatState], thread_id: str, interrupt_id: str, run_id: str,
                   scope: str, effect: str) -> None:
    """An inbox card's rule button: make the rule for that thread's tool, then answer as Approve / Reject would."""
    async with state:
        chat = await driver.ready(state, chat_cls)
        owner = chat._owner_key
        found = await rule_answers.remember(chat, thread_id, interrupt_id, scope, effect)
        if isinstance(found, str):
            _card_error(chat, thread_id, interrupt_id, found)
            return
    await rule_answers.make(owner, found["tool"], scope, effect, thread_id)
    await answer(state, chat_cls, "resolve", thread_id, found["payload"], interrupt_id or None, run_id)


async def bulk_decide(state: rx.State, chat_cls: type[ChatState], verb: str) -> None:
    """Answer the selected requests (as they were listed) once each; show the result, list the inbox again."""
    async with state:
        chat = await driver.ready(state, chat_cls)
        chosen = chat.inbox_selected if chat.inbox_bulk_verb == verb else []
        cards = [chat._inbox_listed[key] for key in chosen if key in chat._inbox_listed]
        chat.inbox_bulk_verb, chat.inbox_selected, owner = "", [], chat._owner_key
    if verb not in ("approve", "reject") or not cards:
        return
    result = await decide_all(chat_cls, owner, cards, approve=verb == "approve")
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        chat.inbox_bulk = result.row()
        await fill(chat)


def _chat(state: rx.State) -> type[ChatState]:
    """The concrete chat class a mixin's handler runs on."""
    return cast("type[ChatState]", state.__class__)


class InboxHandlers(rx.State, mixin=True):
    """The chat state's inbox: its var and event handlers (a mixin of ``ChatState``)."""

    inbox: list[Card] = []  # one card per interrupt waiting for the owner, across threads
    _inbox_shown: bool = False  # this tab showed the inbox: changes elsewhere fill it again
    inbox_sets: list[InboxSet] = []  # the waiting sets the chat's own slots take (drawn by their render_fn)
    inbox_tools: list[InboxToolRow] = []  # the frontend-tool calls waiting for the owner, across threads
    inbox_count: int = 0  # requests waiting for the owner (the Inbox link's badge)
    inbox_sort: str = "expires"  # expires | oldest
    inbox_reason: str = ""  # the filters ("" = any)
    inbox_tool: str = ""
    inbox_reasons: list[str] = []  # what the filters offer
    inbox_tool_names: list[str] = []
    inbox_selected: list[str] = []  # bulk.item_key of each selected request
    _inbox_listed: dict[str, Card] = {}  # the requests listed, and the selected ones listed before
    inbox_bulk_verb: str = ""  # approve | reject while the confirmation is open
    inbox_bulk: dict[str, Any] = {}  # the last bulk action's result: done, skipped, lines

    @rx.event(background=True)
    async def load_inbox(self):
        """Fill the inbox (the inbox component's mount)."""
        await load(self, _chat(self))

    @rx.event(background=True)
    async def inbox_resolve(self, thread_id: str, payload: Any = None, interrupt_id: str | None = None,
                            run_id: str = ""):
        """Answer an interrupt of ``thread_id`` from the inbox (S6, S7); ``run_id``: the set the card showed."""
        await answer(self, _chat(self), "resolve", str(thread_id), payload, interrupt_id, str(run_id or ""))

    @rx.event(background=True)
    async def inbox_cancel(self, thread_id: str, interrupt_id: str | None = None, run_id: str = ""):
        """Abandon (legacy: dismiss) an interrupt of ``thread_id`` from the inbox (S6, S14)."""
        await answer(self, _chat(self), "cancel", str(thread_id), None, interrupt_id, str(run_id or ""))

    @rx.event(background=True)
    async def inbox_submit_form(self, form_data: dict[str, Any]):
        """An inbox card's schema form (S22)."""
        await submit_form(self, _chat(self), form_data)

    @rx.event(background=True)
    async def inbox_approve_edited(self, form_data: dict[str, Any]):
        """An inbox card's "edit and approve" (S22)."""
        await approve_edited(self, _chat(self), form_data)

    @rx.event(background=True)
    async def load_count(self):
        """Restore the owner's threads if this tab has not: the Inbox link's badge counts what waits, live."""
        async with self:
            await driver.ready(self, _chat(self))

    @rx.event(background=True)
    async def inbox_remember(self, thread_id: str, interrupt_id: str, run_id: str, scope: str, effect: str):
        """An inbox card's "allow in this thread" / "always allow" / "always deny" (P1)."""
        await remember(self, _chat(self), str(thread_id), str(interrupt_id), str(run_id or ""), str(scope),
                       str(effect))

    @rx.event(background=True)
    async def inbox_arrange(self, sort: str = "", reason: str | None = None, tool: str | None = None):
        """Sort the queue (``expires`` | ``oldest``) or filter it by reason and tool ("" = any)."""
        async with self:
            if sort in queue.SORTS:
                self.inbox_sort = sort
            if reason is not None:
                self.inbox_reason = "" if reason == ANY else str(reason)
            if tool is not None:
                self.inbox_tool = "" if tool == ANY else str(tool)
            await fill(await driver.ready(self, _chat(self)))

    @rx.event
    def inbox_toggle(self, key: str):
        """Select a request, or unselect it (its checkbox, or Space on its row)."""
        key = str(key)
        self.inbox_selected = ([k for k in self.inbox_selected if k != key] if key in self.inbox_selected
                               else [*self.inbox_selected, key])

    @rx.event
    def inbox_select_all(self, checked: bool):
        """Select every listed request, or none."""
        self.inbox_selected = [c.key for c in self.inbox] if checked else []

    @rx.event
    def inbox_bulk_ask(self, verb: str):
        """Approve / reject selected: open the confirmation (it states the count)."""
        if self.inbox_selected and verb in ("approve", "reject"):
            self.inbox_bulk_verb = verb

    @rx.event
    def inbox_bulk_close(self):
        """The confirmation's "no"."""
        self.inbox_bulk_verb = ""

    @rx.event(background=True)
    async def inbox_bulk_run(self, verb: str):
        """The confirmation's "yes": answer each selected request once (``bulk.decide_all``)."""
        await bulk_decide(self, _chat(self), str(verb))
