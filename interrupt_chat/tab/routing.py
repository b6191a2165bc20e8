"""Which configuration takes the pending set (S16–S20), its handler, and the expiry countdown (S11).

``route`` runs inside the state lock: it offers the set to the chat's configurations in order,
fills the chosen one's vars and clears the others. The user's ``handler`` may be slow, so it is
never called under the lock: ``route`` returns a :class:`HandlerCall`, and :func:`call_handler`
makes it after the lock is released, then stores the result if the set is still the same.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..agui import AgentSession, Pending
from ..model.cards import build_cards, refresh_expiry
from ..model.policies import remember_fn
from ..workers.proxy_reads import tab_token
from . import hooks

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, SlotLike, StateLike

__all__ = ["HandlerCall", "call_handler", "chat_of", "configs_of", "keep_result", "route", "run_handler", "settle",
           "taker", "tick_expiry"]

log = logging.getLogger(__name__)

_COUNTDOWNS: dict[tuple[str, str], object] = {}  # (client token, chat) -> the countdown running in this process


@dataclass(frozen=True)
class HandlerCall:
    """A handler owed to a configuration for a newly surfaced set (S17)."""

    config_cls: type[SlotLike]
    props: dict[str, Any]  # {event, interrupt, interrupts}


def configs_of(chat_cls: type[ChatLike]) -> list[type[SlotLike]]:
    """The chat's configurations in the order they are tried, the default slot last (S20)."""
    default = chat_cls.default_config
    return [*chat_cls.configs, *([default] if default is not None else [])]


async def chat_of(state: StateLike, chat_cls: type[ChatLike]) -> ChatLike:
    """The chat state, from itself or from any state of the same tab (inside the lock)."""
    return state if isinstance(state, chat_cls) else await state.get_state(chat_cls)


async def route(state: StateLike, chat_cls: type[ChatLike], session: AgentSession, *,
                keep_result: bool = False) -> HandlerCall | None:
    """Offer the session's pending set to the configurations (inside the lock).

    Returns the handler call owed to the chosen configuration when the set is new to it (and
    ``keep_result`` is False); the caller makes it with :func:`call_handler` after the lock.
    """
    pending = session.tracker.pending
    props = _props(pending)
    chosen = await _choose(state, chat_cls, props) if props is not None else None
    call = None
    for config_cls in configs_of(chat_cls):
        config = await state.get_state(config_cls)
        if config_cls is not chosen or props is None or pending is None:
            if config.active:
                _clear(config)
            continue
        new = not (config.active and config.event == props["event"] and config.interrupts == props["interrupts"])
        config.active, config.event = True, props["event"]
        config.interrupt, config.interrupts = props["interrupt"], props["interrupts"]
        cards = build_cards(pending, session.tracker, session.transcript, await _by_policy(state, chat_cls, session),
                            remember_fn(chat_cls.remember))
        config.cards = await hooks.beyond.annotate(await chat_of(state, chat_cls), session, cards)  # people
        config.submitting = session.tracker.sealed
        if new and not keep_result:  # S17: once per surfaced set, not per re-render
            config.result = None
            call = HandlerCall(config_cls, props)
        _publish_slot(config)
    return call


async def settle(state: StateLike, chat_cls: type[ChatLike], call: HandlerCall | None) -> None:
    """After the lock: make the owed handler call, then run the expiry countdown (S17, S11)."""
    await call_handler(state, call)
    await tick_expiry(state, chat_cls)


async def call_handler(state: StateLike, call: HandlerCall | None) -> None:
    """Make an owed handler call outside the lock; keep its result if the set is unchanged (S17)."""
    if call is None:
        return
    async with state:
        config = await state.get_state(call.config_cls)
    result = await run_handler(config, call.props)
    async with state:
        keep_result(await state.get_state(call.config_cls), call, result)


def keep_result(config: SlotLike, call: HandlerCall, result: Any) -> None:
    """Inside the lock: the handler's result, if its set is still the configuration's (S17)."""
    if config.active and config.event == call.props["event"] and config.interrupts == call.props["interrupts"]:
        config.result = result
        _publish_slot(config)


async def taker(state: StateLike, chat_cls: type[ChatLike], pending: Pending) -> type[SlotLike] | None:
    """The configuration that takes ``pending`` in the chat, or None for the default slot (S20)."""
    props = _props(pending)
    chosen = await _choose(state, chat_cls, props) if props is not None else None
    return None if chosen is chat_cls.default_config else chosen


async def _by_policy(state: StateLike, chat_cls: type[ChatLike], session: AgentSession) -> set[str]:
    """The interrupts of the shown set that a policy answered (P2: the card shows only the rest)."""
    if not session.tracker.answers:
        return set()
    chat = await chat_of(state, chat_cls)
    return {row["interrupt_id"] for row in chat.decisions if row.get("by") == "policy"}


def _clear(config: SlotLike) -> None:
    config.active, config.submitting = False, False
    config.interrupt, config.interrupts, config.event = None, [], None
    config.result, config.slot_props, config.cards = None, None, []


def _props(pending: Pending | None) -> dict[str, Any] | None:
    """``{event, interrupt, interrupts}`` for a pending set (S19), as plain JSON data."""
    if pending is None:
        return None
    interrupts = pending.wire_interrupts
    return {"event": pending.wire_event, "interrupt": interrupts[0] if interrupts else None, "interrupts": interrupts}


async def _choose(state: StateLike, chat_cls: type[ChatLike], props: dict[str, Any]) -> type[SlotLike] | None:
    """The first configuration whose ``enabled`` accepts the set; the default slot takes the rest (S20)."""
    for config_cls in chat_cls.configs:
        if _accepts(await state.get_state(config_cls), props["event"]):
            return config_cls
    return chat_cls.default_config


def _publish_slot(config: SlotLike) -> None:
    """S18: slot props go into the chat's slot only when the configuration renders in chat."""
    config.slot_props = ({"event": config.event, "interrupt": config.interrupt, "interrupts": config.interrupts,
                          "result": config.result} if config.render_in_chat else None)


def _accepts(config: SlotLike, event: dict[str, Any]) -> bool:
    try:
        return bool(config.enabled(event))
    except Exception:  # S16: a failing enabled() counts as False
        log.exception("%s.enabled raised; treating it as False", config.__class__.__name__)
        return False


async def run_handler(config: SlotLike, props: dict[str, Any]) -> Any:
    """The configuration's ``handler(props)`` (sync or async); None when it raises (S17)."""
    try:
        result = config.handler(props)
        if inspect.isawaitable(result):
            result = await result
        return result
    except Exception:  # S17: result is None when the handler fails
        log.exception("%s.handler failed; result is None", config.__class__.__name__)
        return None


async def tick_expiry(state: StateLike, chat_cls: type[ChatLike]) -> None:
    """Count expiring cards down once a second until they expire or the set goes away (S11).

    One countdown per tab and chat: a route, load, switch or answer while one runs leaves it to
    that one (it reads the cards afresh each second), so triggers never pile up loops.
    """
    key, mine = (tab_token(state), chat_cls.get_full_name()), object()
    async with state:
        if key in _COUNTDOWNS:
            return
        counting = await _refresh_expiry(state, chat_cls, None)
        if counting:
            _COUNTDOWNS[key] = mine
    try:
        while counting:
            await asyncio.sleep(1.0)
            async with state:
                session = (await chat_of(state, chat_cls))._session()
                counting = (session.tracker.pending is not None and not session.running
                            and await _refresh_expiry(state, chat_cls, session))
                if not counting:
                    _COUNTDOWNS.pop(key, None)  # in the lock: a trigger after this starts its own
    finally:
        if _COUNTDOWNS.get(key) is mine:
            del _COUNTDOWNS[key]


async def _refresh_expiry(state: StateLike, chat_cls: type[ChatLike], session: AgentSession | None) -> bool:
    """Refresh the active cards' clocks (with a session) and say whether one still counts down."""
    counting = False
    for config_cls in configs_of(chat_cls):
        config = await state.get_state(config_cls)
        if not (config.active and any(c.expires_at for c in config.cards)):
            continue
        if session is None:
            return True
        now = session.tracker.now()
        config.cards = [refresh_expiry(c, now) for c in config.cards]
        counting = counting or any(c.expires_at and not c.expired for c in config.cards)
    return counting
