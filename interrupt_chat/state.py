"""Reflex states: the chat run (a background task) and ``InterruptState`` (the useInterrupt config).

The protocol decisions all live in :mod:`interrupt_chat.agui`; this module only runs it and
turns its results into vars. Network awaits happen outside ``async with self``; the lock is
entered to copy results in, at most ``PUSHES_PER_SECOND`` times a second while streaming, and
the current run's messages have their own small var (``live``) so a push does not resend the
history (docs/decisions/0006).

Secrets (S23): a masked field's value arrives with the form submit, goes into the tracker
(process memory: ``InterruptTracker.__getstate__`` leaves masked answers out of every pickle)
and into the resume request. It never enters a var.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import reflex as rx
from ag_ui.core import BaseEvent, EventType

from .agui import AgentClient, AgentSession, Decision, MessageView, Transcript
from .cards import Card, build_cards, interrupt_dict, refresh_expiry
from .forms import FormError, payload_from_form, validate_payload
from .thread_store import thread_store

__all__ = ["AGENT_URL_ENV", "ChatState", "InterruptState", "JSON", "MessageRow", "ToolCallRow", "default_agent_url", "new_chat_state"]

log = logging.getLogger(__name__)

AGENT_URL_ENV = "INTERRUPT_CHAT_AGENT_URL"
DEMO_AGENT_PATH = "/demo-agent/"
PUSHES_PER_SECOND = 20
_PUSH_INTERVAL = 1.0 / PUSHES_PER_SECOND
_FLUSH_NOW = {EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_ERROR, EventType.TOOL_CALL_START,
              EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT, EventType.MESSAGES_SNAPSHOT,
              EventType.TEXT_MESSAGE_END, EventType.STEP_STARTED, EventType.STEP_FINISHED}

JSON = dict[str, Any] | list | str | int | float | bool | None


@dataclasses.dataclass
class ToolCallRow:
    """A tool call as the chat draws it."""

    id: str
    name: str
    status: str  # streaming | running | awaiting_approval | complete | failed
    args: str
    result: str


@dataclasses.dataclass
class MessageRow:
    """A transcript message as the chat draws it (``rx.foreach`` over typed rows)."""

    id: str
    role: str  # user | assistant | tool | reasoning
    content: str
    tool_calls: list[ToolCallRow]
    streaming: bool


# Runs in flight, by (client token, chat state), so a stop button reaches the background task.
_LIVE: dict[tuple[str, str], AgentSession] = {}


class _ConcreteSubclasses(type(rx.State)):
    """Metaclass: a plain subclass of a mixin below is a concrete Reflex state of its own.

    Reflex binds inherited event handlers to the class that defined them, so a reusable state
    must be a mixin; this lets users write ``class Approvals(ic.InterruptState)`` instead of
    ``class Approvals(ic.InterruptState, rx.State)``.
    """

    def __new__(mcs, name, bases, namespace, mixin: bool = False, **kwargs):
        state_bases = [b for b in bases if isinstance(b, type(rx.State))]
        if not mixin and state_bases and all(b._mixin for b in state_bases):
            bases = (*bases, rx.State)
        return super().__new__(mcs, name, bases, namespace, mixin=mixin, **kwargs)


def default_agent_url() -> str:
    """``INTERRUPT_CHAT_AGENT_URL``, else the demo agent mounted in this Reflex backend."""
    configured = os.environ.get(AGENT_URL_ENV, "").strip()
    if configured:
        return configured
    return rx.config.get_config().api_url.rstrip("/") + DEMO_AGENT_PATH


class InterruptState(rx.State, mixin=True, metaclass=_ConcreteSubclasses):
    """One useInterrupt configuration (S16-S20). Subclass it to configure; see the README.

    A Reflex state mixin: every subclass is its own state with its own vars and handlers.

    Class attribute ``render_in_chat`` (default True); override ``enabled(event)`` and
    ``handler(props)``. Vars: ``interrupt``, ``interrupts``, ``result``, ``slot_props``,
    ``has_interrupt``; ``cards`` is the default slot's view model. Handlers: ``resolve``, ``cancel``.
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
        return self.slot_props is not None

    def enabled(self, event: dict[str, Any]) -> bool:
        """Whether this configuration takes the pending set (S16). Default: every set."""
        return True

    async def handler(self, props: dict[str, Any]) -> Any:
        """Called once per surfaced set (S17); the return value becomes ``result``."""
        return None

    @rx.event(background=True)
    async def resolve(self, payload: JSON = None, interrupt_id: str | None = None):
        """Answer an interrupt (S6); resumes the agent once every open interrupt has an answer."""
        await _answer(self, "resolve", payload, interrupt_id)

    @rx.event(background=True)
    async def cancel(self, interrupt_id: str | None = None):
        """Abandon an interrupt (S6, S11); for a legacy interrupt: dismiss (S14)."""
        await _answer(self, "cancel", None, interrupt_id)

    @rx.event(background=True)
    async def submit_form(self, form_data: dict[str, Any]):
        """Default slot: a schema form was submitted. Validated before anything is recorded (S22)."""
        form = dict(form_data)
        interrupt_id = str(form.pop("__interrupt_id", "") or "")
        async with self:
            schema = _schema_of(await self.get_state(self._chat()), interrupt_id)
        try:
            payload = payload_from_form(schema, form)
        except FormError as exc:
            async with self:
                self._set_card_error(interrupt_id, str(exc))
            return
        finally:
            form.clear()  # drop our reference to typed secrets at once (S23)
        await _answer(self, "resolve", payload, interrupt_id or None)

    @rx.event(background=True)
    async def approve_edited(self, form_data: dict[str, Any]):
        """Default slot: "edit and approve" with the edited arguments as JSON (S22)."""
        interrupt_id = str(form_data.get("__interrupt_id", "") or "")
        try:
            edited = json.loads(str(form_data.get("edited_args", "")))
        except ValueError as exc:
            async with self:
                self._set_card_error(interrupt_id, f"The edited arguments are not valid JSON: {exc.msg}.")
            return
        payload = {"approved": True, "editedArgs": edited}
        async with self:
            schema = _schema_of(await self.get_state(self._chat()), interrupt_id)
        try:
            validate_payload(schema, payload)
        except FormError as exc:
            async with self:
                self._set_card_error(interrupt_id, str(exc))
            return
        await _answer(self, "resolve", payload, interrupt_id or None)

    def _set_card_error(self, interrupt_id: str, message: str) -> None:
        self.cards = [dataclasses.replace(c, error=message) if c.id == interrupt_id else c for c in self.cards]

    @classmethod
    def _chat(cls) -> type[ChatState]:
        if cls._chat_state is None:
            raise RuntimeError(f"{cls.__name__} is not attached to a chat: pass it to interrupt_chat.chat(interrupts=...)")
        return cls._chat_state

    def _clear(self) -> None:
        self.active, self.submitting = False, False
        self.interrupt, self.interrupts, self.event = None, [], None
        self.result, self.slot_props, self.cards = None, None, []


class ChatState(rx.State, mixin=True, metaclass=_ConcreteSubclasses):
    """The conversation of one ``chat()``: messages, run status, threads.

    A Reflex state mixin: ``chat()`` makes one concrete subclass per configuration of the chat.
    """

    messages: list[MessageRow] = []  # the history: every turn before the current one
    live: list[MessageRow] = []  # the current turn (user message, answer, resumes): pushed while it streams
    status: str = "idle"  # idle | running | interrupted | error
    error: str = ""
    step: str = ""
    locked: bool = False  # interrupts pending: the composer must not send (S21)
    thread_id: str = ""
    threads: list[dict[str, str]] = []
    notice: str = ""

    _sessions: dict[str, AgentSession] = {}

    agent_url: ClassVar[str | None] = None
    configs: ClassVar[list[type[InterruptState]]] = []
    default_config: ClassVar[type[InterruptState] | None] = None

    # -- events ---------------------------------------------------------------------------------

    @rx.event(background=True)
    async def send(self, form_data: dict[str, Any]):
        """Composer submit: send the user's text unless interrupts are pending (S21)."""
        text = str(form_data.get("text", "")).strip()
        await self._send_text(text)

    @rx.event(background=True)
    async def send_text(self, text: str):
        """Send a fixed text (suggestion chips)."""
        await self._send_text(str(text).strip())

    async def _send_text(self, text: str) -> None:
        if not text:
            return
        async with self:
            session = self._session()
            if session.running:
                self.notice = "Wait for the current answer, or stop it."
                return
            if session.tracker.pending is not None:
                self.notice = "Answer or cancel the agent's request first."
                return
            self.notice = ""
            events = session.send(text)
            self._publish(session, full=True, starting=True)
        await _drive(self, self.__class__, session, events)

    @rx.event
    def stop(self):
        """Stop the run in flight (stop button)."""
        session = _LIVE.get((self.router.session.client_token, self.get_full_name()))
        if session is not None:
            session.cancel()

    @rx.event
    def new_thread(self):
        session = self._new_session()
        self._sessions = {**self._sessions, session.thread_id: session}
        self.thread_id = session.thread_id
        self._publish(session, full=True)
        return self.__class__.route_interrupts

    @rx.event
    def switch_thread(self, thread_id: str):
        """Show another thread, with that thread's interrupts only (S25)."""
        if thread_id in self._sessions:
            self.thread_id = thread_id
            self._publish(self._sessions[thread_id], full=True)
            return self.__class__.route_interrupts

    @rx.event(background=True)
    async def route_interrupts(self):
        async with self:
            await _route_pending(self, self.__class__, self._session())
        await _tick_expiry(self, self.__class__)

    @rx.event(background=True)
    async def on_load_chat(self):
        """Page (re)load: re-surface the pending set (S25) and restart expiry countdowns."""
        async with self:
            self._restore()
            session = self._session()
            self._publish(session, full=True)
            await _route_pending(self, self.__class__, session)
        await _tick_expiry(self, self.__class__)

    # -- helpers ----------------------------------------------------------------------------------

    def _new_session(self) -> AgentSession:
        return AgentSession(AgentClient(self.__class__.agent_url or default_agent_url()))

    def _session(self) -> AgentSession:
        session = self._sessions.get(self.thread_id) if self.thread_id else None
        if session is None:
            session = self._new_session()
            self._sessions = {**self._sessions, session.thread_id: session}
            self.thread_id = session.thread_id
        return session

    def _publish(self, session: AgentSession, *, full: bool = False, starting: bool = False) -> None:
        """Copy the session's transcript and status into vars (inside the lock).

        ``starting``: a run is about to start; show it as running already.
        """
        transcript = session.transcript
        history, tail = transcript.take_changes()
        # The conversation is ``messages`` (history) followed by ``live`` (the current turn: from the
        # user's message through its resumes). Streaming touches only ``live``, a few rows; the
        # history is sent again only when the next turn starts or an older message changes.
        split = transcript.tail_start
        if full or history:
            _assign(self, "messages", _rows(transcript.messages[:split], transcript))
        if full or tail:
            _assign(self, "live", _rows(transcript.messages[split:], transcript))
        pending = session.tracker.pending
        # The last run's failure wins over a re-offered set (S15): the error is what just happened.
        self.status = ("running" if session.running or starting else "error" if session.error
                       else "interrupted" if pending is not None else "idle")
        self.error = session.error or ""
        self.step = transcript.step or ""
        self.locked = pending is not None
        if full or self.status != "running":
            self._store(session)

    def _store(self, session: AgentSession) -> None:
        """Persist the session with the state and in the thread store (S25); refresh the thread list."""
        self._sessions = {**self._sessions, session.thread_id: session}
        self.threads = _threads(self._sessions, self.thread_id)
        store, owner = thread_store(), self._owner()
        if store is not None and owner:
            try:
                store.save(owner, self._sessions, self.thread_id)
            except Exception:  # noqa: BLE001 - persistence must never break the chat
                log.exception("thread store: could not save")

    def _restore(self) -> None:
        """A fresh state for a known tab (after a backend restart): bring its threads back (S25)."""
        store, owner = thread_store(), self._owner()
        if self._sessions or store is None or not owner:
            return
        saved = store.load(owner)
        if saved is not None:
            self._sessions, self.thread_id = saved
            self.threads = _threads(self._sessions, self.thread_id)

    def _owner(self) -> str:
        token = self.router.session.client_token
        return f"{token}|{self.get_full_name()}" if token else ""


# -- running the agent ------------------------------------------------------------------------------

async def _drive(state: rx.State, chat_cls: type[ChatState], session: AgentSession,
                 events: AsyncIterator[BaseEvent]) -> None:
    """Stream a run, publishing at most PUSHES_PER_SECOND times a second, then surface (S3).

    Lifecycle events push at once; other changes are pushed at the next tick, and a change
    followed by silence (a slow tool, the end of an answer) is still pushed one tick later.
    """
    key = (state.router.session.client_token, chat_cls.get_full_name())
    _LIVE[key] = session

    async def push(route: bool = False) -> None:
        async with state:
            chat = await _chat_of(state, chat_cls)
            if chat.thread_id == session.thread_id:  # the view may show another thread now
                chat._publish(session)
                if route:
                    await _route_pending(state, chat_cls, session)  # S4: the card goes away

    loop = asyncio.get_running_loop()
    timer: asyncio.TimerHandle | None = None  # the trailing push, armed while a change waits
    trailing: asyncio.Future[None] | None = None
    last_push = 0.0

    def fire() -> None:  # nothing new within a tick: push what waits (its own task; the lock serializes)
        nonlocal timer, trailing, last_push
        if trailing is not None and not trailing.done():  # the previous one is still pushing
            timer = loop.call_later(_PUSH_INTERVAL, fire)
            return
        timer, last_push = None, time.monotonic()
        trailing = asyncio.ensure_future(push())

    try:
        async for event in events:
            now = time.monotonic()
            if event.type in _FLUSH_NOW or now - last_push >= _PUSH_INTERVAL:
                if timer is not None:
                    timer.cancel()
                    timer = None
                last_push = now
                await push(route=event.type == EventType.RUN_STARTED)
            elif timer is None:
                timer = loop.call_later(last_push + _PUSH_INTERVAL - now, fire)
    finally:
        if timer is not None:
            timer.cancel()
        await events.aclose()  # cancelled mid-stream: stop the run now (the session records it)
        if trailing is not None:
            await asyncio.gather(trailing, return_exceptions=True)
        if _LIVE.get(key) is session:
            del _LIVE[key]
        async with state:
            chat = await _chat_of(state, chat_cls)
            if chat.thread_id == session.thread_id:
                chat._publish(session, full=True)
                await _route_pending(state, chat_cls, session)
            else:
                chat._store(session)
    await _tick_expiry(state, chat_cls)


async def _chat_of(state: rx.State, chat_cls: type[ChatState]) -> ChatState:
    return state if isinstance(state, chat_cls) else await state.get_state(chat_cls)


async def _answer(config: InterruptState, verb: str, payload: Any, interrupt_id: str | None) -> None:
    """resolve / cancel through the tracker; start the resume run if the decision says so."""
    chat_cls = config._chat()
    async with config:
        if not config.active:  # S16: a configuration that did not take the set does nothing
            return
        chat = await config.get_state(chat_cls)
        session = chat._session()
        tracker = session.tracker
        decision: Decision = (tracker.resolve(payload, interrupt_id) if verb == "resolve"
                              else tracker.cancel(interrupt_id))
        payload = None  # S23: the tracker holds it now, in memory only
        if decision.kind == "expired":
            config._set_card_error(decision.interrupt_id or "", "This request has expired; it can only be cancelled.")
            return
        if decision.kind == "ignored":
            return
        events = session.submit(decision) if decision.sends else None
        chat._publish(session, full=True, starting=decision.sends)
        await _route_pending(config, chat_cls, session, keep_result=True)
        if decision.sends:
            config.submitting = True
    if events is not None:
        await _drive(config, chat_cls, session, events)


async def _route_pending(state: rx.State, chat_cls: type[ChatState], session: AgentSession,
                         *, keep_result: bool = False) -> None:
    """Offer the pending set to the configurations in order (S16-S20); inside the lock."""
    pending = session.tracker.pending
    configs = [*chat_cls.configs, chat_cls.default_config]
    chosen: type[InterruptState] | None = None
    if pending is not None:
        value = pending.event["value"]
        event = {"name": "on_interrupt", "value": interrupt_dict(value) if hasattr(value, "model_dump") else value}
        interrupts = [interrupt_dict(i) for i in pending.interrupts]
        first = interrupts[0] if interrupts else None
        for config_cls in configs:
            config = await state.get_state(config_cls)
            if config_cls is chat_cls.default_config or _accepts(config, event):
                chosen = config_cls
                break
    for config_cls in configs:
        config = await state.get_state(config_cls)
        if config_cls is not chosen:
            if config.active:
                config._clear()
            continue
        already = config.active and config.event == event and config.interrupts == interrupts
        config.active, config.event, config.interrupt, config.interrupts = True, event, first, interrupts
        config.cards = build_cards(pending, session.tracker, session.transcript)
        config.submitting = session.tracker.sealed
        if not already and not keep_result:  # S17: once per surfaced set, not per re-render
            config.result = await _call_handler(config, {"event": event, "interrupt": first, "interrupts": interrupts})
        config.slot_props = ({"event": event, "interrupt": first, "interrupts": interrupts, "result": config.result}
                             if config.render_in_chat else None)  # S18


def _accepts(config: InterruptState, event: dict[str, Any]) -> bool:
    try:
        return bool(config.enabled(event))
    except Exception:  # S16: a failing enabled() counts as False
        log.exception("%s.enabled raised; treating it as False", type(config).__name__)
        return False


async def _call_handler(config: InterruptState, props: dict[str, Any]) -> Any:
    try:
        result = config.handler(props)
        if inspect.isawaitable(result):
            result = await result
        return result
    except Exception:  # S17: result is None when the handler fails
        log.exception("%s.handler failed; result is None", type(config).__name__)
        return None


async def _tick_expiry(state: rx.State, chat_cls: type[ChatState]) -> None:
    """Count down expiring cards once a second until they expire or the set goes away (S11)."""
    if not await _counting_down(state, chat_cls):
        return
    while True:
        await asyncio.sleep(1.0)
        async with state:
            chat = await _chat_of(state, chat_cls)
            session = chat._session()
            if session.tracker.pending is None or session.running:
                return
            now = session.tracker.now()
            counting = False
            for config_cls in [*chat_cls.configs, chat_cls.default_config]:
                config = await state.get_state(config_cls)
                if config.active and any(c.expires_at for c in config.cards):
                    config.cards = [refresh_expiry(c, now) for c in config.cards]
                    counting = counting or any(c.expires_at and not c.expired for c in config.cards)
            if not counting:
                return


async def _counting_down(state: rx.State, chat_cls: type[ChatState]) -> bool:
    """Whether an active configuration shows a card with an expiry."""
    async with state:
        for config_cls in [*chat_cls.configs, chat_cls.default_config]:
            config = await state.get_state(config_cls)
            if config.active and any(c.expires_at for c in config.cards):
                return True
    return False


def _schema_of(chat: ChatState, interrupt_id: str) -> Any:
    pending = chat._session().tracker.pending
    if pending is None:
        return None
    if pending.kind == "legacy":
        value = pending.event["value"]
        return value.get("responseSchema") if isinstance(value, dict) else None
    for interrupt in pending.interrupts:
        if interrupt.id == interrupt_id:
            return interrupt.response_schema
    return None


# -- rows -------------------------------------------------------------------------------------------

def _assign(state: rx.State, name: str, value: Any) -> None:
    """Set a var only when it changes: every assignment is sent to the browser."""
    if getattr(state, name) != value:
        setattr(state, name, value)


def _rows(messages: list[MessageView], transcript: Transcript) -> list[MessageRow]:
    return [row for message in messages if (row := _row(message, transcript))]


def _row(message: MessageView, transcript: Transcript) -> MessageRow | None:
    """A message as a plain dict for ``rx.foreach``; None for what the chat does not draw."""
    role = message.role
    if role not in ("user", "assistant", "tool", "reasoning"):
        return None
    calls = []
    for call_id in message.tool_call_ids:
        call = transcript.tool_calls.get(call_id)
        if call is not None:
            calls.append(ToolCallRow(id=call.id, name=call.name, status=call.status,
                                     args=_pretty(call.args, call.args_text), result=call.result or ""))
    if role == "assistant" and not message.content and not calls and not message.streaming:
        return None
    return MessageRow(id=message.id, role=role, content=message.content, tool_calls=calls,
                      streaming=message.streaming)


def _pretty(args: Any, text: str) -> str:
    return json.dumps(args, indent=2, ensure_ascii=False) if args is not None else text


def _threads(sessions: dict[str, AgentSession], current: str) -> list[dict[str, str]]:
    rows = []
    for thread_id, session in sessions.items():
        first_user = next((m.content for m in session.transcript.messages if m.role == "user"), "")
        pending = session.tracker.pending is not None
        rows.append({"id": thread_id, "title": (first_user[:40] or "New chat"),
                     "pending": "true" if pending else "false", "current": "true" if thread_id == current else "false"})
    return rows


def new_chat_state(key: str, *, agent_url: str | None, configs: list[type[InterruptState]]) -> type[ChatState]:
    """The state classes of one ``chat()``: its ChatState subclass and its default slot config."""
    module = sys.modules[__name__]
    name = "Chat_" + "".join(ch if ch.isalnum() else "_" for ch in key)
    existing = getattr(module, name, None)
    if existing is not None:
        return existing
    default = type(f"{name}_DefaultSlot", (InterruptState,), {"__module__": __name__})
    chat_cls = type(name, (ChatState,), {"__module__": __name__})
    chat_cls.agent_url, chat_cls.configs, chat_cls.default_config = agent_url, list(configs), default
    for config in [*configs, default]:
        config._chat_state = chat_cls
    setattr(module, name, chat_cls)
    setattr(module, default.__name__, default)
    return chat_cls

