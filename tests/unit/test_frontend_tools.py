"""Frontend tools and shared state in the core (rules S26-S32 of docs/semantics.md).

The agent is scripted (tests/unit/agents.py) and served in process or on a loopback port; the
session is the real :class:`AgentSession`.
"""

from __future__ import annotations

import json
import pickle
import time

import httpx
import pytest
from ag_ui.core import Context

from interrupt_chat.agui import AgentClient, AgentSession, ToolCallNotWaiting
from interrupt_chat.agui.frontend_tools import FrontendTool
from interrupt_chat.agui.records import session_from_record, session_record
from interrupt_chat.store.threads_db import ThreadDB
from tests.unit.agents import ScriptedAgent, echo_run, serve_in_thread, text, tool_call

STEPS = FrontendTool(
    name="generate_task_steps", description="Ask the person to pick the steps to run.",
    parameters={"type": "object", "required": ["steps"], "properties": {"steps": {"type": "array", "items": {
        "type": "object", "required": ["description", "status"],
        "properties": {"description": {"type": "string"}, "status": {"enum": ["enabled", "disabled"]}}}}}})
PLAN = {"steps": [{"description": "Boil water", "status": "enabled"}, {"description": "Add salt", "status": "enabled"}]}


def started(body: dict) -> dict:
    return {"type": "RUN_STARTED", "threadId": body["threadId"], "runId": body["runId"]}


def finished(body: dict) -> dict:
    return {"type": "RUN_FINISHED", "threadId": body["threadId"], "runId": body["runId"]}


def calls(*specs: tuple[str, str, object]):
    """A run that ends with tool calls (id, name, args) and no results: the client must answer."""
    def run(body: dict) -> list[dict]:
        events = [started(body), *text(f"{body['runId']}-m", "")]
        for call_id, name, args in specs:
            events += tool_call(call_id, name, args, parent=f"{body['runId']}-m") if isinstance(args, dict) else [
                {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name,
                 "parentMessageId": f"{body['runId']}-m"},
                {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": str(args)},
                {"type": "TOOL_CALL_END", "toolCallId": call_id}]
        return [*events, finished(body)]
    return run


def session_for(agent: ScriptedAgent, tools: list[FrontendTool]) -> AgentSession:
    client = AgentClient("http://agent.test/", transport=httpx.ASGITransport(app=agent))
    return AgentSession(client, thread_id="t1", tools=tools)


async def drain(stream) -> list:
    return [event async for event in stream]


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def test_s26_declared_tools_go_with_every_run():
    agent = ScriptedAgent(echo_run, echo_run)
    session = session_for(agent, [STEPS])
    await drain(session.send("a"))
    await drain(session.send("b"))
    for body in agent.bodies:
        assert body["tools"] == [{"name": STEPS.name, "description": STEPS.description,
                                  "parameters": STEPS.parameters}]
    assert session.tool_waits == []


async def test_s26_no_declared_tools_sends_an_empty_list_and_leaves_calls_alone():
    agent = ScriptedAgent(calls(("c1", "search", {"q": "x"})))
    session = session_for(agent, [])
    await drain(session.send("a"))
    assert agent.bodies[0]["tools"] == []
    assert session.tool_waits == [] and session.transcript.tool_calls["c1"].result is None


async def test_s27_a_call_to_a_frontend_tool_waits_and_survives_pickle_and_record():
    agent = ScriptedAgent(calls(("c1", STEPS.name, PLAN)))
    session = session_for(agent, [STEPS])
    await drain(session.send("plan dinner"))
    assert [(w.tool_call_id, w.name, w.args) for w in session.tool_waits] == [("c1", STEPS.name, PLAN)]
    assert len(agent.bodies) == 1  # nothing runs while the person decides
    assert session.transcript.tool_calls["c1"].status == "awaiting_approval"  # drawn as waiting
    restored = pickle.loads(pickle.dumps(session))
    assert [w.tool_call_id for w in restored.tool_waits] == ["c1"]
    from_db = session_from_record(json.loads(json.dumps(session_record(session))))
    assert [(w.tool_call_id, w.args) for w in from_db.tool_waits] == [("c1", PLAN)]
    assert from_db.transcript.tool_calls["c1"].status == "awaiting_approval"
    with ThreadDB("sqlite:///:memory:") as db:  # a backend restart: the thread database's copy
        db.overwrite("alice", session)
        stored = db.load("alice", "t1")
    assert stored is not None and [(w.tool_call_id, w.args) for w in stored.tool_waits] == [("c1", PLAN)]


async def test_s27_a_waiting_call_counts_as_pending_in_the_thread_list_and_the_inbox():
    agent = ScriptedAgent(calls(("c1", STEPS.name, PLAN), ("c2", STEPS.name, PLAN)))
    session = session_for(agent, [STEPS])
    await drain(session.send("plan dinner"))
    with ThreadDB("sqlite:///:memory:") as db:
        db.overwrite("alice", session)
        [summary] = db.threads("alice")
        assert summary.pending and summary.pending_count == 2  # the thread list's pending badge
        assert db.pending("alice") == []  # interrupts only
        first, second = db.tool_waits("alice")  # the approvals inbox's tool-call rows
        assert [(w.thread_id, w.tool_call_id, w.tool_name) for w in (first, second)] == [
            ("t1", "c1", STEPS.name), ("t1", "c2", STEPS.name)]
        raised = first.raised_at
        assert raised is not None
        async for _ in session.respond("c1", {"steps": []}):  # one of the two answered: nothing new is asked
            pass
        db.overwrite("alice", session)
        [left] = db.tool_waits("alice")
        assert left.tool_call_id == "c2" and left.raised_at == raised and db.threads("alice")[0].pending_count == 1
        async for _ in session.respond("c2", {"steps": []}):
            pass
        db.overwrite("alice", session)
        assert db.tool_waits("alice") == [] and not db.threads("alice")[0].pending


async def test_s27_the_inbox_reads_interrupts_and_waiting_calls_in_one_query_newest_thread_first():
    from sqlalchemy import event

    from tests.unit.test_threads_db import interrupted

    session = session_for(ScriptedAgent(calls(("c1", STEPS.name, PLAN))), [STEPS])
    await drain(session.send("plan dinner"))
    with ThreadDB("sqlite:///:memory:") as db:
        db.overwrite("alice", session)  # t1: a call waits
        time.sleep(0.01)
        db.overwrite("alice", interrupted("t2"))  # t2, newer: interrupts are pending
        queries: list[str] = []
        event.listen(db._engine, "before_cursor_execute", lambda *args: queries.append(args[2]))
        items = db.waiting("alice")
        assert len([q for q in queries if q.lstrip().upper().startswith("SELECT")]) == 1
    assert [(item.thread_id, type(item).__name__) for item in items] == [
        ("t2", "PendingItem"), ("t2", "PendingItem"), ("t2", "PendingItem"), ("t1", "WaitingToolCall")]


async def test_s28_respond_sends_the_result_once_in_the_next_run():
    agent = ScriptedAgent(calls(("c1", STEPS.name, PLAN)), echo_run)
    session = session_for(agent, [STEPS])
    await drain(session.send("plan dinner", message_id="u1"))
    chosen = {"steps": [PLAN["steps"][0]]}
    events = await drain(session.respond("c1", chosen))
    assert events and session.transcript.status == "finished" and session.tool_waits == []
    assert session.transcript.tool_calls["c1"].status == "complete"
    second = agent.bodies[1]
    assert tool_messages(second) == [{"id": "result-c1", "role": "tool", "toolCallId": "c1",
                                      "content": json.dumps(chosen)}]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]
    with pytest.raises(ToolCallNotWaiting):
        session.respond("c1", chosen)  # a double click: refused, nothing sent
    assert len(agent.bodies) == 2


async def test_s28_the_next_run_waits_for_every_call_of_the_run():
    agent = ScriptedAgent(calls(("c1", STEPS.name, PLAN), ("c2", STEPS.name, PLAN)), echo_run)
    session = session_for(agent, [STEPS])
    await drain(session.send("two plans"))
    assert await drain(session.respond("c1", "first")) == []
    assert len(agent.bodies) == 1 and [w.tool_call_id for w in session.tool_waits] == ["c2"]
    await drain(session.respond("c2", "second"))
    assert [(m["toolCallId"], m["content"]) for m in tool_messages(agent.bodies[1])] == [("c1", "first"),
                                                                                        ("c2", "second")]


@pytest.mark.parametrize(("call", "error"), [
    (("c1", "launch_rockets", {}), "is not available in this chat"),
    (("c1", STEPS.name, {"steps": [{"description": "x", "status": "maybe"}]}), "do not fit the tool's parameters"),
    (("c1", STEPS.name, "{not json"), "not valid JSON"),
])
async def test_s29_a_call_that_cannot_be_answered_gets_an_error_result(call, error):
    agent = ScriptedAgent(calls(call), echo_run)
    session = session_for(agent, [STEPS])
    await drain(session.send("go"))
    assert session.tool_waits == [] and len(agent.bodies) == 1  # not waiting, and no run on its own
    result = json.loads(session.transcript.tool_calls["c1"].result)
    assert error in result["error"]
    await drain(session.send("next"))
    assert tool_messages(agent.bodies[1])[0]["toolCallId"] == "c1"


async def test_s30_handler_tools_answer_on_the_server_and_continue():
    seen = []

    async def weather(args):
        seen.append(args)
        return {"city": args["city"], "sky": "clear"}

    tool = FrontendTool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}},
                        handler=weather)
    agent = ScriptedAgent(calls(("c1", "get_weather", {"city": "Oslo"})), echo_run)
    session = session_for(agent, [tool])
    await drain(session.send("weather?"))
    assert session.needs_handlers
    await drain(session.answer_handlers())
    assert seen == [{"city": "Oslo"}] and session.tool_waits == []
    assert json.loads(tool_messages(agent.bodies[1])[0]["content"]) == {"city": "Oslo", "sky": "clear"}


async def test_s29_a_raising_handler_is_an_error_result_not_a_stuck_chat():
    def broken(args):
        raise RuntimeError("sensor offline")

    tool = FrontendTool("get_weather", handler=broken)
    agent = ScriptedAgent(calls(("c1", "get_weather", {})), echo_run)
    session = session_for(agent, [tool])
    await drain(session.send("weather?"))
    await drain(session.answer_handlers())
    content = json.loads(tool_messages(agent.bodies[1])[0]["content"])
    assert "sensor offline" in content["error"]


async def test_s30_handler_runs_in_a_row_are_capped():
    tool = FrontendTool("ping", handler=lambda args: "pong")
    loop = [calls((f"c{i}", "ping", {})) for i in range(10)]
    agent = ScriptedAgent(*loop)
    session = session_for(agent, [tool])
    await drain(session.send("ping forever"))
    while session.needs_handlers:
        await drain(session.answer_handlers())
    assert len(agent.bodies) == 6  # the person's run, then five automatic ones
    assert session.error and "5 runs in a row" in session.error


async def test_s31_decline_sends_a_cancelled_result_unless_the_tool_needs_an_answer():
    strict = FrontendTool("sign", cancellable=False)
    agent = ScriptedAgent(calls(("c1", STEPS.name, PLAN), ("c2", "sign", {})), echo_run)
    session = session_for(agent, [STEPS, strict])
    await drain(session.send("go"))
    with pytest.raises(ToolCallNotWaiting):
        session.decline("c2")
    assert await drain(session.decline("c1")) == []
    await drain(session.respond("c2", "signed"))
    results = {m["toolCallId"]: m["content"] for m in tool_messages(agent.bodies[1])}
    assert json.loads(results["c1"])["cancelled"] is True and results["c2"] == "signed"


async def test_s27_a_call_bound_to_an_interrupt_does_not_wait_as_a_tool():
    def approval(body):
        run = calls(("c1", STEPS.name, PLAN))(body)
        run[-1]["outcome"] = {"type": "interrupt", "interrupts": [
            {"id": "int-c1", "reason": "tool_call", "toolCallId": "c1", "message": "Run these steps?"}]}
        return run

    session = session_for(ScriptedAgent(approval), [STEPS])
    await drain(session.send("go"))
    assert session.tracker.pending is not None and session.tool_waits == []


async def test_s29_a_call_an_interrupt_names_in_its_metadata_is_held_not_answered_with_an_error():
    def confirmation(body):  # ADK's shape: the interrupt is about a call of its own and names the real one
        run = calls(("c1", "delete_files", {"count": 3}), ("adk-1", "adk_request_confirmation", {}),
                    ("c2", "undeclared", {}))(body)
        run[-1]["outcome"] = {"type": "interrupt", "interrupts": [
            {"id": "adk-1", "reason": "confirmation", "toolCallId": "adk-1", "message": "Delete 3 files?",
             "metadata": {"adk": {"originalFunctionCall": {"id": "c1", "name": "delete_files"}}}}]}
        return run

    session = session_for(ScriptedAgent(confirmation), [STEPS])
    await drain(session.send("clean up"))
    assert session.tracker.pending is not None and session.tool_waits == []
    assert session.transcript.tool_calls["c1"].result is None  # held by the interrupt: the agent's business
    assert "not available in this chat" in session.transcript.tool_calls["c2"].result  # any other: S29


async def test_s32_state_context_and_forwarded_props_come_from_the_app():
    agent = ScriptedAgent(echo_run)
    session = session_for(agent, [])
    session.set_state({"recipe": {"title": "Pancakes"}})
    session.context = [Context(description="the user's diet", value="vegetarian")]
    session.forwarded_props = {"locale": "nb-NO"}
    await drain(session.send("a"))
    body = agent.bodies[0]
    assert body["state"] == {"recipe": {"title": "Pancakes"}}
    assert body["context"] == [{"description": "the user's diet", "value": "vegetarian"}]
    assert body["forwardedProps"] == {"locale": "nb-NO"}


def test_a_tool_must_have_a_name_and_a_valid_schema():
    with pytest.raises(ValueError, match="needs a name"):
        FrontendTool("")
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        FrontendTool("x", parameters={"type": "no-such-type"})


async def test_s28_round_trip_over_a_loopback_agent():
    agent = ScriptedAgent(calls(("c1", STEPS.name, PLAN)), echo_run)
    with serve_in_thread(agent) as url:
        session = AgentSession(url, thread_id="t1", tools=[STEPS])
        await drain(session.send("plan"))
        await drain(session.respond("c1", PLAN))
    assert tool_messages(agent.bodies[1])[0]["content"] == json.dumps(PLAN)


def snapshot_calls(*calls_: tuple[str, str, dict, str | None]):
    """A run that brings its tool calls only inside a MESSAGES_SNAPSHOT (history + an assistant message with the
    calls + a tool message for each call given a result), as LangGraph's dojo agent sends ``confirm_changes``."""
    def run(body: dict) -> list[dict]:
        assistant = {"id": f"{body['runId']}-a", "role": "assistant", "toolCalls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for call_id, name, args, _ in calls_]}
        results = [{"id": f"{call_id}-r", "role": "tool", "toolCallId": call_id, "content": result}
                   for call_id, _, _, result in calls_ if result is not None]
        return [started(body), {"type": "MESSAGES_SNAPSHOT", "messages": [*body["messages"], assistant, *results]},
                finished(body)]
    return run


async def test_s27_a_call_that_first_appears_in_the_runs_snapshot_waits_unless_its_result_came_with_it():
    agent = ScriptedAgent(snapshot_calls(("c1", STEPS.name, PLAN, None), ("c2", STEPS.name, PLAN, "done")),
                          echo_run)
    session = session_for(agent, [STEPS])
    await drain(session.send("plan"))
    assert [w.tool_call_id for w in session.tool_waits] == ["c1"]  # c2's result came with it
    await drain(session.respond("c1", {"steps": []}))
    assert [m["toolCallId"] for m in tool_messages(agent.bodies[-1])] == ["c2", "c1"]  # c2 came first
    assert session.tool_waits == []
    await drain(session.send("again"))  # a later snapshot that repeats the history makes no call wait again
    assert session.tool_waits == []
