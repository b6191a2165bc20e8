"""The stream loop: a run's events go through the session; the view is pushed at most 20 times a second.

Lifecycle events push at once; other changes wait for the next tick, and a change followed by
silence (a slow tool, the end of an answer) is still pushed one tick later. The current turn
has its own var (``live``), so a push does not resend the history (docs/decisions/0006), and a
streaming text goes as new characters only (:mod:`interrupt_chat.tab.streaming`, docs/decisions/0011),
as often as its envelopes are worth it.
Runs in flight are kept by thread (:func:`interrupt_chat.tab.persistence.run_key`) so that a stop button
reaches them, and so that liveness and orphans are the thread's, not a tab's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ag_ui.core import BaseEvent, EventType
from reflex_base.event import Event
from reflex_base.event.context import EventContext

from ..agui import AgentSession
from ..agui.events import DELTA_TYPES, RUN_ENDS
from ..agui.session import STOPPED
from ..model.views import branch_nav, message_rows, people_error, regenerable, thread_rows, tool_rows, waiting_count
from ..store import pools
from ..workers import lane, load, presence, runs, sync, traces
from ..workers.load import PUSH_INTERVAL, PUSHES_PER_SECOND, WorkerLoad
from ..workers.proxy_reads import behind, tab_token
from . import answers, hooks, live, paging, pausing, persistence, routing, saving, streaming, trail

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, StateLike

__all__ = ["FLUSH_NOW", "PUSHES_PER_SECOND", "PUSH_INTERVAL", "drive", "halted", "keep", "list_threads", "publish",
           "ready", "resync", "run_handlers", "stop"]

STARTS = frozenset({EventType.TEXT_MESSAGE_START, EventType.REASONING_MESSAGE_START, EventType.TOOL_CALL_START})
ENVELOPE_BYTES = 170  # what a push of streamed text costs beyond the text: the websocket frame's envelope (measured)
STREAM_RATIO = 1.5  # at most this many envelope bytes per streamed character, over a run
STREAM_IDLE = 0.3  # seconds without new text that count as a pause: what waits is pushed
MAX_TEXT_WAIT = 3.0  # seconds a text waits at most for its envelope (slow agents: fewer than 10 tokens/s)
LOCK_AT_LEAST_EVERY = 2.5  # seconds: text-only pushes skip the lock, but not for longer than this (resync) …
MAX_LOCK_INTERVAL = 10.0  # … which a busy worker stretches, as its push tick, up to this
_resync_wanted: set[runs.Key] = set()  # runs driven here whose thread's page lacks streamed text
FLUSH_NOW = frozenset({EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_ERROR, EventType.TOOL_CALL_START,
                       EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT, EventType.MESSAGES_SNAPSHOT,
                       EventType.TEXT_MESSAGE_END, EventType.STEP_STARTED, EventType.STEP_FINISHED})

async def stop(chat: ChatLike) -> bool:
    """Stop the run in flight on the shown thread, if any, in whichever worker drives it (stop button).

    The tab's person is checked first: a tab that logged out stops nobody's run.
    """
    await ready(chat, chat.__class__)
    if chat.signed_out:
        return False
    return await runs.stop(persistence.run_key(chat, chat.thread_id))


async def publish(chat: ChatLike, session: AgentSession, *, full: bool = False, starting: bool = False,
                  redraw: bool = False, shown: bool = False, frozen_before: Mapping[str, int] | None = None,
                  watch: bool = True) -> None:
    """Copy the session's transcript and status into the chat's vars (inside the lock).

    The conversation is ``history`` (the turns before this one, sent as changes: :mod:`.paging`)
    followed by ``live`` (the current turn: the user's message through its resumes, in its own
    state, loaded here when it changes); streaming touches only ``live``. ``full``: every var (a
    thread shown anew). ``shown``: a page (re)loaded the thread: it gets the history's newest page
    whether or not it changed (another thread's history goes that way by itself). ``starting``: a run is about
    to start, show it as running already. ``redraw``: the frozen texts changed (see
    :mod:`interrupt_chat.tab.streaming`), so ``live`` is rebuilt even if the transcript did not change.
    ``watch``: (re)register the tab as showing the thread (a run's pushes leave it to the publish
    that showed the thread: the tab did not move meanwhile, or the push would not be made).
    """
    transcript, frozen = session.transcript, behind(chat)._frozen
    history, tail = transcript.take_changes()
    split = transcript.tail_start
    if full or history or shown:
        paging.publish(chat, session, reset=shown, frozen={**(frozen_before or {}), **frozen})
    if full or tail or redraw:
        _assign(await live.load(chat), "live", message_rows(transcript.messages[split:], transcript, session.thread_id,
                                                          frozen))
    pending = session.tracker.pending
    # The last run's failure wins over a re-offered set (S15): the error is what just happened.
    waits = tool_rows(session)
    status = ("running" if session.running or starting else "error" if session.error
              else "interrupted" if pending is not None or waits else "idle")
    _assign(chat, "status", status)
    _assign(chat, "following", status == "running" and not session.running)  # another tab's (or worker's) run
    _assign(chat, "error", people_error(session.error or ""))
    _assign(chat, "step", transcript.step or "")
    _assign(chat, "denial_notice", halted(session))
    _assign(chat, "tool_waits", waits)  # S27: calls waiting for a person lock the composer too
    _assign(chat, "agent_state", transcript.state if isinstance(transcript.state, dict) else {})
    _assign(chat, "locked", pending is not None or bool(waits))
    if full or history or status != "running":
        _assign(chat, "branch_nav", branch_nav(session))
        _assign(chat, "regenerate_id", regenerable(session))
    if full or status != "running":
        keep(chat, session)
    if watch:
        sync.watch(chat)  # this tab shows this thread: changes made elsewhere reach it


def halted(session: AgentSession) -> str:
    """Why the thread's last run was stopped as it started (the denial limit, ``AgentSession.halt``), else ""."""
    transcript = session.transcript
    error = transcript.error or ""
    return error if transcript.status == "cancelled" and error != STOPPED else ""


def keep(chat: ChatLike, session: AgentSession) -> None:
    """Record the session in the chat's threads (reassigned, so the state is marked dirty) and list them.

    Memory holds only what it must: the shown thread, threads with a run in flight here, and
    threads with messages that the database's list does not hold yet (without a database: all of
    them). The rest is read again from the database when shown; an empty thread that is not
    shown is dropped.
    """
    raw = behind(chat)  # read without the proxy's wrappers; the new dicts are assigned through it
    listed = {s.thread_id for s in raw._summaries} if persistence.database() is not None else set()
    kept = {thread_id: copy for thread_id, copy in raw._sessions.items()
            if thread_id in (raw.thread_id, session.thread_id) or copy.running
            or (copy.transcript.messages and not (copy.revision and thread_id in listed))}
    kept[session.thread_id] = session
    chat._sessions = kept
    chat._titles = {k: v for k, v in raw._titles.items()
                    if k in kept or any(s.thread_id == k for s in raw._summaries)}
    list_threads(chat)


def list_threads(chat: ChatLike) -> None:
    """The thread list's rows: the database's (or search's) list with this state's threads laid over it."""
    raw = behind(chat)
    if raw.signed_out:  # nobody: nothing of anyone is listed
        _assign(chat, "threads", [])
        _assign(chat, "inbox_count", 0)
        return
    _assign(chat, "threads", thread_rows(raw._sessions, raw.thread_id, raw._summaries, raw._titles,
                                         raw.thread_query))
    if not raw.thread_query:  # a search lists only some threads: the count stays the last whole one
        _assign(chat, "inbox_count", waiting_count(raw._sessions, raw._summaries))


async def ready(state: StateLike, chat_cls: type[ChatLike]) -> ChatLike:
    """The chat, its owner's threads restored first if this state has not loaded them (inside the lock).

    A fresh state (a new tab, or any tab after a backend restart, even without a reload) loads
    the owner's threads before its first event does anything, so no event works on, or saves,
    an empty view of them.
    """
    chat = await routing.chat_of(state, chat_cls)
    hooks.beyond.served(chat_cls)  # its expiry sweeper runs; the pages it points people at and lacks are named
    owner = await persistence.owner_of(chat)
    if chat.loaded and owner != chat._owner_key:  # another person now (a log-in, a log-out): nothing of theirs stays
        chat.loaded = False
    if not chat.loaded:
        await persistence.restore(chat)
        chat.loaded = True
        chat.paused = await pausing.paused(chat._owner_key)  # pause-banner (§6.4)
        await trail.show_trail(chat)
        session = chat._session()
        # starting: another worker's run (orphans.py)
        await publish(chat, session, full=True, starting=chat.status == "running", shown=True)
        await routing.route(state, chat_cls, session)
    _assign(chat, "signed_out", not owner)
    _assign(chat, "shown_here", "1")  # this tab's reconnect restores the chat inside its hydrate (hydrate.py)
    return chat


def _assign(state: StateLike, name: str, value: Any) -> None:
    """Set a var only when it changes: every assignment is sent to the browser.

    The value is read from the state behind a background task's proxy (:mod:`.proxy_reads`).
    """
    if getattr(behind(state), name) != value:
        setattr(state, name, value)


async def drive(state: StateLike, chat_cls: type[ChatLike], session: AgentSession,
                events: AsyncGenerator[BaseEvent, None], owner: str | None = None, *,
                started: Callable[[], None] | None = None) -> None:
    """Stream a run into the view, then surface its pending set (S3), save the thread, count down.

    The thread was claimed for the run (:func:`interrupt_chat.tab.persistence.commit`, ``in_flight``);
    the run is registered until its end is saved, so no other process reads the claim as orphaned.
    ``owner``: the run's owner key (a run that goes on, S30, or a resume: the answer's); else the tab's
    when the run starts. The run stays that person's: when the tab changes person meanwhile, it is saved
    as theirs and shown nowhere. ``started``: called once the agent answered the request (its first
    event), before that event is shown: what may follow the request goes then (docs/decisions/0028).
    """
    owner, key, origin = await _run_of(state, chat_cls, session, owner)
    if runs.local(key) is not session:  # (a claim in flight registered it already: no second announce)
        await runs.add(key, session)  # stoppable and alive from every worker (interrupt_chat.workers.runs)
    outbox = streaming.Outbox(session.thread_id)

    async def push(route: bool, text_only: bool = False) -> None:
        if (held := lane.blocked()) is not None:  # a person's decision is on its way: it goes first (0037)
            await held
        chunks = outbox.grown(session.transcript) if text_only and not _resync_asked(key) else None
        if chunks is not None:  # only frozen texts grew, and no resync waits: no lock (and no Redis round trip)
            await _emit(chunks)
            await sync.live(owner, session, origin)
            return
        chunks = []
        async with state:
            chat = await routing.chat_of(state, chat_cls)
            if chat.thread_id == session.thread_id and chat._owner_key == owner:  # another thread (S25) or person
                chunks = await _stream(chat, session, outbox)
                if route:
                    await routing.route(state, chat_cls, session)  # S4: RUN_STARTED removes the card
        await _emit(chunks)
        await sync.live(owner, session, origin)  # the owner's other tabs that show this thread

    throttle = _Throttle(_to_tab(push, origin, owner, session), session.read_at)
    span = traces.run_started(session)  # OpenTelemetry: interrupt_chat.run (a no-op without an SDK)
    try:
        await _show(session, events, throttle, started)
    finally:
        await throttle.close()
        await events.aclose()  # stopped mid-stream: end the run now
        traces.run_ended(span, session)  # and a span per request it surfaced
        call, by_rule, notice = await _end(state, chat_cls, session, outbox, owner, key, origin)
    resuming = by_rule is not None and by_rule.events is not None
    if by_rule is not None:  # P2: the policy's audit entries, then its resume (under this run's claim)
        if notice and by_rule.events is not None:  # not saved: nothing is sent, the set opens again (S15)
            await by_rule.events.aclose()
            by_rule.events = None
            session.abandon(notice)
        await answers.conclude(state, chat_cls, session, by_rule)
        if resuming:
            return
    await routing.settle(state, chat_cls, call)
    if session.needs_handlers and not session.running:  # S30: server-side tools answer, then the run goes on
        await drive(state, chat_cls, session, session.answer_handlers(), owner)


async def _show(session: AgentSession, events: AsyncGenerator[BaseEvent, None], throttle: _Throttle,
                started: Callable[[], None] | None) -> None:
    """Each event of the run to the throttle; ``started`` (and a person's hold ends) once the agent answered."""
    shown_state, answered = session.transcript.state, False
    async for event in events:
        if not answered:  # the agent answered the request: a person waiting for that waits no more
            answered = True
            lane.started()
            if started is not None:
                started()
        if (held := lane.blocked()) is not None:  # another person's decision goes first (0037)
            await held
        moved = session.transcript.state is not shown_state  # e.g. a predicted argument (S33): not text only
        shown_state = session.transcript.state
        await throttle.event(event, moved, session.read_ahead)


async def _end(state: StateLike, chat_cls: type[ChatLike], session: AgentSession, outbox: streaming.Outbox,
               owner: str, key: runs.Key, origin: str
               ) -> tuple[routing.HandlerCall | None, answers.Outcome | None, str]:
    """The run's stream ended: surface its set (rules first), save its end, list the thread; the notice if any.

    A set that surfaces is a person's to answer: its database calls go ahead of other chats' (decision 0029).
    """
    asks = session.tracker.pending is not None and not session.running
    # a set that surfaces is a person's: the other chats' streams wait until it is drawn and told (0037)
    with lane.first(session.thread_id, server=True) if asks else contextlib.nullcontext():
        call, by_rule = await _surface(state, chat_cls, session, outbox, owner, asks)
        resuming = by_rule is not None and by_rule.events is not None
        notice, summaries = await _save_end(owner, session, key, origin, resuming, asks)  # the list: with it
    if asks and not notice:  # (its save listed nothing: the notice the other tabs wait for went first)
        summaries = await saving.summaries(owner)
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        mine = chat._owner_key == owner  # the tab may serve another person now: nothing of this run shows
        chat.notice = (notice if mine else "") or chat.notice
        if summaries is not None and not chat.thread_query and mine:
            chat._summaries = summaries
            list_threads(chat)
    return call, by_rule, notice


async def _run_of(state: StateLike, chat_cls: type[ChatLike], session: AgentSession,
                  owner: str | None) -> tuple[str, runs.Key, str]:
    """The run's owner, its key in the run registry and the tab it started in.

    A resume names its owner: no lock before its request (the tab's token is the socket's, read without it).
    """
    if owner:
        return owner, (owner, session.thread_id), tab_token(state)
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        owner = chat._owner_key  # the run's, whatever comes
        key = (owner, session.thread_id) if owner else persistence.run_key(chat, session.thread_id)
        return owner, key, tab_token(chat)


def _to_tab(push: Callable[[bool, bool], Awaitable[None]], origin: str, owner: str,
            session: AgentSession) -> Callable[[bool, bool], Awaitable[None]]:
    """``push`` while the tab is there; a closed tab gets nothing (:mod:`.presence`).

    Its run goes on and is saved, and the owner's other tabs follow it.
    """
    async def pushing(route: bool, text_only: bool = False) -> None:
        if presence.gone(origin):
            await sync.live(owner, session, origin)
        else:
            await push(route, text_only)
    return pushing


async def _surface(state: StateLike, chat_cls: type[ChatLike], session: AgentSession, outbox: streaming.Outbox,
                   owner: str, asks: bool = False) -> tuple[routing.HandlerCall | None, answers.Outcome | None]:
    """The run ended: the owner's rules answer what they cover (P2), then the view shows the rest (S3).

    Returns the handler call the set owes (S17) and the rules' outcome (with its resume when they
    answered the whole set: no card is drawn then).
    """
    with pools.first(asks):  # (it starts no task: nothing inherits it)
        rules = await hooks.beyond.rules_for(owner, session)
    call, chunks = None, []
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        if chat._owner_key != owner:  # the tab serves another person now: the set waits for its owner, unshown
            return None, None
        by_rule = await hooks.beyond.apply_rules(chat, session, rules)  # P2: before any card is drawn
        resuming = by_rule is not None and by_rule.events is not None
        if chat.thread_id == session.thread_id:
            if by_rule is not None:
                chat.decisions = [*chat.decisions, *hooks.beyond.rule_rows(by_rule.audits)]
            chunks = await _stream(chat, session, outbox, full=True, starting=resuming)
            call = None if resuming else await routing.route(state, chat_cls, session)
        else:
            keep(chat, session)
    await _emit(chunks)
    return call, by_rule


async def _save_end(owner: str, session: AgentSession, key: runs.Key, origin: str, resuming: bool = False,
                    asks: bool = False) -> saving.Written:
    """After the lock: save the run's end, release the run, tell the person what now waits.

    ``resuming``: the owner's rules answered the set, and its resume follows under this claim. ``asks``:
    the set waits for a person, the save goes first. Returns the notice if any, and the owner's
    thread list, read in the save's call unless the set waits for a person (then nothing holds back
    the notice to the other tabs: decision 0034).
    """
    handlers = session.needs_handlers and not session.running  # S30: the thread stays claimed for them
    written = await saving.write(owner, session, in_flight=handlers or resuming, origin=origin, urgent=asks,
                                 run=key, listing=not asks)
    _resync_wanted.discard(key)  # the run is over: a resync asked now waits in the state
    if not (handlers or resuming):  # removed once the end is saved: until then the claim has a live driver
        await runs.remove(key, session)
    if not written.notice and not resuming and not session.running:  # what waits reaches them
        await hooks.beyond.waiting(owner, session)
    return written


async def run_handlers(state: StateLike, chat_cls: type[ChatLike]) -> None:
    """Run the server-side tools a stored thread still waits for (S30).

    A restart came between the save of the wait and its handler. The thread is claimed first, so
    one tab or worker runs them.
    """
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        session = chat._sessions.get(chat.thread_id)
        if session is None or not session.needs_handlers or session.running or chat.signed_out:
            return
        if await persistence.commit(chat, session, in_flight=True) not in (persistence.Commit.WON,
                                                                          persistence.Commit.LOCAL):
            await persistence.reload(chat, session.thread_id)
            return
        await publish(chat, session, full=True, starting=True)
    await drive(state, chat_cls, session, session.answer_handlers())


async def _stream(chat: ChatLike, session: AgentSession, outbox: streaming.Outbox, *, full: bool = False,
                  starting: bool = False) -> list[streaming.Chunk]:
    """Publish, with streaming texts frozen in the var; return the chunks to send after the var delta (in the lock).

    When no text was frozen or unfrozen, the chunks continue texts the page already has: they go
    now, ahead of the var delta, so the text is drawn before the page re-renders for the delta.
    """
    raw = behind(chat)
    before = raw._frozen
    frozen = dict(before)
    chunks = outbox.prepare(frozen, session.transcript, resync=raw._resync)
    redraw = raw._resync or frozen != before
    if redraw:
        chat._frozen, chat._resync = frozen, False
    await publish(chat, session, full=full, redraw=redraw, starting=starting, frozen_before=before, watch=full)
    if redraw:
        return chunks
    await _emit(chunks)
    return []


async def resync(chat: ChatLike) -> None:
    """The page lacks part of a streamed text (a reload, a lost chunk): the vars carry the texts whole.

    A run in flight re-freezes them at its next push (only it knows the texts so far, and it may be
    another worker's); otherwise the var gets them now.
    """
    shown = chat._sessions.get(chat.thread_id)
    if shown is not None:  # the history's rows may hold texts by stream key too (paging.publish)
        paging.publish(chat, shown, reset=True)
    if chat.status == "running":
        chat._resync = True
        key = persistence.run_key(chat, chat.thread_id)
        if runs.local(key) is not None:  # driven here: its next push takes the lock (another tab's: harmless)
            _resync_wanted.add(key)
    elif chat._frozen:
        chat._frozen = {}
        await publish(chat, chat._session(), redraw=True)


def _resync_asked(key: runs.Key) -> bool:
    """Whether a page of the run's thread asked for a resync since its last push that took the lock (forgets it)."""
    if key in _resync_wanted:
        _resync_wanted.discard(key)
        return True
    return False


async def _emit(chunks: list[streaming.Chunk]) -> None:
    """Send chunks to this tab as one ``_call_script`` event (after the lock: the var delta goes first)."""
    if not chunks:
        return
    try:
        context = EventContext.get()
    except LookupError:  # no event context (a script driving the state directly): nobody to send to
        return
    await context.emit_event(Event(name="_call_script", payload={"javascript_code": streaming.script(chunks)}))


class _Throttle:
    """When to push: lifecycle events at once, other changes at most once per tick, with a trailing push.

    A read that ends with the run's end makes no push: the driver's end pushes the thread whole right
    after (decision 0031).

    Streamed text is paid for in envelopes: a push that only carries text is sent when the text
    waiting is worth its envelope (``STREAM_RATIO``), so the bytes stay near the text's own at any
    token rate; the first text of a message goes at once, and a pause sends what waits. The tick
    lengthens when the worker is busy (:class:`~interrupt_chat.workers.load.WorkerLoad`). A push that only
    carries text for texts already frozen skips the state lock, except once a second (a resync
    request waits in the state).
    """

    def __init__(self, push: Callable[[bool, bool], Awaitable[None]],
                 read_at: Callable[[float], None] | None = None) -> None:
        load.watch()  # every run's ticks and reads follow how busy this worker is (headless runs too)
        self._push = push
        self._read_at = read_at  # a busy worker reads the stream just before the next tick
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None  # the trailing push, armed while a change waits
        self._trailing: asyncio.Future[None] | None = None
        self._last = self._locked = 0.0  # the last push, the last push that took the lock
        self._due = 0.0  # when the waiting text goes anyway: a pause, or its longest wait (trailing push)
        self._since = 0.0  # when the oldest waiting text arrived
        self._waiting = 0  # streamed characters not pushed yet
        self._streamed = 0  # streamed characters pushed
        self._envelopes = 0  # pushes that carried streamed text
        self._fresh = False  # a message started: its first text goes at once
        self._other = False  # something besides streamed text changed since the last push
        self._owed: tuple[bool, bool] | None = None  # a push due at the end of this read: (route, free)

    async def event(self, event: BaseEvent, state_moved: bool = False, read_ahead: int = 0) -> None:
        """Push now, at the end of the read, or later; ``read_ahead``: events of the same read that follow.

        A push that is due waits for the last event of its read: a read that holds a message's start
        and its first text, or its end and the run's, makes one push, not two or three.
        """
        kind = event.type
        now = self._loop.time()
        text = kind in DELTA_TYPES and not state_moved
        if text:
            if not self._waiting:
                self._since = now
            self._waiting += len(getattr(event, "delta", "") or "")
            self._due = min(now + STREAM_IDLE, self._since + MAX_TEXT_WAIT)
        else:
            self._other = True
        first = text and self._fresh
        if kind in FLUSH_NOW or first or (
                now - self._last >= WorkerLoad.interval() and (not self._waiting or self._affordable())):
            self._fresh = kind in STARTS
            route, free = self._owed or (False, False)
            self._owed = (route or kind == EventType.RUN_STARTED, free or first)
        else:
            self._fresh = self._fresh or kind in STARTS
        if self._owed is not None:
            if not read_ahead:
                route, free = self._owed
                self._owed = None
                if kind in RUN_ENDS and not route:  # the run's end: _end pushes it whole as the stream closes
                    self._due = now  # (a stream left open after it: the trailing push shows it at the tick)
                    if self._timer is None:
                        self._arm(max(self._last + WorkerLoad.interval() - now, 0.0))
                    return
                await self._now(now, route, free=free)
            return
        if self._timer is None:
            delay = STREAM_IDLE if self._waiting else self._last + WorkerLoad.interval() - now
            self._arm(max(delay, 0.0))

    def _affordable(self) -> bool:
        return (self._envelopes + 1) * ENVELOPE_BYTES <= STREAM_RATIO * (self._streamed + self._waiting)

    def _arm(self, delay: float) -> None:
        self._timer = self._loop.call_later(delay, self._fire)

    def _text_only(self, now: float, route: bool) -> bool:
        """Whether this push may skip the lock; else it takes it, and counts as the last that did."""
        every = min(LOCK_AT_LEAST_EVERY * WorkerLoad.interval() / PUSH_INTERVAL, MAX_LOCK_INTERVAL)
        if not (route or self._other) and now - self._locked < every:
            return True
        self._locked, self._other = now, False
        return False

    async def _now(self, now: float, route: bool, *, free: bool = False) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._last = now
        self._account(free)
        interval = WorkerLoad.interval()
        if self._read_at is not None and interval > 2 * PUSH_INTERVAL:  # busy: the tick is stretched
            # the next read comes at the next tick: what the agent writes meanwhile is one read,
            # and the push it makes due goes in that read's turn of the loop (decision 0023)
            self._read_at(now + interval)
        await self._push(route, self._text_only(now, route))

    def _account(self, free: bool = False) -> None:
        """Count the waiting text as pushed; a message's first text is a one-off cost, outside the budget."""
        if self._waiting:
            self._envelopes += not free
            self._streamed += self._waiting
            self._waiting = 0

    def _fire(self) -> None:  # nothing new for a while: push what waits (its own task; the lock serializes)
        now = self._loop.time()
        if self._waiting and now < self._due:  # text is still flowing: wait for a pause, or its envelope
            self._arm(self._due - now)
            return
        if self._trailing is not None and not self._trailing.done():  # the previous one is still pushing
            self._arm(WorkerLoad.interval())
            return
        self._timer, self._last = None, now
        self._account()
        self._trailing = asyncio.ensure_future(self._push(False, self._text_only(now, False)))

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._trailing is not None:
            await asyncio.gather(self._trailing, return_exceptions=True)
