"""The AG-UI repository's server-starter-all-features example, unmodified (examples/server_starter), served on
127.0.0.1 and driven through our client core: every path runs to the end, with what it emits differently from
our demo agent (tool calls without ``parentMessageId``, calls that come only inside a ``MESSAGES_SNAPSHOT``,
state by snapshot and delta, ``PredictState``) landing where the dojo pages read it (issue 26)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from interrupt_chat.agui import AgentClient, AgentSession
from interrupt_chat.agui.frontend_tools import FrontendTool, FrontendTools
from tests.unit.agents import serve_server_starter

pytestmark = pytest.mark.loopback

@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_server_starter() as url:
        yield url


def _session(base: str, feature: str, tools: tuple[str, ...] = ()) -> AgentSession:
    session = AgentSession(AgentClient(f"{base}/{feature}", read_timeout=30))
    session.tools = FrontendTools([FrontendTool(name, name, {"type": "object"}) for name in tools])
    return session


async def _send(session: AgentSession, text: str) -> AgentSession:
    async for _ in session.send(text):
        pass
    assert session.error is None, session.error
    return session


def _calls(session: AgentSession) -> dict[str, object]:
    return {c.name: c for c in session.transcript.tool_calls.values()}


async def test_every_path_runs_through_the_core(base):
    chat, steps, progress, recipe, weather, haiku, document = await asyncio.gather(
        _send(_session(base, "agentic_chat"), "hello"),
        _send(_session(base, "human_in_the_loop", ("generate_task_steps",)), "Hi"),
        _send(_session(base, "agentic_generative_ui"), "Hi"),
        _send(_session(base, "shared_state"), "Please give me a pasta recipe"),
        _send(_session(base, "backend_tool_rendering"), "weather?"),
        _send(_session(base, "tool_based_generative_ui"), 'Generate Haiku for "I will always win"'),
        _send(_session(base, "predictive_state_updates", ("confirm_changes",)), "Write a story"))
    answer = chat.transcript.messages[-1].content
    assert answer.startswith("counting down: 10") and answer.endswith("✓")
    # a frontend tool call without parentMessageId: on an assistant message of its own, waiting for the person
    [wait] = steps.tool_waits
    assert wait.name == "generate_task_steps" and len(wait.args["steps"]) == 10
    assert steps.transcript.messages[-1].role == "assistant" and steps.transcript.messages[-1].tool_call_ids
    # STATE_SNAPSHOT, ten STATE_DELTA, a last snapshot: every step completed
    assert [s["status"] for s in progress.transcript.state["steps"]] == ["completed"] * 10
    assert recipe.transcript.state["recipe"]["ingredients"][2]["name"] == "Salt"
    # calls that come only inside a MESSAGES_SNAPSHOT, their results with them: drawn, nothing waits
    forecast = _calls(weather)["get_weather"]
    assert forecast.args == {"city": "San Francisco"} and json.loads(forecast.result)["conditions"] == "sunny"
    poem = _calls(haiku)["generate_haiku"]
    assert poem.args["english"][2] == "CopilotKit." and poem.result == "Haiku created" and not haiku.tool_waits
    # PredictState: the document followed write_document_local's argument; confirm_changes waits
    assert document.transcript.state["document"].startswith("Once upon a time, there was a dog named")
    assert [w.name for w in document.tool_waits] == ["confirm_changes"]


async def test_rejecting_the_predicted_document_restores_it_and_the_agent_answers(base):
    session = _session(base, "predictive_state_updates", ("confirm_changes",))
    session.transcript.state = {"document": "my draft"}
    await _send(session, "Write a story")
    assert session.transcript.state["document"].startswith("Once upon a time")
    [wait] = [w for w in session.tool_waits if w.name == "confirm_changes"]
    async for _ in session.respond(wait.tool_call_id, {"accepted": False}):
        pass
    assert session.transcript.state == {"document": "my draft"}  # S35
    assert session.transcript.messages[-1].content == "Ok!"
