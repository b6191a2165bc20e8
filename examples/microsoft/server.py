"""LLM-free Microsoft Agent Framework agent served over AG-UI by ``agent-framework-ag-ui``.

Run from this directory with the producer's own venv (``scripts/producer_venvs.sh microsoft``)::

    ../../.producers/microsoft/bin/python server.py --port 8127      # binds 127.0.0.1 unless --host says otherwise

Routes: ``POST /`` (a ``RunAgentInput``, answered as SSE), ``POST /confirm`` (the same agent with the
package's default ``require_confirmation=True``, see below) and ``GET /health``.

The chat client is :class:`ScriptedChatClient`, a ``BaseChatClient`` with the framework's own
``FunctionInvocationLayer`` (the tool loop and its approval gate): the real ``Agent`` drives it and the real
AG-UI adapter (``add_agent_framework_fastapi_endpoint``) turns its updates into events. What it answers
depends on the last message it is given:

- tool results (a resumed run, or a frontend tool's answer) → ``Tool said: <result>``; a
  ``generate_task_steps`` result that is the steps JSON → ``Running 2 of 3 steps: Back up the files, Email the
  team.`` (the enabled ones, in order);
- user text whose first word is ``hello`` → ``Hello from Microsoft Agent Framework!``;
- first word ``steps`` → calls the client-declared frontend tool ``generate_task_steps`` with three enabled
  steps (the run ends; the chat answers with a ``tool`` message in the next run's ``messages``); when the
  client declared no such tool it says so in text;
- anything else → calls ``delete_files(path="/tmp/demo", count=3)``, an ``approval_mode="always_require"``
  tool: the run ends with ``RUN_FINISHED.outcome = {type: "interrupt", interrupts: [{id: "af-call-<32 hex>",
  reason: "tool_call", toolCallId, message: "Approve running delete_files?", responseSchema: {approved,
  accepted, path, count, editedArgs}, metadata: {agent_framework: {type: "function_approval_request",
  function_call: {call_id, name, arguments}}}}]}``.

Resume with ``resume: [{interruptId, status, payload}]`` and the whole history: approve ``{"approved": true}``
(or the legacy ``{"accepted": true}``), reject ``{"approved": false}`` (the model gets ``Error: Tool call
invocation was rejected by user.``), edit ``{"approved": true, "editedArgs": {"path": ..., "count": ...}}`` (a
full replacement; a partial one is ``RUN_ERROR APPROVAL_RESUME_INVALID_RESPONSE``) or the schema's flat
per-argument properties (``{"approved": true, "count": 7}``, merged into the arguments). ``status: "cancelled"``
ends the resumed run at once (``RUN_STARTED, RUN_FINISHED``): the model is not called and the call gets no
result. Tool call ids are deterministic: ``call_<n>``, n = the assistant messages so far + 1.

``/`` wraps the agent with ``require_confirmation=False``; ``/confirm`` keeps the package default, which
also streams a ``confirm_changes`` tool call (the older CopilotKit approval UI; an AG-UI 1.0 client never
answers it) next to the interrupt. Every approval run, on both routes, also streams a ``CUSTOM
function_approval_request`` event (the older channel) before ``RUN_FINISHED``.

The server prints one ``model sees: [[role, content types...], ...]`` line per model call (never the
content: a resume may carry what the person typed), so a failed flow can be read in its log afterwards.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    tool,
)
from agent_framework_ag_ui import AgentFrameworkAgent, add_agent_framework_fastapi_endpoint
from fastapi import FastAPI

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: the ``examples`` package
from examples._script import DELETE_ARGS, STEPS_ARGS, STEPS_TOOL, first_word, steps_answer  # after the path is set
from examples._serve import serve

HELLO = "Hello from Microsoft Agent Framework!"


def script(messages: Sequence[Message], options: Mapping[str, Any]) -> list[Content]:
    """The scripted model: the contents of its one assistant message for this model call."""
    print("model sees:", json.dumps([[m.role, *(c.type for c in m.contents)] for m in messages]), flush=True)
    last = messages[-1] if messages else None
    results = [c for c in last.contents if c.type == "function_result"] if last else []
    if results:
        names = {c.call_id: c.name for m in messages for c in m.contents if c.type == "function_call"}
        texts = [str(c.result) for c in results]
        steps = steps_answer(texts[0]) if len(results) == 1 and names.get(results[0].call_id) == STEPS_TOOL else None
        return [Content.from_text(steps or "Tool said: " + "; ".join(texts))]
    text = " ".join(c.text or "" for c in last.contents if c.type == "text") if last else ""
    first = first_word(text)
    call_id = f"call_{sum(m.role == 'assistant' for m in messages) + 1}"
    if first == "hello":
        return [Content.from_text(HELLO)]
    if first == "steps":
        if not any(getattr(t, "name", None) == STEPS_TOOL for t in options.get("tools") or ()):
            return [Content.from_text(f"The chat did not declare the {STEPS_TOOL} tool.")]
        return [Content.from_function_call(call_id, STEPS_TOOL, arguments=json.dumps(STEPS_ARGS))]
    return [Content.from_function_call(call_id, "delete_files", arguments=json.dumps(DELETE_ARGS))]


class ScriptedChatClient(FunctionInvocationLayer, BaseChatClient):
    """A chat client whose "model" is :func:`script`; the framework's tool loop runs around it."""

    def _inner_get_response(self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any],
                            **kwargs: Any) -> Any:
        contents = script(messages, options)
        if not stream:
            async def response() -> ChatResponse:
                return ChatResponse(messages=[Message(role="assistant", contents=contents)])

            return response()

        async def updates() -> AsyncIterator[ChatResponseUpdate]:
            for content in contents:
                yield ChatResponseUpdate(role="assistant", contents=[content])

        return self._build_response_stream(updates())


@tool(approval_mode="always_require")
def delete_files(path: str, count: int) -> str:
    """Delete ``count`` files under ``path`` (pretend)."""
    return f"deleted {count} files in {path}"


def create_app() -> FastAPI:
    """The FastAPI app: AG-UI endpoints at ``/`` and ``/confirm``, and ``/health``."""
    app = FastAPI()

    for path, confirm_changes in (("/", False), ("/confirm", True)):
        agent = Agent(client=ScriptedChatClient(), name="scripted", tools=[delete_files])
        # single_user: one principal for every caller (the endpoint insists on an explicit authorization mode)
        add_agent_framework_fastapi_endpoint(
            app, AgentFrameworkAgent(agent, require_confirmation=confirm_changes), path, single_user=True)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


if __name__ == "__main__":
    serve(create_app(), default_port=8127, description="LLM-free Microsoft Agent Framework AG-UI server")
