"""Frontend tools and shared state in the Reflex shell (rules S26-S32), without a browser.

The chat's states run under pytest as in ``test_state.py`` (handlers through ``Handler.fn``); the
agent is ``interrupt_chat.demo.agent`` on a loopback server, whose ``steps`` scenario calls the
frontend tool ``generate_task_steps`` and whose store records every request it received.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
import reflex as rx

from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.demo.agent import DemoStore
from interrupt_chat.tab.live import live_of
from interrupt_chat.tab.tools import FrontendToolState
from tests.unit.page import Page
from tests.unit.tabs import demo_agent_fixture  # noqa: F401 - the fixture

pytestmark = pytest.mark.loopback

STEP = {"type": "object", "required": ["description", "status"],
        "properties": {"description": {"type": "string"}, "status": {"enum": ["enabled", "disabled"]}}}


class Steps(FrontendToolState):
    """The demo's tool, declared by this test's own class (a tool state serves one chat)."""

    tool_name: ClassVar[str] = "generate_task_steps"
    description: ClassVar[str] = "Pick the steps."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "required": ["steps"],
                                            "properties": {"steps": {"type": "array", "items": STEP}}}

    def result(self, args: Any, form_data: dict[str, Any]) -> Any:
        return {"steps": [{**step, "status": "enabled" if form_data.get(f"step-{i}") else "disabled"}
                          for i, step in enumerate(args["steps"])]}


class Clock(FrontendToolState):
    """A tool answered on the server (S30): no card, the run goes on by itself."""

    tool_name: ClassVar[str] = "get_time"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"timezone": {"type": "string"}}}

    @staticmethod
    async def handle(args: Any) -> Any:
        return {"time": "12:00", "timezone": args["timezone"]}


@pytest.fixture(scope="module")
def chat_cls(agent) -> type[ChatState]:
    return new_chat_state("unit-test-tools", agent_url=agent[0], configs=[], tools=[Steps, Clock])


@pytest.fixture(autouse=True)
def page() -> Iterator[Page]:
    tab = Page()
    with tab.attached():
        yield tab


class Tab:
    """One tab: a fresh state tree, the chat and the tool's state."""

    def __init__(self, chat_cls: type[ChatState], store: DemoStore) -> None:
        self.cls, self.store = chat_cls, store
        root = rx.State()
        self.chat: ChatState = root.get_substate(chat_cls.get_full_name().split("."))
        self.tool: Steps = root.get_substate(Steps.get_full_name().split("."))  # type: ignore[assignment]

    async def send(self, text: str) -> None:
        await self.cls.send.fn(self.chat, {"text": text})

    def requests(self) -> list[dict[str, Any]]:
        return self.store.records(self.chat.thread_id)

    def waiting_id(self) -> str:
        [row] = self.chat.tool_waits
        return row.id


@pytest.fixture
def tab(chat_cls, agent) -> Tab:
    return Tab(chat_cls, agent[1])


def answer_text(tab: Tab, page: Page) -> str:
    """The last answer as the page shows it (its var holds a prefix; the rest came as chunks)."""
    return page.show([row for row in live_of(tab.chat).live if row.role == "assistant"][-1]).content


async def test_s26_s27_the_tool_is_offered_and_its_call_waits_and_locks_the_composer(tab: Tab):
    await tab.send("steps")
    [request] = tab.requests()
    assert [tool["name"] for tool in request["tools"]] == ["generate_task_steps", "get_time"]
    [row] = tab.chat.tool_waits
    assert row.name == "generate_task_steps" and len(row.args["steps"]) == 4
    assert tab.chat.locked is True and tab.chat.status == "interrupted"
    await tab.send("something else")
    assert tab.chat.notice == "Answer or cancel the agent's request first." and len(tab.requests()) == 1


async def test_s27_a_waiting_call_is_in_the_inbox_and_its_thread_is_pending(tab: Tab):
    await tab.send("steps")
    call_id = tab.waiting_id()
    await tab.cls.load_inbox.fn(tab.chat)
    [row] = tab.chat.inbox_tools
    assert (row.thread_id, row.id, row.name) == (tab.chat.thread_id, call_id, "generate_task_steps")
    assert "Delete the old reports" in row.args_json and tab.chat.inbox == []  # no interrupt card for it
    [thread] = [t for t in tab.chat.threads if t["id"] == tab.chat.thread_id]
    assert thread["pending"] == "true"
    await Steps.submit.fn(tab.tool, {"tool_call_id": call_id, "step-0": "on"})
    await tab.cls.load_inbox.fn(tab.chat)
    assert tab.chat.inbox_tools == []


async def test_s28_one_result_per_call_then_the_next_run(tab: Tab, page: Page):
    await tab.send("steps")
    call_id = tab.waiting_id()
    form = {"tool_call_id": call_id, "step-0": "on", "step-2": "on"}
    await Steps.submit.fn(tab.tool, form)
    await Steps.submit.fn(tab.tool, form)  # a double click: the call no longer waits, nothing is sent
    _, second = tab.requests()  # exactly two runs: the plan, and one answer
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["toolCallId"] == call_id
    assert [s["status"] for s in json.loads(result["content"])["steps"]] == ["enabled", "disabled", "enabled",
                                                                           "disabled"]
    assert tab.chat.tool_waits == [] and tab.chat.locked is False and tab.chat.status == "idle"
    assert answer_text(tab, page).startswith("Running 2 step(s)")


async def test_s31_declining_sends_a_cancelled_result(tab: Tab, page: Page):
    await tab.send("steps")
    await Steps.decline.fn(tab.tool, tab.waiting_id())
    [result] = [m for m in tab.requests()[1]["messages"] if m["role"] == "tool"]
    assert json.loads(result["content"])["cancelled"] is True
    assert answer_text(tab, page) == "All right, I will not do any of it."


async def test_s27_a_waiting_call_survives_a_state_round_trip(tab: Tab, chat_cls, agent):
    await tab.send("steps")
    call_id = tab.waiting_id()
    restored = Tab(chat_cls, agent[1])  # another tab of the same browser: the session as pickled
    restored.chat._sessions = pickle.loads(pickle.dumps(tab.chat._sessions))
    restored.chat.thread_id, restored.chat.loaded = tab.chat.thread_id, True
    await Steps.respond.fn(restored.tool, call_id, {"steps": []})
    assert len(restored.requests()) == 2
    assert [t["name"] for t in restored.requests()[1]["tools"]] == ["generate_task_steps", "get_time"]  # again


async def test_s32_the_app_sets_the_shared_state_the_next_run_sends(tab: Tab):
    await tab.send("hello")
    await tab.cls.set_agent_state.fn(tab.chat, {"recipe": "pancakes"})
    assert tab.chat.agent_state == {"recipe": "pancakes"}
    await tab.send("again")
    assert tab.requests()[-1]["state"] == {"recipe": "pancakes"}


async def test_s30_a_handler_tool_answers_on_the_server_and_the_run_goes_on(tab: Tab, page: Page):
    await tab.send("clock")
    first, second = tab.requests()
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert json.loads(result["content"]) == {"time": "12:00", "timezone": "UTC"}
    assert tab.chat.tool_waits == [] and tab.chat.locked is False and tab.chat.status == "idle"
    assert answer_text(tab, page) == "It is 12:00 in UTC."
    assert first["messages"][-1]["role"] == "user"
