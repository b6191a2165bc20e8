"""The current turn's rows live in a state of their own (interrupt_chat.tab.live).

Reflex re-renders every component that reads a state when any var of that state changes; these
tests check which states a push changes, as Reflex computes the delta it sends to the page.
"""

from __future__ import annotations

import reflex as rx

from interrupt_chat.agui import AgentSession
from interrupt_chat.agui.events import parse_event
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.tab import driver
from interrupt_chat.tab.live import LiveTurn, live_of


def tab():
    chat_cls = new_chat_state("unit-test-live", agent_url="http://127.0.0.1:9/", configs=[])
    root = rx.State()
    chat = root.get_substate(chat_cls.get_full_name().split("."))
    session = AgentSession("http://127.0.0.1:9/", thread_id="t-live")
    chat._sessions, chat.thread_id = {"t-live": session}, "t-live"
    return root, chat, session


def apply(session: AgentSession, kind: str, **fields) -> None:
    event = parse_event({"type": kind, **fields})
    assert event is not None
    session.transcript.apply(event)


def test_each_chat_class_has_its_own_live_state():
    chat_cls = new_chat_state("unit-test-live", agent_url="http://127.0.0.1:9/", configs=[])
    other = new_chat_state("unit-test-live-other", agent_url="http://127.0.0.1:9/", configs=[])
    assert issubclass(chat_cls.live_state, LiveTurn) and chat_cls.live_state is not other.live_state
    assert "live" not in chat_cls.get_fields() and "live" in chat_cls.live_state.get_fields()


async def test_a_push_of_the_current_turn_changes_only_the_live_state():
    root, chat, session = tab()
    session.transcript.mark_tail()
    session._claim()  # a run in flight, as send() leaves it
    apply(session, "RUN_STARTED", threadId="t-live", runId="r1")
    await driver.publish(chat, session, full=True)
    root.get_delta()
    root._clean()

    apply(session, "TEXT_MESSAGE_START", messageId="m1", role="assistant")
    apply(session, "TEXT_MESSAGE_CONTENT", messageId="m1", delta="Hello")
    await driver.publish(chat, session)
    delta = root.get_delta()
    assert list(delta) == [chat.live_state.get_full_name()], delta  # the chat's own components are not re-rendered
    assert [row.content for row in live_of(chat).live] == ["Hello"]

    root._clean()
    apply(session, "TEXT_MESSAGE_END", messageId="m1")
    apply(session, "RUN_FINISHED", threadId="t-live", runId="r1")
    session._claimed = False  # the run is over
    await driver.publish(chat, session)
    assert root.get_delta()[chat.get_full_name()]["status_rx_state_"] == "idle"  # the run's end: the status too
