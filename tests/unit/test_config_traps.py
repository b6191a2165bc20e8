"""Traps in the extension API that a hostile (or just unlucky) client could spring.

Named after the items of the hardening work: 10 hooks as event handlers, 11 subclassed
configurations, 12 one configuration in two chats, 13 colliding chat keys, 14 a slow handler
under the state lock.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
import reflex as rx

from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import InterruptState
from tests.unit.test_state import Harness, agents  # noqa: F401 - the loopback demo agent fixture

pytestmark = pytest.mark.loopback


class ToolApprovals(InterruptState):
    """Takes tool approvals only."""

    def enabled(self, event: dict[str, Any]) -> bool:
        value = event.get("value")
        return isinstance(value, dict) and value.get("reason") == "tool_call"

    def handler(self, props: dict[str, Any]) -> Any:
        return {"base": True}


class StrictToolApprovals(ToolApprovals):
    """A subclass of a configuration: its own vars and handlers, the parent's ``enabled``."""

    def handler(self, props: dict[str, Any]) -> Any:
        return {"strict": True, "base": super().handler(props)["base"]}


class Lonely(InterruptState):
    """Attached to one chat only; passing it to a second chat is an error."""


class Sleepy(InterruptState):
    """A slow async handler: the tab must not freeze while it runs."""

    async def handler(self, props: dict[str, Any]) -> Any:
        await asyncio.sleep(0.5)
        return "slept"


def test_item10_enabled_and_handler_are_not_event_handlers():
    for config in (InterruptState, ToolApprovals, StrictToolApprovals):
        handlers = set(getattr(config, "event_handlers", {}))
        assert "enabled" not in handlers and "handler" not in handlers, config
    assert {"resolve", "cancel", "submit_form", "approve_edited"} <= set(StrictToolApprovals.event_handlers)
    assert not isinstance(ToolApprovals.__dict__.get("enabled"), rx.event.EventHandler)


async def test_item11_a_subclassed_configuration_has_its_own_state_and_handlers(agents):  # noqa: F811
    base_chat = new_chat_state("unit-test-trap-base", agent_url=agents.url, configs=[ToolApprovals])
    strict_chat = new_chat_state("unit-test-trap-strict", agent_url=agents.url, configs=[StrictToolApprovals])
    assert StrictToolApprovals.get_full_name() != ToolApprovals.get_full_name()
    assert StrictToolApprovals.get_parent_state() is not ToolApprovals  # not a substate sharing its vars
    for name in ("resolve", "cancel", "submit_form", "approve_edited"):
        assert getattr(StrictToolApprovals, name).state_full_name == StrictToolApprovals.get_full_name(), name
    assert StrictToolApprovals._chat() is strict_chat and ToolApprovals._chat() is base_chat

    h = Harness(strict_chat, agents.store)
    await h.send("approval")
    strict, base = await h.chat.get_state(StrictToolApprovals), await h.chat.get_state(ToolApprovals)
    assert strict.active and strict.result == {"strict": True, "base": True} and not base.active
    await strict_chat.configs[0].resolve.fn(strict, {"approved": True}, None)
    assert h.chat.status == "idle" and strict.active is False
    assert h.records()[-1]["resume"][0]["payload"] == {"approved": True}


def test_item12_a_configuration_serves_one_chat():
    new_chat_state("unit-test-trap-lonely-1", agent_url="http://127.0.0.1:9/one/", configs=[Lonely])
    with pytest.raises(ValueError, match=re.escape("Lonely already serves the chat for http://127.0.0.1:9/one/")):
        new_chat_state("unit-test-trap-lonely-2", agent_url="http://127.0.0.1:9/two/", configs=[Lonely])
    assert Lonely._chat().agent_url == "http://127.0.0.1:9/one/"


class Owned(InterruptState):
    """A configuration of a chat that also has an owner function."""


def _owner(chat) -> str:
    return "user-7"


def test_a_chat_with_configurations_keeps_its_owner_function():
    chat_cls = new_chat_state("unit-test-trap-owned", agent_url="http://127.0.0.1:9/owned/", configs=[Owned],
                              owner=_owner)
    assert chat_cls.owner_fn is _owner  # it was overwritten by the configuration check's loop variable


def test_item13_chat_keys_that_clean_to_one_name_stay_apart():
    dash = new_chat_state("http://a-b:1/", agent_url="http://a-b:1/", configs=[])
    underscore = new_chat_state("http://a_b:1/", agent_url="http://a_b:1/", configs=[])
    assert dash is not underscore and dash.get_full_name() != underscore.get_full_name()
    assert (dash.agent_url, underscore.agent_url) == ("http://a-b:1/", "http://a_b:1/")
    assert new_chat_state("http://a-b:1/", agent_url="http://a-b:1/", configs=[]) is dash


async def test_item14_a_slow_handler_runs_outside_the_state_lock(agents):  # noqa: F811
    chat_cls = new_chat_state("unit-test-trap-sleepy", agent_url=agents.url, configs=[Sleepy])
    h = Harness(chat_cls, agents.store)
    held = []

    class Lock:  # records whether the lock is held while the handler sleeps
        depth = 0

        async def __aenter__(self):
            Lock.depth += 1

        async def __aexit__(self, *exc):
            Lock.depth -= 1

    original = Sleepy.handler

    async def watched(self, props):
        held.append(Lock.depth)
        return await original(self, props)

    Sleepy.handler = watched  # type: ignore[method-assign]
    h.chat.__class__.__aenter__ = Lock.__aenter__  # type: ignore[method-assign]
    h.chat.__class__.__aexit__ = Lock.__aexit__  # type: ignore[method-assign]
    try:
        started = time.monotonic()
        await h.send("legacy")
        assert held == [0], "the handler ran while the state lock was held"
        assert time.monotonic() - started >= 0.5
        assert (await h.chat.get_state(Sleepy)).result == "slept"
    finally:
        Sleepy.handler = original  # type: ignore[method-assign]
        del h.chat.__class__.__aenter__, h.chat.__class__.__aexit__
