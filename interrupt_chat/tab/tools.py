"""Frontend tools and shared state in the chat (S26-S32): ``FrontendToolState`` and the chat's handlers.

The core (:mod:`interrupt_chat.agui.frontend_tools`) decides which calls wait and what their
results are; this module declares a chat's tools from ``FrontendToolState`` subclasses, shows the
waiting calls (``tool_waits``) and the agent's state (``agent_state``), and answers calls: a
person through ``respond`` / ``decline`` / ``submit`` events, a server-side ``handle`` after the
run. Answering runs in the chat's lock, so a double click sends one result (S28). A call to a tool
whose class has ``handle`` is the server's to answer, always: a person's answer to it is refused
whatever the thread's state (a fresh state after a restart included).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, ClassVar, cast

import reflex as rx
from ag_ui.core import BaseEvent

from ..agui import AgentSession, FrontendTool, FrontendTools, RunInFlight, ToolCallNotWaiting
from ..model.forms import FormError, check_answer
from ..model.views import ToolWaitRow
from . import claims, driver, hooks, persistence, routing
from .mixins import ConcreteSubclasses

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, StateLike

__all__ = ["FrontendToolState", "ToolHandlers", "answer", "answered_on_server", "attach"]

log = logging.getLogger(__name__)
CLAIM_ATTEMPTS = claims.CLAIM_ATTEMPTS


class FrontendToolState(rx.State, mixin=True, metaclass=ConcreteSubclasses):
    """One frontend tool (S26-S31). Subclass it, set the class attributes, pass it to ``chat(tools=[...])``.

    Class attributes: ``tool_name``, ``description``, ``parameters`` (JSON Schema), ``cancellable``.
    Define ``render(call)`` (a staticmethod: the card for a waiting call, from a
    :class:`~interrupt_chat.components.tool_wait.ToolCall`)
    for a person to answer, or ``handle(args)`` (a staticmethod, sync or async) to answer on the
    server. Without either, the default card asks for a JSON result. Events: ``respond``,
    ``decline``, ``submit`` (a form whose fields, less ``tool_call_id``, are the result; override
    ``result(args, form_data)`` to shape it).
    """

    tool_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    cancellable: ClassVar[bool] = True
    _chat_state: ClassVar[type[ChatLike] | None] = None

    @rx.event(background=True)
    async def respond(self, tool_call_id: str, result: Any = None):
        """Answer a waiting call with ``result`` (S28); the last answer of a run starts the next run."""
        await answer(self, self._chat(), str(tool_call_id), result)

    @rx.event(background=True)
    async def decline(self, tool_call_id: str):
        """Decline a waiting call of a cancellable tool (S31)."""
        await answer(self, self._chat(), str(tool_call_id), None, declined=True)

    @rx.event(background=True)
    async def submit(self, form_data: dict[str, Any]):
        """A render's form (:meth:`ToolCall.form`): its fields are the result, shaped by ``result``."""
        data = dict(form_data)
        tool_call_id = str(data.pop("tool_call_id", ""))
        async with self:
            chat = await driver.ready(self, self._chat())  # a fresh state (a restart) loads the thread first
            session = await persistence.load_thread(chat, chat.thread_id)
            wait = next((w for w in session.tool_waits if w.tool_call_id == tool_call_id), None) if session else None
        if wait is not None:
            await answer(self, self._chat(), tool_call_id, self.result(wait.args, data))

    def result(self, args: Any, form_data: dict[str, Any]) -> Any:
        """The result a submitted form gives: the default card's field as JSON (else text), or the fields."""
        if set(form_data) == {"result"}:  # the default card (components/tool_wait.py)
            text = str(form_data["result"])
            try:
                return json.loads(text)
            except ValueError:
                return text
        return form_data

    @classmethod
    def declaration(cls) -> FrontendTool:
        """The tool as the core declares it to the agent (S26)."""
        handler = getattr(cls, "handle", None)  # a staticmethod: the plain function
        return FrontendTool(cls.tool_name, cls.description, cls.parameters,
                            handler=handler if callable(handler) else None, cancellable=cls.cancellable)

    @classmethod
    def _chat(cls) -> type[ChatLike]:
        if cls._chat_state is None:
            raise RuntimeError(f"{cls.__name__} serves no chat: pass it to interrupt_chat.chat(tools=[...])")
        return cls._chat_state


class ToolHandlers(rx.State, mixin=True):
    """The chat state's frontend-tool calls and shared state (a mixin of ``ChatState``)."""

    tool_waits: list[ToolWaitRow] = []  # calls waiting for a person: the composer is locked (S27)
    agent_state: dict[str, Any] = {}  # the agent's state (STATE_SNAPSHOT / STATE_DELTA), read-only (S32)

    @rx.event(background=True)
    async def set_agent_state(self, state: dict[str, Any]):
        """The app's edit of the shared state: the next run sends it (S32). Not while a run is in flight."""
        async with self:
            chat = cast("ChatLike", self)
            await driver.ready(chat, chat.__class__)
            if chat.signed_out:  # nobody sets what a run sends (nor leaves it for the next person)
                return
            fresh = await persistence.refresh(chat, chat.thread_id)
            session = chat._session()
            if session.running or fresh.busy:
                chat.notice = "Wait for the current answer before changing the shared state."
                return
            session.set_state(state)
            await persistence.save(chat, session)  # conditional: a stale copy is refused with a notice
            await driver.publish(chat, session)


def answered_on_server(chat_cls: type[ChatLike], tool_name: str) -> bool:
    """Whether the chat's tool ``tool_name`` is answered by its class's ``handle`` (never by a person)."""
    return any(tool.tool_name == tool_name and callable(getattr(tool, "handle", None)) for tool in chat_cls.tool_states)


def attach(session: AgentSession, chat_cls: type[ChatLike]) -> AgentSession:
    """Give a session its chat's tools (a new one, or one restored without them: tools are code)."""
    if chat_cls.tool_states and not session.tools:
        session.tools = FrontendTools(tool.declaration() for tool in chat_cls.tool_states)
    return session


async def answer(state: StateLike, chat_cls: type[ChatLike], tool_call_id: str, result: Any, *,
                 declined: bool = False) -> None:
    """Answer a waiting call in the chat's lock, then drive the next run if it was the last (S28).

    The result is written conditionally on the revision the copy was read at, and the next run is
    claimed before it starts: of two tabs, workers or a restarted backend answering the same call,
    exactly one result is sent. Results are bounded like interrupt answers.
    """
    try:
        check_answer(result)
    except FormError as exc:
        async with state:
            (await routing.chat_of(state, chat_cls)).notice = f"The tool's result was not sent: {exc}"
        return
    async with state:
        chat = await driver.ready(state, chat_cls)  # a fresh state (a restart) loads the thread first
        if chat.signed_out:  # nobody answers a tool call (I3)
            return
        claimed = await claims.claim(chat, lambda: _try_answer(chat, chat_cls, tool_call_id, result, declined))
        if claimed is None:
            return
        session, events = claimed.session, claimed.value
        await driver.publish(chat, session, full=True, starting=session.running)
        owner, name = chat._owner_key, next((w.name for w in session.tool_waits if w.tool_call_id == tool_call_id), "")
    await hooks.beyond.tool_answered(owner, session.thread_id, name, tool_call_id)  # notifications
    if session.running:  # the last answer: the next run takes the results to the agent
        await driver.drive(state, chat_cls, session, events)


async def _try_answer(chat: ChatLike, chat_cls: type[ChatLike], tool_call_id: str, result: Any, declined: bool
                      ) -> claims.Attempt[AsyncGenerator[BaseEvent, None]] | None:
    """Inside the lock, one try of :func:`answer`: refresh, check, record the result; None: nothing to claim."""
    fresh = await persistence.refresh(chat, chat.thread_id)
    session = chat._session()
    wait = next((w for w in session.tool_waits if w.tool_call_id == tool_call_id), None)
    if wait is not None and answered_on_server(chat_cls, wait.name):  # the class says so, not a flag
        log.info("a person's answer to the server-side tool %r was refused", wait.name)
        return None
    if fresh.busy or session.running:
        chat.notice = "Wait for the current answer, or stop it."
        return None
    try:
        if session.client is not None:
            session.client.headers = await chat.agent_headers()
        events = session.decline(tool_call_id) if declined else session.respond(tool_call_id, result)
    except ToolCallNotWaiting:  # answered already (a double click, another tab): nothing is sent again
        if fresh.replaced:
            await driver.publish(chat, session, full=True)
        return None
    except RunInFlight:
        chat.notice = "Wait for the current answer, or stop it."
        return None
    except Exception:  # chat(headers=fn) raised: nothing is sent, the call still waits
        log.exception("chat(headers=...) raised; the tool's result was not sent")
        chat.notice = "The tool's result could not be sent (the request could not be prepared). Try again."
        return None
    return claims.Attempt(session, events, in_flight=session.running, undo=events.aclose)  # (undo: never started)
