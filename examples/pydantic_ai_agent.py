"""LLM-free pydantic-ai agent served over AG-UI by ``AGUIAdapter``, with tools that need approval.

Run::

    python -m examples.pydantic_ai_agent --port 8124       # binds 127.0.0.1

In-process: ``from examples.pydantic_ai_agent import app`` (or ``create_app()``).

Routes: ``POST /`` (a ``RunAgentInput``) and ``GET /health``.

The "model" is a scripted ``FunctionModel(stream_function=...)``; what it does depends on the last message:

- tool results and no user text in the last request (a resumed run) → streams ``Tool said: <result>`` (several
  results joined by ``"; "``; a denial's result is pydantic-ai's own text, e.g. ``The tool call was denied.``);
- user text whose first word is ``hello`` → streams a plain answer, no tool call, no interrupt;
- a user message with files (AG-UI 1.0 image or document parts, which the adapter turns into ``BinaryContent``) →
  streams ``I see <n> file(s): <media type>, <bytes> bytes; …`` without a tool call;
- first word ``steps``, with the chat's frontend tool ``generate_task_steps`` in ``RunAgentInput.tools`` → calls it
  with three steps; its result (the steps the person kept) is answered ``Running <kept> of <all> steps: …``;
- first word ``multi`` → calls ``delete_files`` and ``send_report`` in one response: two interrupts at once;
- anything else → calls ``delete_files(path="/tmp/demo", count=3)``: one interrupt.

Both tools are ``requires_approval=True``, so the run ends with ``RUN_FINISHED.outcome = {type: "interrupt",
interrupts: [{id: "int-<toolCallId>", reason: "tool_call", toolCallId, message, responseSchema}]}``. Resume with
``resume: [{interruptId, status, payload}]``, carrying the whole history including the assistant message with
``toolCalls``: approve ``{"approved": true}``, deny ``{"approved": false}`` (optional ``reason``), edit
``{"approved": true, "editedArgs": {...}}`` (replaces the arguments), or ``status: "cancelled"`` (a denial with
"Cancelled by user."). Tool call ids are deterministic: ``call_<turn>_<k>``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pydantic_ai import Agent, BinaryContent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from examples._script import DELETE_ARGS, STEPS_ARGS, STEPS_TOOL, first_word, steps_answer

REPORT_ARGS = {"to": "ada@example.com"}


def _followup(results: list[ToolReturnPart]) -> str:
    """The answer to the tools' results: the steps the person kept, else ``Tool said: <r1>; <r2>…``."""
    texts = []
    for result in results:
        content = result.content  # pydantic-ai parses a JSON result; a plain text stays a string
        steps = steps_answer(content) if result.tool_name == STEPS_TOOL else None
        if steps:
            return steps
        texts.append(content if isinstance(content, str) else json.dumps(content))
    return "Tool said: " + "; ".join(texts)


def _files(request: ModelRequest) -> list[BinaryContent]:
    """The files of the user's prompt, as the AG-UI adapter handed them to the model."""
    return [item for p in request.parts if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
            for item in p.content if isinstance(item, BinaryContent)]


def _user_text(request: ModelRequest) -> str:
    parts = [p.content for p in request.parts if isinstance(p, UserPromptPart)]
    return " ".join(c if isinstance(c, str) else " ".join(i for i in c if isinstance(i, str)) for c in parts)


async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict]:
    """The scripted model: text after tool results, otherwise a decision by the first word of the user's text."""
    last = messages[-1] if messages else None
    text = _user_text(last) if isinstance(last, ModelRequest) else ""
    results = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
    if results and not text:
        yield _followup(results)
        return
    files = _files(last) if isinstance(last, ModelRequest) else []
    if files:
        yield f"I see {len(files)} file(s): " + "; ".join(f"{f.media_type}, {len(f.data)} bytes" for f in files)
        return
    first = first_word(text)
    if first == "hello":
        yield "Hello! Say anything else and I will ask to delete some files."
        return
    turn = sum(isinstance(m, ModelResponse) for m in messages) + 1
    calls = [("delete_files", DELETE_ARGS)]
    if first == "steps" and any(tool.name == STEPS_TOOL for tool in info.function_tools):
        calls = [(STEPS_TOOL, STEPS_ARGS)]
    if first == "multi":
        calls.append(("send_report", REPORT_ARGS))
    yield {
        k: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"call_{turn}_{k + 1}")
        for k, (name, args) in enumerate(calls)
    }


def create_agent() -> Agent:
    agent = Agent(FunctionModel(stream_function=script), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_files(path: str, count: int) -> str:
        """Delete ``count`` files under ``path`` (pretend)."""
        return f"deleted {count} files in {path}"

    @agent.tool_plain(requires_approval=True)
    def send_report(to: str) -> str:
        """Send the weekly report to ``to`` (pretend)."""
        return f"report sent to {to}"

    return agent


def create_app() -> Starlette:
    agent = create_agent()

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/", run, methods=["POST"]), Route("/health", health, methods=["GET"])])


app = create_app()


if __name__ == "__main__":
    from examples._serve import serve

    serve(app, default_port=8124, description="LLM-free pydantic-ai AG-UI server")
