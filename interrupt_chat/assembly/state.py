"""``InterruptState`` and ``ChatState``: the features' mixins assembled (0024), seen through ``model/protocols``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar

import reflex as rx

from .. import approvals
from ..agui import AgentClient, AgentSession
from ..approvals import pause, rule_answers, rule_editor
from ..approvals.inbox import InboxHandlers
from ..approvals.people.handlers import PeopleHandlers
from ..model.cards import Card
from ..model.protocols import JSON
from ..store.threads_db import ThreadSummary
from ..tab import answers, attaching, branching, driver, live, orphans, paging, persistence, routing, sending, trail
from ..tab import identity as browser_identity
from ..tab.endpoint import NO_AGENT_MESSAGE, default_agent_url
from ..tab.feedback import FeedbackHandlers
from ..tab.hydrate import install as install_hydrate
from ..tab.mixins import ConcreteSubclasses
from ..tab.threads import ThreadListHandlers
from ..tab.tools import FrontendToolState, ToolHandlers, attach
from ..workers.load import read_pause  # a busy worker reads the streams in bigger pieces

__all__ = ["JSON", "ChatState", "InterruptState"]

approvals.install()  # the inbox, rules, links, notifications and expiry plug into the chat's hooks
browser_identity.install()  # the anonymous identity on Reflex's socket (before the app serves a connection)
install_hydrate()  # a reconnect's snapshot holds the restored thread (no flash of the defaults)


class InterruptState(rx.State, mixin=True, metaclass=ConcreteSubclasses):
    """One useInterrupt configuration (S16–S20). Subclass it to configure (docs/guides/embedding.md).

    Class attribute ``render_in_chat`` (default True); override ``enabled(event)`` and ``handler(props)``.
    Vars: ``interrupt``, ``interrupts``, ``event``, ``result``, ``slot_props``, ``has_interrupt``; ``cards``
    is the default slot's view model. Handlers: ``resolve``, ``cancel``.
    """

    render_in_chat: bool = True
    active: bool = False  # this configuration holds the chat's pending set
    interrupt: dict[str, Any] | None = None
    interrupts: list[dict[str, Any]] = []
    event: dict[str, Any] | None = None
    result: JSON = None
    slot_props: dict[str, Any] | None = None
    cards: list[Card] = []
    submitting: bool = False

    _chat_state: ClassVar[type[ChatState] | None] = None

    @rx.var
    def has_interrupt(self) -> bool:
        """S19: slot props are published."""
        return self.slot_props is not None

    def enabled(self, event: dict[str, Any]) -> bool:
        """Whether this configuration takes the pending set (S16). Default: every set."""
        return True

    async def handler(self, props: dict[str, Any]) -> Any:
        """Called once per surfaced set (S17); the return value becomes ``result``."""
        return None

    @rx.event(background=True)
    async def resolve(self, payload: JSON = None, interrupt_id: str | None = None, shown: Any = None):
        """Answer an interrupt (S6), resuming once all are; ``shown``: the card's call_hash (a click's event: none)."""
        await answers.answer(self, "resolve", payload, interrupt_id, shown=shown if isinstance(shown, str) else "")

    @rx.event(background=True)
    async def cancel(self, interrupt_id: str | None = None):
        """Abandon an interrupt (S6, S11); for a legacy interrupt: dismiss (S14)."""
        await answers.answer(self, "cancel", None, interrupt_id)

    @rx.event(background=True)
    async def submit_form(self, form_data: dict[str, Any]):
        """Default slot: a schema form was submitted. Validated before anything is recorded (S22)."""
        await answers.submit_form(self, form_data)

    @rx.event(background=True)
    async def approve_edited(self, form_data: dict[str, Any]):
        """Default slot: "edit and approve" with the edited arguments as JSON (S22)."""
        await answers.approve_edited(self, form_data)

    @rx.event(background=True)
    async def remember_rule(self, interrupt_id: str, run_id: str, scope: str, effect: str):
        """Default slot: "allow in this thread", "always allow", "always deny": answer, and remember it (P1)."""
        await rule_answers.remember_in_chat(self, interrupt_id, run_id, scope, effect)

    @rx.event(background=True)
    async def save_rule(self, form_data: dict[str, Any]):
        """Default slot: "Allow similar calls": make the narrower rule, approve the shown call (§6.4)."""
        await rule_editor.save_in_chat(self, form_data)

    @classmethod
    def _chat(cls) -> type[ChatState]:
        if cls._chat_state is None:
            raise RuntimeError(f"{cls.__name__} serves no chat: pass it to interrupt_chat.chat(interrupts=...)")
        return cls._chat_state


class ChatState(ThreadListHandlers, InboxHandlers, PeopleHandlers, rule_answers.PolicyHandlers, pause.PauseHandlers,
                rule_editor.RuleEditorHandlers, FeedbackHandlers, branching.BranchHandlers,
                attaching.AttachmentHandlers, ToolHandlers, orphans.RunWatchHandlers, paging.HistoryHandlers,
                rx.State, mixin=True, metaclass=ConcreteSubclasses):
    """One ``chat()``'s conversation: messages, runs, threads (a subclass per configuration: :mod:`.registry`)."""

    status: str = "idle"  # idle | running | interrupted | error
    error: str = ""
    step: str = ""
    locked: bool = False  # interrupts pending: the composer must not send (S21)
    following: bool = False  # the shown run is driven by another tab: this one may still switch threads
    thread_id: str = ""
    threads: list[dict[str, str]] = []
    notice: str = ""
    loaded: bool = False  # the owner's threads are in this state (False again in a fresh one: restart)
    decisions: list[dict[str, str]] = []  # the shown thread's audit trail
    signed_out: bool = False  # the tab has nobody (logged out, another origin): chat-signin, nothing works
    shown_here: str = rx.SessionStorage("")  # "1" once this tab showed the chat: its reconnect restores it (hydrate.py)

    _sessions: dict[str, AgentSession] = {}
    _owner_key: str = ""  # the database key, resolved when the threads are restored
    _summaries: list[ThreadSummary] = []  # the owner's threads in the database, newest first
    _titles: dict[str, str] = {}  # titles given here (what a rename shows at once, or without a database)
    _frozen: dict[str, int] = {}  # stream key -> characters of that text the var holds (streaming.py)
    _resync: bool = False  # the page lacks streamed text: the run's next push sends it whole

    agent_url: ClassVar[str | None] = None
    headers: ClassVar[dict[str, str] | Callable[[ChatState], dict[str, str]]] = {}  # to the agent; never kept
    owner_fn: ClassVar[Callable[[ChatState], Any] | None] = None  # chat(owner=...): the app's user id
    configs: ClassVar[list[type[InterruptState]]] = []
    default_config: ClassVar[type[InterruptState] | None] = None
    tool_states: ClassVar[list[type[FrontendToolState]]] = []  # chat(tools=...): frontend tools (S26)
    live_state: ClassVar[type[live.LiveTurn]] = live.LiveTurn  # the current turn's rows: each chat class gets its own
    identity: ClassVar[str] = ""  # its name, else its configurations and tools (registry.identity_key)
    legacy_names: ClassVar[list[str]] = []  # class names it had before 0017: their stored threads move to it
    renderers: ClassVar[dict[str, Callable[..., Any]]] = {}  # configuration full name -> its slot's render_fn
    notify_fn: ClassVar[Callable[[dict[str, Any]], Any] | None] = None  # Chat(notify=...): notifications (notifier.py)
    on_expiry: ClassVar[str] = ""  # Chat(on_expiry="cancel"): the backend sends a set whose last interrupt expired
    decide_requires_owner: ClassVar[bool] = False  # Chat(decide_requires_owner=True): links need the owner's login
    insights_admin_fn: ClassVar[Callable[[ChatState], Any] | None] = None  # Chat(insights_admin=fn): sees everyone's

    @rx.event(background=True)
    async def send(self, form_data: dict[str, Any]):
        """Composer submit: send the user's text unless interrupts are pending (S21)."""
        await self._send_text(form_data.get("text", ""))

    @rx.event(background=True)
    async def send_text(self, text: str):
        """Send a fixed text (suggestion chips)."""
        await self._send_text(text)

    async def _send_text(self, text: Any) -> None:
        await sending.send(self, str(text))

    @rx.event
    async def resync_stream(self):
        """The page misses part of a streamed text (``stream_text``'s ``on_gap``): send them whole."""
        await driver.resync(self)

    @rx.event
    async def stop(self):
        """Stop the run in flight on the shown thread (stop button), whichever worker drives it."""
        await driver.stop(self)

    @rx.event
    async def new_thread(self):
        """Start a new, empty thread and show it."""
        await driver.ready(self, self.__class__)  # the tab's person now (a log-out drops the last one's)
        session = self._new_session()
        self.thread_id = session.thread_id
        await driver.publish(self, session, full=True)
        return self.__class__.route_interrupts

    @rx.event
    async def switch_thread(self, thread_id: str):
        """Show another thread (from memory or the database), with that thread's interrupts only (S25)."""
        await driver.ready(self, self.__class__)
        session = await persistence.load_thread(self, str(thread_id))  # only the owner's: ids come from the page
        if session is not None:
            session.client = session.client or self._client()
            self.thread_id = session.thread_id
            await driver.publish(self, session, full=True)
            paging.show_match(self, session, self.thread_query)  # opened from the search: at its match
            await trail.show_trail(self)
            return self.__class__.route_interrupts

    @rx.event(background=True)
    async def route_interrupts(self):
        """Offer the shown thread's pending set to the configurations, then count down (S20, S11)."""
        async with self:
            call = await routing.route(self, self.__class__, self._session())
        await routing.settle(self, self.__class__, call)

    @rx.event(background=True)
    async def on_load_chat(self):
        """Page (re)load: re-surface the pending set (S25) and restart expiry countdowns."""
        async with self:
            self.loaded = False  # a (re)load re-surfaces the thread, and restores it in a fresh state
            await driver.resync(self)  # a new page has none of the streamed texts
            await driver.ready(self, self.__class__)
            if not self._client().url:
                self.error = NO_AGENT_MESSAGE
            call = await routing.route(self, self.__class__, self._session())
        await routing.call_handler(self, call)
        await driver.run_handlers(self, self.__class__)
        await routing.tick_expiry(self, self.__class__)

    @rx.event(background=True)
    async def ensure_loaded(self):
        """A fresh backend state (after a restart, without a reload): restore the owner's threads."""
        async with self:
            chat = await driver.ready(self, self.__class__)
            call = await routing.route(self, self.__class__, chat._session())
        await routing.call_handler(self, call)
        await driver.run_handlers(self, self.__class__)
        await routing.tick_expiry(self, self.__class__)

    def owner(self) -> str:
        """Without ``chat(owner=...)``: the browser's identity from the tab's socket, "" without one (never made up)."""
        return browser_identity.person_of(self) or ""

    async def agent_headers(self) -> dict[str, str]:
        """The next run's headers, read in its lock: ``chat(headers=...)``, a mapping or (a)sync ``fn(chat_state)``."""
        headers = self.__class__.headers
        value = headers(self) if callable(headers) else headers
        return dict(await value if inspect.isawaitable(value) else value)

    def _client(self) -> AgentClient:  # headers: set per run (agent_headers)
        return AgentClient(self.__class__.agent_url or default_agent_url() or "", read_pause=read_pause)

    def _new_session(self) -> AgentSession:
        return attach(AgentSession(self._client()), self.__class__)

    def _session(self) -> AgentSession:
        session = self._sessions.get(self.thread_id) if self.thread_id else None
        if session is None:
            session = self._new_session()
            self._sessions = {**self._sessions, session.thread_id: session}
            self.thread_id = session.thread_id
        elif session.client is None:  # restored from a pickle: clients (headers) are never pickled
            session.client = self._client()
        session.file_owner = self._owner_key  # a run sends only this person's stored files (attaching._source)
        return attach(session, self.__class__)  # tools are code: never pickled either
