"""Issue 38 §4: a person never answers a frontend tool that the app answers on the server (``handle``).

The refusal follows the tool's class, not the thread's state: a fresh backend state restored from
the database (a restart, before the page reloads) refuses ``respond``, ``decline`` and ``submit``
for such a call just as a tab does while the handler runs. The agent is the demo agent on loopback,
whose store records every request it got: that is how "nothing was sent" is checked.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from interrupt_chat.agui import AgentSession
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.demo.agent import DemoStore
from interrupt_chat.tab.tools import FrontendToolState, answered_on_server, attach
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

pytestmark = pytest.mark.loopback

FORGED = "forged-by-the-page"


class ServerClock(FrontendToolState):
    """The demo's ``get_time``, answered on the server."""

    tool_name: ClassVar[str] = "get_time"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"timezone": {"type": "string"}}}

    @staticmethod
    async def handle(args: Any) -> Any:
        return {"time": "12:00", "timezone": args["timezone"]}


class PersonSteps(FrontendToolState):
    """The demo's ``generate_task_steps``, answered by a person."""

    tool_name: ClassVar[str] = "generate_task_steps"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"steps": {"type": "array"}}}


@pytest.fixture(scope="module")
def chat_cls(agent) -> type[ChatState]:
    return new_chat_state("sec-tools", agent_url=agent[0], configs=[], tools=[ServerClock, PersonSteps])


def _sent(store: DemoStore, thread_id: str) -> str:
    return json.dumps(store.records(thread_id))


@pytest.mark.parametrize("in_flight", [False, True])
async def test_a_restored_state_refuses_a_persons_answer_to_a_server_side_tool(chat_cls, agent, database, in_flight):
    owner = f"{Tab(chat_cls, agent[1]).owner}|{chat_cls.get_full_name()}"
    session = attach(AgentSession(agent[0]), chat_cls)
    async for _ in session.send("clock"):
        pass
    [wait] = session.tool_waits
    assert wait.name == "get_time" and session.needs_handlers
    database.save(owner, session, revision=0, in_flight=in_flight)  # the run's end, saved; then the worker died
    tab = Tab(chat_cls, agent[1])  # a fresh state after the restart: the page has not reloaded
    tool = await tab.tool(ServerClock)
    await ServerClock.respond.fn(tool, wait.tool_call_id, FORGED)
    await ServerClock.decline.fn(tool, wait.tool_call_id)
    await ServerClock.submit.fn(tool, {"tool_call_id": wait.tool_call_id, "result": FORGED})
    steps = await tab.tool(PersonSteps)  # another tool's events, naming the server's call
    await PersonSteps.respond.fn(steps, wait.tool_call_id, FORGED)
    assert len(agent[1].records(session.thread_id)) == 1 and FORGED not in _sent(agent[1], session.thread_id)
    stored = database.load(owner, session.thread_id)
    assert stored is not None and [w.tool_call_id for w in stored.tool_waits] == [wait.tool_call_id]
    await tab.load()  # the server answers it, once
    assert len(agent[1].records(session.thread_id)) == 2 and FORGED not in _sent(agent[1], session.thread_id)
    assert "12:00" in _sent(agent[1], session.thread_id)


async def test_a_person_still_answers_a_person_tool(chat_cls, agent):
    assert answered_on_server(chat_cls, "get_time") and not answered_on_server(chat_cls, "generate_task_steps")
    tab = await Tab(chat_cls, agent[1]).load()
    await tab.send("steps")
    [row] = tab.chat.tool_waits
    await PersonSteps.respond.fn(await tab.tool(PersonSteps), row.id, {"steps": []})
    assert len(tab.requests()) == 2 and tab.chat.tool_waits == []
