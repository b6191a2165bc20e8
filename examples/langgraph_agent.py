"""LLM-free LangGraph agents served over AG-UI by ``ag-ui-langgraph`` (no model, no network).

Run::

    python -m examples.langgraph_agent --port 8123        # binds 127.0.0.1

In-process: ``from examples.langgraph_agent import app`` (or ``create_app()`` for a fresh app with empty
in-memory checkpointers).

Routes (POST a ``RunAgentInput``; the flow is picked by the route, the user's text is ignored)::

    /legacy/approval  /legacy/form  /legacy/multi     default flags: interrupts only as CUSTOM "on_interrupt",
                                                      RUN_FINISHED without outcome
    /std/approval     /std/form     /std/multi        emit_interrupt_outcome=True: the same CUSTOM events *and*
                                                      RUN_FINISHED.outcome = {type: "interrupt", interrupts: [...]}
    /legacy/subgraph  /std/subgraph                   a subgraph's node interrupts (below)

All of them are served by ``MultiResumeAgent`` (``LangGraphAgent`` plus the multi-interrupt resume workaround for
upstream issue #2178, see the class); legacy routes keep the default flags. Each route also answers
``GET <route>/health``. Flows (every graph uses its own ``MemorySaver``):

- ``approval``: ``interrupt({"reason": "confirmation", "message": ..., "responseSchema": {approved: boolean}})``,
  then the AI answers ``approved: True`` / ``approved: False`` / ``cancelled``.
- ``form``: ``interrupt({"reason": "input_required", "responseSchema": {name: string, count: integer}})``, then
  ``name=Ada count=3`` or ``cancelled``.
- ``multi``: START fans out to two nodes ``first`` and ``second`` that each call ``interrupt()`` (confirmation), so
  one run ends with two interrupts; after both are answered a join node answers e.g.
  ``first: approved: True; second: cancelled``.
- ``subgraph``: the parent's node ``flights_agent`` is a compiled subgraph whose node ``choose_flight`` asks a
  confirmation; the resume reaches that node through the parent (the answer reads as in ``approval``).

Resume with ``resume: [{interruptId, status: "resolved", payload}]`` (or ``status: "cancelled"``), or with the
legacy ``forwardedProps: {"command": {"resume": <payload>}}`` (no cancel, no ids: it cannot answer ``multi``).
Both work on both route families; a legacy client only lacks the interrupt ids. A cancelled entry reaches the node as
``{"__agui_cancelled__": True, "interrupt_id": ...}`` (the value ``interrupt()`` returns), which the nodes handle.
The answer is an ``AIMessage`` produced by a plain node: it reaches the client only in ``MESSAGES_SNAPSHOT``.
"""

from __future__ import annotations

from typing import Annotated, Any

from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict  # typing.TypedDict breaks schema generation on Python < 3.12

CANCELLED_KEY = "__agui_cancelled__"

APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}},
    "required": ["approved"],
}
FORM_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
    "required": ["name", "count"],
}


def _merge(left: dict | None, right: dict | None) -> dict:
    """Reducer so that parallel branches can each write their own key of ``answers``."""
    return {**(left or {}), **(right or {})}


class ChatState(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    answers: Annotated[dict, _merge]


def is_cancelled(answer: Any) -> bool:
    return isinstance(answer, dict) and bool(answer.get(CANCELLED_KEY))


def describe(answer: Any) -> str:
    """Render what a node received from ``interrupt()`` as the text the tests look for."""
    if is_cancelled(answer):
        return "cancelled"
    if isinstance(answer, dict) and "approved" in answer:
        return f"approved: {answer['approved']}"
    if isinstance(answer, dict) and {"name", "count"} <= answer.keys():
        return f"name={answer['name']} count={answer['count']}"
    return f"received: {answer!r}"


def _ask(key: str, value: dict):
    """A node that raises one interrupt and stores the answer under ``answers[key]``."""

    def node(state: ChatState) -> dict:
        return {"answers": {key: interrupt(value)}}

    node.__name__ = key
    return node


def _respond(keys: list[str]):
    """Final node: one AIMessage stating what every interrupt returned."""

    def respond(state: ChatState) -> dict:
        answers = state.get("answers") or {}
        if len(keys) == 1:
            text = describe(answers.get(keys[0]))
        else:
            text = "; ".join(f"{k}: {describe(answers.get(k))}" for k in keys)
        return {"messages": [AIMessage(content=text)]}

    return respond


def _confirmation(message: str) -> dict:
    return {"reason": "confirmation", "message": message, "responseSchema": APPROVAL_SCHEMA}


FLOWS: dict[str, dict[str, dict]] = {
    "approval": {"approve": _confirmation("Delete 3 files in /tmp/demo?")},
    "form": {
        "details": {
            "reason": "input_required",
            "message": "Who is ordering, and how many?",
            "responseSchema": FORM_SCHEMA,
        }
    },
    "multi": {
        "first": _confirmation("Send the report to Ada?"),
        "second": _confirmation("Send the report to Grace?"),
    },
}


def build_graph(flow: str):
    """Compile the graph of ``flow``; the interrupting nodes run in parallel (fan-out) when there are several."""
    if flow == "subgraph":
        return build_subgraph_graph()
    asks = FLOWS[flow]
    g = StateGraph(ChatState)
    for key, value in asks.items():
        g.add_node(key, _ask(key, value))
        g.add_edge(START, key)
    g.add_node("respond", _respond(list(asks)))
    g.add_edge(list(asks), "respond")  # join: waits for every branch
    g.add_edge("respond", END)
    return g.compile(checkpointer=MemorySaver())  # interrupts need a checkpointer


def build_subgraph_graph():
    """``subgraph``: the parent's node ``flights_agent`` is a compiled subgraph whose node ``choose_flight``
    interrupts; the parent's ``respond`` answers with what the subgraph received (resume reached it)."""
    sub = StateGraph(ChatState)
    sub.add_node("choose_flight", _ask("flight", _confirmation("Book the KLM flight to Amsterdam?")))
    sub.add_edge(START, "choose_flight")
    sub.add_edge("choose_flight", END)
    g = StateGraph(ChatState)
    g.add_node("flights_agent", sub.compile())  # the parent's checkpointer covers the subgraph
    g.add_node("respond", _respond(["flight"]))
    g.add_edge(START, "flights_agent")
    g.add_edge("flights_agent", "respond")
    g.add_edge("respond", END)
    return g.compile(checkpointer=MemorySaver())


class MultiResumeAgent(LangGraphAgent):
    """``LangGraphAgent`` with a workaround for upstream ag-ui issue #2178.

    With several ``resume[]`` entries, ag-ui-langgraph 0.0.47 passes ``{"__agui_resume_map__": {...}}`` as one
    resume value, and langgraph >= 1.x fails the run ("When there are multiple pending interrupts, you must specify
    the interrupt id when resuming"); a single entry while several interrupts are open fails the same way.
    LangGraph's native form is ``Command(resume={interrupt_id: value, ...})``, so use it whenever more than one
    interrupt is involved; cancelled entries get the same sentinel dict the single-entry path sends. A partial
    resume then resumes only the answered branch and the run ends with the remaining interrupt again.
    Remove once #2178 is fixed.
    """

    def _build_command_from_agui_resume(self, entries, *, open_interrupts=None):
        if len(entries) == 1 and len(open_interrupts or ()) <= 1:
            return super()._build_command_from_agui_resume(entries, open_interrupts=open_interrupts)
        return Command(
            resume={
                e.interrupt_id: e.payload
                if e.status == "resolved"
                else {CANCELLED_KEY: True, "interrupt_id": e.interrupt_id}
                for e in entries
            }
        )


def create_app() -> FastAPI:
    """A FastAPI app serving every flow in both modes (fresh graphs and checkpointers per call)."""
    app = FastAPI(title="interrupt_chat LangGraph examples")
    for flow in [*FLOWS, "subgraph"]:
        for mode, outcome in (("legacy", False), ("std", True)):
            agent = MultiResumeAgent(
                name=f"{mode}_{flow}",
                graph=build_graph(flow),
                emit_interrupt_outcome=outcome,
                emit_raw_events=False,  # no RAW events / rawEvent copies: smaller, stable streams
            )
            add_langgraph_fastapi_endpoint(app, agent, f"/{mode}/{flow}")

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


app = create_app()


if __name__ == "__main__":
    from examples._serve import serve

    serve(app, default_port=8123, description="LLM-free LangGraph AG-UI server")
