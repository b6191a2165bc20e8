"""A chat that shows a run nobody drives any more (its worker died) ends it as failed (``interrupt_chat.tab.orphans``).

Without Redis the registry is local: a run this process does not hold is dead. The state is a copy
as another worker left it: a session pickled mid-run (no live run, no claim) and ``status == "running"``.
"""

from __future__ import annotations

import pickle

import pytest
import reflex as rx

from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.tab import orphans
from interrupt_chat.tab.live import live_of
from interrupt_chat.workers import runs

AGENT = "http://127.0.0.1:9/"  # never reached


@pytest.fixture(scope="module")
def chat_cls() -> type[ChatState]:
    return new_chat_state("unit-test-orphans", agent_url=AGENT, configs=[])


@pytest.fixture(autouse=True)
def _no_grace(monkeypatch):
    monkeypatch.setattr(orphans, "GRACE_SECONDS", 0.0)
    monkeypatch.setattr(runs, "_registry", runs.Registry(redis_url=""))


def left_running(chat_cls: type[ChatState]) -> ChatState:
    """A chat whose run another worker was driving: the shared state's copy of it."""
    chat: ChatState = rx.State().get_substate(chat_cls.get_full_name().split("."))
    session = chat._session()
    session.send("hello")  # claimed: about to run (a generator nobody iterates)
    chat._sessions = {session.thread_id: pickle.loads(pickle.dumps(session))}  # the copy drops the claim
    chat.status = "running"
    return chat


async def test_a_run_nobody_drives_ends_as_failed_and_keeps_the_thread(chat_cls):
    chat = left_running(chat_cls)
    await orphans.watch(chat, chat_cls)
    assert chat.status == "error" and chat.error == orphans.ORPHANED_MESSAGE
    assert chat.locked is False and not chat._session().running
    assert [row.role for row in live_of(chat).live] == ["user"] and live_of(chat).live[0].content == "hello"


async def test_a_run_this_process_drives_is_left_to_its_driver(chat_cls):
    chat = left_running(chat_cls)
    key = await orphans.key_of(chat, chat_cls)
    session = chat._session()
    await runs.add(key, session)
    try:
        await orphans.watch(chat, chat_cls)
    finally:
        await runs.remove(key, session)
    assert chat.status == "running" and chat.error == ""


async def test_a_run_that_ended_meanwhile_is_not_touched(chat_cls):
    chat = left_running(chat_cls)
    chat.status = "idle"
    await orphans.watch(chat, chat_cls)
    assert chat.status == "idle" and chat.error == ""
