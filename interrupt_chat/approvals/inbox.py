"""The approvals inbox: what waits for the owner, across threads.

Every interrupt is answered in place; every frontend-tool call waiting for the owner is listed
with a way to its thread (the tool's own UI belongs to the chat that declares it).

The inbox lists a page at a time (:data:`PAGE_SIZE` rows), built from the database's rows: the
waiting threads and their revisions on every load, a thread's pending set and the tool calls it
names only when its revision is new to the process. No thread is loaded whole to be listed.

An answer given here works on the chat state's own copy of its thread (``chat._sessions``), so an
answer given here and one given in the chat meet the same tracker: the exactly-once rules hold
across both (S7, S10), and a thread another tab moved on is refreshed first. An answer is taken
as one to the set the page showed (its run), never to a newer one.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import reflex as rx

from ..agui import AgentSession, InterruptTracker, Pending, Transcript, interrupt_dict
from ..agui.message_views import ToolCallView
from ..agui.sanitize import short_text
from ..model import queue
from ..model.cards import Card, build_cards, refresh_expiry, steps_answer
from ..model.forms import FormError, edited_approval, payload_from_form
from ..model.policies import remember_fn, tool_name
from ..model.views import InboxSet, InboxToolRow, ToolWaitRow, tool_rows, waits_for_person
from ..store import inbox as store_inbox
from ..store.threads_db import ThreadDBError
from ..tab import driver, persistence, routing
from ..tab.answers import CALL_CHANGED, conclude, record
from ..workers import lane, sync
from ..workers.proxy_reads import tab_token
from . import risks, rule_answers
from .bulk import decide_all, item_key
from .people import deciding as people_deciding
from .people import listing as people_listing

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, StateLike
    from ..store.requests import RequestRow

__all__ = ["MAX_SELECTED", "PAGE_SIZE", "InboxHandlers", "answer", "approve_edited", "bulk_decide", "fill", "load",
           "remember", "submit_form"]

log = logging.getLogger(__name__)

ANY = "any"  # a filter's "any" option (a select's value cannot be empty)
PAGE_SIZE = 50  # rows of one inbox page
MAX_SELECTED = 500  # requests one bulk action takes at most
BUILT_THREADS = 4096  # waiting threads whose cards a process keeps built (all owners)
NOT_SHOWN = "This request is not listed here any more: reload the inbox."


async def load(state: StateLike, chat_cls: type[ChatLike]) -> None:
    """Fill ``inbox`` with one page of what waits for the owner (the inbox's mount)."""
    async with state:
        chat = await driver.ready(state, chat_cls)
        chat._inbox_shown = True  # live sync fills it again when a thread of the owner changes (sync.py)
        sync.watch(chat)  # on this worker too: a state restored from Redis on another worker shows no thread here
        await fill(chat)


@dataclass
class _Built:
    """A waiting thread as the inbox lists it at one revision (shared by the tabs of a process).

    ``stubs`` carry what the order and the filters need (id, reason, tool, expiry, run); the whole
    cards (forms, arguments, checked schemas: the costly part) are built when a page shows the thread.
    """

    revision: int
    tracker: InterruptTracker
    transcript: Transcript
    hide: frozenset[str]  # interrupts a rule answered (not listed, P2)
    stubs: tuple[Card, ...]
    tools: tuple[tuple[str, str, str], ...]  # waiting tool calls: id, name, arguments as JSON
    cards: dict[str, Card] | None = None

    @property
    def pending(self) -> Pending | None:
        return self.tracker.pending


@dataclass(frozen=True)
class _Waiting:
    thread_id: str
    title: str
    raised: str
    built: _Built


# (owner key, thread id) -> what its revision shows; a thread read once is not read again until it changes
_BUILT: OrderedDict[tuple[str, str], _Built] = OrderedDict()


async def fill(chat: ChatLike) -> None:
    """Inside the lock: one page of the owner's waiting requests, built from the database's summaries.

    Every load reads which threads wait and at which revision (one small query); a thread is read
    (its pending set and the tool calls it names, never its whole history) only when its revision
    is new to this process. Only the shown page is in the tab's state.
    """
    chat_cls = _chat(chat)
    waiting = await _waiting(chat, chat_cls)
    team = await people_listing.listing(chat)  # a chat with people: the scope, and others' requests I decide
    foreign = await _foreign(chat, chat_cls, team.foreign) if team is not None else []
    chat._inbox_foreign = {w.thread_id: asker for asker, w in foreign}
    assigned = {(r.thread_id, r.interrupt_id) for r in team.foreign} if team is not None else set()
    waiting += [w for _asker, w in foreign]
    rows = {row.thread_id: row for row in waiting}
    now = datetime.now(UTC)
    cards: list[Card] = []
    tools: list[InboxToolRow] = []
    for row in waiting:
        theirs = row.thread_id in chat._inbox_foreign
        kept = [c for c in row.built.stubs if ((row.thread_id, c.id) in assigned if theirs else
                                               team is None or team.shows_own(row.thread_id, c.id))]
        cards += [dataclasses.replace(c, thread_id=row.thread_id, thread_title=row.title, raised=row.raised,
                                      key=item_key(row.thread_id, c.id)) for c in kept]
        tools += [InboxToolRow(row.thread_id, row.title, row.raised, *tool) for tool in row.built.tools if not theirs]
    chat.inbox_reasons = sorted({c.reason for c in cards if c.reason})
    chat.inbox_tool_names = sorted({c.tool_name for c in cards if c.tool_name})
    listed: list[Card | InboxToolRow] = [*queue.arrange(cards, chat.inbox_sort, chat.inbox_reason, chat.inbox_tool),
                                         *tools]
    pages = max(1, -(-len(listed) // PAGE_SIZE))
    chat.inbox_page = min(max(chat.inbox_page, 0), pages - 1)
    chat.inbox_total = len(listed)
    shown = listed[chat.inbox_page * PAGE_SIZE:(chat.inbox_page + 1) * PAGE_SIZE]
    page_cards = [refresh_expiry(_whole(chat_cls, rows[c.thread_id], c), now)
                  for c in shown if isinstance(c, Card)]
    if team is not None:
        page_cards = [await team.seen(chat, c, c.thread_id in chat._inbox_foreign) for c in page_cards]
    sets, taken = await _custom_sets(chat, chat_cls, rows, [c for c in page_cards
                                                            if c.thread_id not in chat._inbox_foreign])
    page_cards = [c for c in page_cards if c.thread_id not in taken]
    # a custom slot's requests are rows too: selected, counted and bulk-answered like the cards (not answered ones)
    selectable = [*(c for c in page_cards if c.can_decide), *(c for e in sets for c in e.cards if not c.answered)]
    # a selected request answered elsewhere meanwhile stays selected: a bulk action reports it as skipped
    chat._inbox_listed = {**{k: c for k, c in chat._inbox_listed.items() if k in chat.inbox_selected},
                          **{c.key: c for c in selectable}}
    chat.inbox_selectable = [c.key for c in selectable]
    # the set each shown row belongs to: an answer that names no run is taken as an answer to it
    chat._inbox_runs = {**{c.thread_id: c.run_id for c in page_cards}, **{e.thread_id: e.run_id for e in sets}}
    chat.inbox, chat.inbox_sets = page_cards, sets
    chat.inbox_tools = [t for t in shown if isinstance(t, InboxToolRow)]
    chat.inbox_loaded = True


async def _waiting(chat: ChatLike, chat_cls: type[ChatLike]) -> list[_Waiting]:
    """Every thread that waits for the owner, newest wait first: the database's, then those only in memory.

    This tab's own copy of a thread is used when it is as new as the database's (it may hold an
    answer whose save is under way); the others are built from the database's rows.
    """
    db, owner, heads = persistence.database(), chat._owner_key, list[store_inbox.WaitingHead]()
    stored, sessions = db is not None and bool(owner), chat._sessions
    if db is not None and owner:
        try:
            heads = await persistence.db_read(store_inbox.waiting_heads, db, owner)
            missing = [h.thread_id for h in heads if not _mine(sessions, h) and _cached(owner, h) is None]
            for body in await persistence.db_read(store_inbox.waiting_bodies, db, owner, missing) if missing else []:
                built = await _from_body(chat_cls, owner, body)
                if built is not None:
                    _keep(owner, body.thread_id, built)
        except ThreadDBError as exc:
            persistence.unavailable(chat, exc)
            stored = False
    rows = []
    for head in heads:
        title, raised = head.title or "New chat", _minutes(head.raised_at)
        if _mine(sessions, head):
            session = sessions[head.thread_id]
            if waits_for_person(session):
                rows.append(_Waiting(head.thread_id, title, raised, await _of_session(chat_cls, owner, session)))
        elif (built := _cached(owner, head)) is not None and (built.stubs or built.tools):
            rows.append(_Waiting(head.thread_id, title, raised, built))
    listed = {h.thread_id for h in heads}
    for thread_id, session in sessions.items():  # never saved, or the database is away: memory's copy
        if thread_id not in listed and waits_for_person(session) and (not stored or not session.revision):
            title = next((m.content[:60] for m in session.transcript.messages if m.role == "user"), "New chat")
            rows.append(_Waiting(thread_id, title, "", await _of_session(chat_cls, owner, session)))
    return rows


async def _foreign(chat: ChatLike, chat_cls: type[ChatLike], assigned: list[RequestRow]
                   ) -> list[tuple[str, _Waiting]]:
    """Other people's threads with a request assigned to this person: (the asker's key, the waiting thread)."""
    db = persistence.database()
    threads: dict[str, dict[str, RequestRow]] = {}
    for row in assigned:
        threads.setdefault(row.owner, {}).setdefault(row.thread_id, row)
    out: list[tuple[str, _Waiting]] = []
    if db is None or team_people(chat_cls) is None:
        return out
    try:
        for asker, first in threads.items():
            for body in await persistence.db_read(store_inbox.waiting_bodies, db, asker, list(first)):
                built = await _from_body(chat_cls, asker, body)
                row = first[body.thread_id]
                if built is not None and built.pending is not None and built.pending.run_id == row.run_id:
                    title = f"{team_people(chat_cls).name(row.asker) if row.asker else 'Someone'}: " \
                            f"{row.tool or row.reason or 'a request'}"
                    out.append((asker, _Waiting(body.thread_id, title, _minutes(row.surfaced_at), built)))
    except ThreadDBError as exc:
        persistence.unavailable(chat, exc)
    return out


def team_people(chat_cls: Any) -> Any:
    """The chat's people (None without)."""
    return getattr(chat_cls, "people", None)


def _mine(sessions: dict[str, AgentSession], head: store_inbox.WaitingHead) -> bool:
    session = sessions.get(head.thread_id)
    return session is not None and session.revision >= head.revision


async def _of_session(chat_cls: type[ChatLike], owner: str, session: AgentSession) -> _Built:
    return await _build(chat_cls, owner, session.revision, session.tracker, session.transcript, tool_rows(session))


def _cached(owner: str, head: store_inbox.WaitingHead) -> _Built | None:
    built = _BUILT.get((owner, head.thread_id))
    if built is None or built.revision != head.revision:
        return None
    _BUILT.move_to_end((owner, head.thread_id))
    return built


def _keep(owner: str, thread_id: str, built: _Built) -> None:
    _BUILT[(owner, thread_id)] = built
    _BUILT.move_to_end((owner, thread_id))
    while len(_BUILT) > BUILT_THREADS:
        _BUILT.popitem(last=False)


async def _from_body(chat_cls: type[ChatLike], owner: str, body: store_inbox.WaitingBody) -> _Built | None:
    """A stored thread's cards, from its pending set and the tool calls it names (no session is rebuilt)."""
    tracker = InterruptTracker()
    try:
        tracker.restore(body.tracker)
    except ValueError as exc:  # the thread's own load reports it; the inbox skips it
        log.warning("inbox: skipping the unreadable pending set of thread %.80r (%s)", body.thread_id,
                    short_text(exc, 200))
        return None
    transcript = Transcript()
    for call_id, (name, args) in body.calls.items():
        transcript.tool_calls[call_id] = ToolCallView(call_id, name, "", [args], ended=True)
    waits = [ToolWaitRow(str(w.get("toolCallId") or ""), str(w.get("name") or ""), w.get("args"),
                         json.dumps(w.get("args"), indent=2), w.get("cancellable") is not False)
             for w in body.tool_waits]
    return await _build(chat_cls, owner, body.revision, tracker, transcript, waits)


async def _build(chat_cls: type[ChatLike], owner: str, revision: int, tracker: InterruptTracker,
                 transcript: Transcript, waits: list[ToolWaitRow]) -> _Built:
    pending = tracker.pending
    hide = frozenset(await rule_answers.answered_by_rule(owner, pending) if tracker.answers else ())
    tools = tuple((w.id, w.name, w.args_json) for w in waits)
    if pending is None or pending.kind == "legacy":  # one card, cheap to build whole
        cards = build_cards(pending, tracker, transcript, hide, remember_fn(chat_cls.remember))
        return _Built(revision, tracker, transcript, hide, tuple(cards), tools, {c.id: c for c in cards})
    stubs = tuple(Card(i.id, str(i.reason or ""), "", "", tool_name=tool_name(i, transcript),
                       expires_at=str(interrupt_dict(i).get("expiresAt") or ""), run_id=pending.run_id or "")
                  for i in pending.interrupts if i.id not in hide)
    return _Built(revision, tracker, transcript, hide, stubs, tools)


def _whole(chat_cls: type[ChatLike], row: _Waiting, stub: Card) -> Card:
    """The whole card of a listed stub (its thread's cards are built once per revision, when first shown)."""
    return dataclasses.replace(_cards_of(chat_cls, row.built, stub.thread_id).get(stub.id, stub),
                               thread_id=stub.thread_id,
                               thread_title=stub.thread_title, raised=stub.raised, key=stub.key)


def _cards_of(chat_cls: type[ChatLike], built: _Built, thread_id: str = "") -> dict[str, Card]:
    if built.cards is None:
        cards = build_cards(built.pending, built.tracker, built.transcript, built.hide, remember_fn(chat_cls.remember))
        built.cards = {c.id: c for c in risks.rate(chat_cls, built.pending, built.transcript, thread_id,
                                                   built.tracker.now(), cards)}
    return built.cards


async def _custom_sets(chat: ChatLike, chat_cls: type[ChatLike], rows: dict[str, _Waiting],
                       cards: list[Card]) -> tuple[list[InboxSet], set[str]]:
    """The shown threads whose set one of the chat's own slots takes (S18, S20): drawn by its ``render_fn``."""
    sets: list[InboxSet] = []
    if not chat_cls.renderers:
        return sets, set()
    for thread_id in dict.fromkeys(c.thread_id for c in cards):
        row = rows[thread_id]
        pending = row.built.pending
        slot = await routing.taker(chat, chat_cls, pending) if pending is not None else None
        if (pending is not None and slot is not None and slot.get_full_name() in chat_cls.renderers
                and (await chat.get_state(slot)).render_in_chat):
            own = [dataclasses.replace(c, thread_id=thread_id, thread_title=row.title, raised=row.raised,
                                       key=item_key(thread_id, c.id)) for c in _cards_of(chat_cls, row.built).values()]
            wire = pending.wire_interrupts  # the set as the chat's slot sees it (S19)
            sets.append(InboxSet(thread_id, row.title, row.raised, pending.run_id or "", slot.get_full_name(),
                                 pending.wire_event, wire[0] if wire else None, wire, own,
                                 own[0].id if own else "", own[0].reason if own else ""))
    return sets, {e.thread_id for e in sets}


def _minutes(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


async def answer(state: StateLike, chat_cls: type[ChatLike], verb: str, thread_id: str, payload: Any,
                 interrupt_id: str | None, run_id: str = "", *, shown: str = "") -> None:
    """Resolve / cancel one interrupt of one thread from the inbox; resume once all are answered.

    ``run_id`` is the set the card showed (its raising run): a card left on screen while the
    thread moved on to a newer set answers nothing, even a legacy one (whose id is always "").
    Without one, the set this tab's inbox showed for the thread is meant (never the thread's
    newest set); a thread it did not show answers nothing. The thread must be one of the owner's
    (ids come from the page). ``shown``: the card's ``call_hash`` (§6.4; not checked here yet).
    """
    with lane.first(tab_token(state)) as hold:  # other chats' streams wait till the agent has the resume (0037)
        async with state:
            chat = await driver.ready(state, chat_cls)
            asker = chat._inbox_foreign.get(thread_id) if not chat.signed_out else None
        if asker is not None:  # someone else's request, assigned to this person (people)
            refusal = await people_deciding.as_assignee(chat._owner_key, chat_cls, asker, thread_id,
                                                        str(interrupt_id or ""), run_id, verb, payload, shown=shown)
            payload = None  # S23
            async with state:
                chat = await driver.ready(state, chat_cls)
                await fill(chat)
                if refusal:
                    _card_error(chat, thread_id, str(interrupt_id or ""), refusal)
            return
        async with state:
            chat = await driver.ready(state, chat_cls)
            copy = await persistence.load_thread(chat, thread_id)
            if copy is None or copy.tracker.pending is None:
                await fill(chat)
                return
            expected = run_id if run_id else chat._inbox_runs.get(thread_id)
            if expected is None:  # no run named, and no row of it shown: never take the newest set for it
                await fill(chat)
                _card_error(chat, thread_id, str(interrupt_id or ""), NOT_SHOWN)
                return
            outcome, _moved = await record(chat, thread_id, lambda pending: pending is not None and
                                           (pending.run_id or "") == expected, verb, payload, interrupt_id,
                                           lambda card_id, message: _card_error(chat, thread_id, card_id, message),
                                           shown=shown)
            payload = None  # S23: the tracker holds it now, in memory only
            session = chat._sessions.get(thread_id)
            if outcome is None or session is None:
                if _moved:
                    await fill(chat)
                    if chat.notice == CALL_CHANGED:  # the new call is listed: say why the answer was not sent
                        _card_error(chat, thread_id, str(interrupt_id or ""), CALL_CHANGED)
                return
            if chat.thread_id == thread_id:  # the chat shows this thread: keep it in step
                await driver.publish(chat, session, full=True, starting=outcome.events is not None)
                await routing.route(state, chat_cls, session, keep_result=True)
            await fill(chat)
        if outcome.events is None:
            hold.close()  # nothing goes to the agent: the card is drawn
        await conclude(state, chat_cls, session, outcome)
        await load(state, chat_cls)


async def submit_form(state: StateLike, chat_cls: type[ChatLike], form_data: dict[str, Any]) -> None:
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


async def approve_edited(state: StateLike, chat_cls: type[ChatLike], form_data: dict[str, Any]) -> None:
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


async def _schema(state: StateLike, chat_cls: type[ChatLike], thread_id: str, interrupt_id: str) -> Any:
    async with state:  # a fresh state (a restart) restores the owner's threads first: the schema is theirs
        session = await persistence.load_thread(await driver.ready(state, chat_cls), thread_id)
    pending = session.tracker.pending if session is not None else None
    return pending.schema_for(interrupt_id) if pending is not None else None


def show_card_error(chat: ChatLike, thread_id: str, interrupt_id: str, message: str) -> None:
    """Inside the lock: say why an answer from an inbox card was refused, on that card."""
    _card_error(chat, thread_id, interrupt_id, message)


def _card_error(chat: ChatLike, thread_id: str, interrupt_id: str, message: str) -> None:
    """Say why an answer was refused on its card: a default card's, or one of a custom slot's set (``slot.error``)."""
    def said(card: Card) -> Card:
        return dataclasses.replace(card, error=message) if (card.thread_id, card.id) == (thread_id, interrupt_id) \
            else card

    chat.inbox = [said(c) for c in chat.inbox]
    chat.inbox_sets = [dataclasses.replace(e, cards=[said(c) for c in e.cards]) if e.thread_id == thread_id else e
                       for e in chat.inbox_sets]


async def remember(state: StateLike, chat_cls: type[ChatLike], thread_id: str, interrupt_id: str, run_id: str,
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


async def bulk_decide(state: StateLike, chat_cls: type[ChatLike], verb: str) -> None:
    """Answer the selected requests (as they were listed) once each; show the result, list the inbox again."""
    async with state:
        chat = await driver.ready(state, chat_cls)
        chosen = chat.inbox_selected if chat.inbox_bulk_verb == verb else []
        cards = [chat._inbox_listed[key] for key in chosen if key in chat._inbox_listed]
        chat.inbox_bulk_verb, chat.inbox_selected, owner = "", [], chat._owner_key
        theirs = dict(chat._inbox_foreign)
        if verb in ("approve", "reject"):  # an inbox of several chats runs each one's: no old result adds up
            chat.inbox_bulk = {}
    if verb not in ("approve", "reject") or not cards:
        return
    result = await decide_all(chat_cls, owner, cards, approve=verb == "approve", theirs=theirs)
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        chat.inbox_bulk = result.row()
        await fill(chat)


def _chat(state: StateLike) -> type[ChatLike]:
    """The concrete chat class a mixin's handler runs on."""
    return cast("type[ChatLike]", state.__class__)


class InboxHandlers(rx.State, mixin=True):
    """The chat state's inbox: its var and event handlers (a mixin of ``ChatState``)."""

    inbox: list[Card] = []  # the shown page's cards: one per interrupt waiting for the owner, across threads
    inbox_loaded: bool = False  # a load answered: until then the page shows that it loads, not "nothing waits"
    inbox_page: int = 0  # the shown page (0-based), of PAGE_SIZE rows
    inbox_total: int = 0  # rows on every page (after the filters)
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
    inbox_selectable: list[str] = []  # the keys "Select all" takes: the shown page's cards and custom slots' requests
    _inbox_listed: dict[str, Card] = {}  # the requests listed, and the selected ones listed before
    _inbox_runs: dict[str, str] = {}  # thread id -> the run of the set its shown row belongs to
    _inbox_foreign: dict[str, str] = {}  # thread id -> its asker's key: others' requests assigned to me (people)
    inbox_bulk_verb: str = ""  # approve | reject while the confirmation is open
    inbox_bulk: dict[str, Any] = {}  # the last bulk action's result: done, skipped, lines

    @rx.event(background=True)
    async def load_inbox(self):
        """Fill the inbox (the inbox component's mount)."""
        await load(self, _chat(self))

    @rx.event(background=True)
    async def inbox_resolve(self, thread_id: str, payload: Any = None, interrupt_id: str | None = None,
                            run_id: str = "", shown: Any = ""):
        """Answer an interrupt of ``thread_id`` from the inbox (S6, S7).

        ``run_id``: the set the card showed; ``shown``: the call it showed (its ``call_hash``, §6.4). Not a
        string (a click's event info fills it when a custom slot's answer leaves it out): no hash.
        """
        await answer(self, _chat(self), "resolve", str(thread_id), payload, interrupt_id, str(run_id or ""),
                     shown=shown if isinstance(shown, str) else "")

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
            # only what the filters offer: a value from elsewhere is no filter of ours (and never held)
            if reason is not None:
                self.inbox_reason = str(reason) if reason in self.inbox_reasons else ""
            if tool is not None:
                self.inbox_tool = str(tool) if tool in self.inbox_tool_names else ""
            await fill(await driver.ready(self, _chat(self)))

    @rx.event(background=True)
    async def inbox_page_next(self):
        """The next page of the inbox."""
        async with self:
            self.inbox_page += 1
            await fill(await driver.ready(self, _chat(self)))

    @rx.event(background=True)
    async def inbox_page_prev(self):
        """The previous page of the inbox."""
        async with self:
            self.inbox_page = max(0, self.inbox_page - 1)
            await fill(await driver.ready(self, _chat(self)))

    @rx.event
    def inbox_toggle(self, key: str):
        """Select a request, or unselect it (its checkbox, or Space on its row).

        Only a request the inbox lists to this owner can be selected, and at most
        :data:`MAX_SELECTED` at once: the key comes from the browser.
        """
        if not isinstance(key, str):
            return
        if key in self.inbox_selected:
            self.inbox_selected = [k for k in self.inbox_selected if k != key]
        elif key in self._inbox_listed and len(self.inbox_selected) < MAX_SELECTED:
            self.inbox_selected = [*self.inbox_selected, key]

    @rx.event
    def inbox_select_all(self, checked: bool):
        """Select every listed request (the shown page), or none."""
        self.inbox_selected = list(self.inbox_selectable)[:MAX_SELECTED] if checked is True else []

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
