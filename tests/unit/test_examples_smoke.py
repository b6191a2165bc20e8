"""Smoke tests of the LLM-free example producers (examples/), run in-process over httpx.ASGITransport."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

pytest.importorskip("ag_ui_langgraph", reason="needs requirements-examples.txt")
pytest.importorskip("pydantic_ai", reason="needs requirements-examples.txt")

from ag_ui.core import RunAgentInput

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples import langgraph_agent, pydantic_ai_agent  # noqa: E402


def body(thread: str, run: str, messages: list[dict], resume: list | None = None, forwarded: dict | None = None):
    return RunAgentInput(
        thread_id=thread, run_id=run, protocol_version="1.0", state={}, tools=[], context=[],
        forwarded_props=forwarded or {}, messages=messages, resume=resume,
    ).model_dump(by_alias=True, exclude_none=True)


async def run(app: Any, path: str, payload: dict) -> list[dict]:
    async with (httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client,
                aconnect_sse(client, "POST", path, json=payload, headers={"Accept": "text/event-stream"}) as src):
        assert src.response.status_code == 200
        return [json.loads(sse.data) async for sse in src.aiter_sse()]


def finished(events: list[dict]) -> dict:
    assert events[0]["type"] == "RUN_STARTED", events[0]
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events[-1]


def interrupts(events: list[dict]) -> list[dict]:
    outcome = finished(events).get("outcome") or {}
    return outcome.get("interrupts", []) if outcome.get("type") == "interrupt" else []


def legacy_values(events: list[dict]) -> list[Any]:
    return [json.loads(e["value"]) for e in events if e["type"] == "CUSTOM" and e["name"] == "on_interrupt"]


def last_assistant_text(events: list[dict]) -> str:
    snapshots = [e["messages"] for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
    return [m for m in snapshots[-1] if m["role"] == "assistant"][-1]["content"]


USER = [{"id": "u1", "role": "user", "content": "delete my files"}]


# --- LangGraph -------------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_langgraph_legacy_interrupt_is_custom_event_only():
    events = await run(langgraph_agent.create_app(), "/legacy/approval", body("t-legacy", "r1", USER))
    assert "outcome" not in finished(events)
    [value] = legacy_values(events)
    assert value["reason"] == "confirmation"
    assert value["responseSchema"]["required"] == ["approved"]


@pytest.mark.asyncio
async def test_langgraph_std_interrupt_on_both_channels():
    events = await run(langgraph_agent.create_app(), "/std/form", body("t-form", "r1", USER))
    [interrupt] = interrupts(events)
    assert interrupt["reason"] == "input_required"
    assert set(interrupt["responseSchema"]["properties"]) == {"name", "count"}
    assert [v["reason"] for v in legacy_values(events)] == ["input_required"]


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["std", "legacy"])
async def test_langgraph_approve_resume(mode):
    app = langgraph_agent.create_app()
    first = await run(app, f"/{mode}/approval", body("t-approve", "r1", USER))
    if mode == "std":
        [interrupt] = interrupts(first)
        answer = {"resume": [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]}
    else:
        assert legacy_values(first)
        answer = {"forwarded": {"command": {"resume": {"approved": True}}}}
    second = await run(app, f"/{mode}/approval", body("t-approve", "r2", USER, **answer))
    assert interrupts(second) == []
    assert last_assistant_text(second) == "approved: True"


@pytest.mark.asyncio
async def test_langgraph_multi_interrupt_resume_workaround():
    app = langgraph_agent.create_app()
    first, second = interrupts(await run(app, "/std/multi", body("t-multi", "r1", USER)))
    resume = [
        {"interruptId": first["id"], "status": "resolved", "payload": {"approved": True}},
        {"interruptId": second["id"], "status": "cancelled"},
    ]
    events = await run(app, "/std/multi", body("t-multi", "r2", USER, resume=resume))
    assert interrupts(events) == []
    assert last_assistant_text(events) == "first: approved: True; second: cancelled"


# --- pydantic-ai -----------------------------------------------------------------------------------------------


def assistant_with_tool_calls(events: list[dict]) -> dict:
    """The assistant message a resume must carry, rebuilt from TOOL_CALL_START/ARGS."""
    calls: dict[str, dict] = {}
    parent = None
    for e in events:
        if e["type"] == "TOOL_CALL_START":
            parent = e["parentMessageId"]
            calls[e["toolCallId"]] = {"id": e["toolCallId"], "type": "function",
                                      "function": {"name": e["toolCallName"], "arguments": ""}}
        elif e["type"] == "TOOL_CALL_ARGS":
            calls[e["toolCallId"]]["function"]["arguments"] += e["delta"]
    return {"id": parent, "role": "assistant", "toolCalls": list(calls.values())}


@pytest.mark.asyncio
async def test_pydantic_ai_tool_call_interrupt():
    events = await run(pydantic_ai_agent.create_app(), "/", body("t-pai", "r1", USER))
    [interrupt] = interrupts(events)
    assert interrupt["reason"] == "tool_call"
    assert interrupt["id"] == f"int-{interrupt['toolCallId']}"
    assert "editedArgs" in interrupt["responseSchema"]["properties"]
    assert not legacy_values(events)


@pytest.mark.asyncio
async def test_pydantic_ai_approve_resume():
    app = pydantic_ai_agent.create_app()
    first = await run(app, "/", body("t-pai", "r1", USER))
    [interrupt] = interrupts(first)
    history = [*USER, assistant_with_tool_calls(first)]
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    events = await run(app, "/", body("t-pai", "r2", history, resume=resume))
    assert finished(events)["outcome"] == {"type": "success"}
    [result] = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == interrupt["toolCallId"]
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Tool said: deleted 3 files in /tmp/demo"
