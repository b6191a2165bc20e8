"""LLM-free Strands Agents agent served over AG-UI by ``ag-ui-strands``.

Run it from its own venv (``scripts/producer_venvs.sh strands`` builds it)::

    cd examples/strands && ../../.producers/strands/bin/python server.py --port 8125   # binds 127.0.0.1

Routes: ``POST /`` (a ``RunAgentInput``; the real ``add_strands_fastapi_endpoint``) and ``GET /health``.

The Strands ``Agent`` keeps its real event loop, tool executor and hooks; only its model is replaced by
:class:`ScriptedModel`, a ``strands.models.Model`` that streams Bedrock-style events decided by the last message:

- a tool result (a resumed or continued run) → ``Tool said: <result text>``; for the ``generate_task_steps``
  frontend tool whose result is the steps JSON → ``Running <enabled> of <total> steps: <enabled ones>.``;
- user text whose first word is ``hello`` → ``Hello from Strands Agents!``;
- first word ``steps`` → calls the client-declared frontend tool ``generate_task_steps`` (it must be in
  ``RunAgentInput.tools``); the run ends with the call and no result, and the client answers it with a
  ``ToolMessage`` in the next run's ``messages``;
- anything else → calls the backend tool ``delete_files(path="/tmp/demo", count=3)``.

``delete_files`` is gated by ag-ui-strands' approval hook (``ToolBehavior(interrupt_on_call=True)``): the run ends
with ``RUN_FINISHED.outcome = {type: "interrupt", interrupts: [{id: "v1:before_tool_call:<toolCallId>:<uuid5 of the
interrupt name>", reason: "tool_call", toolCallId, message: "Approve call to delete_files?", responseSchema:
{approved}}]}`` after ``STATE_SNAPSHOT`` / ``MESSAGES_SNAPSHOT`` (the assistant message with its ``toolCalls``). Resume
with ``resume: [{interruptId, status: "resolved", payload: {"approved": true | false}}]`` or ``status:
"cancelled"`` (a denial). A denied call never runs; Strands gives the model the error result
``User denied approval for 'delete_files'.``. There is no approve-with-edits (``editedArgs`` is ignored). Tool
results reach the client JSON-encoded (``TOOL_CALL_RESULT.content == '"deleted 3 files in /tmp/demo"'``). Tool call
ids are ``call_<turn>_1`` (turn = the model's answers so far + 1). A new user message while an interrupt is open gets
``RUN_ERROR PENDING_INTERRUPTS``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

os.environ.setdefault("OTEL_SDK_DISABLED", "true")  # no telemetry exporter, no network

from ag_ui_strands import StrandsAgent, StrandsAgentConfig, ToolBehavior, add_strands_fastapi_endpoint
from fastapi import FastAPI
from strands import Agent, tool
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: the ``examples`` package
from examples._script import DELETE_ARGS, STEPS_ARGS, STEPS_TOOL, first_word, steps_answer  # after the path is set
from examples._serve import serve

# ag-ui-strands steps the agent's stream in a fresh task per event, so Strands' OpenTelemetry spans are detached in
# another contextvars Context than they were attached in: a harmless "Failed to detach context" traceback per span.
logging.getLogger("opentelemetry.context").setLevel(logging.CRITICAL)

HELLO = "Hello from Strands Agents!"


@tool
def delete_files(path: str, count: int) -> str:
    """Delete ``count`` files under ``path`` (pretend).

    Args:
        path: The folder to clean.
        count: How many files to delete.
    """
    return f"deleted {count} files in {path}"


def _text_of(blocks: list[Any]) -> str:
    """The text of content blocks (``text`` parts, and ``json`` parts dumped)."""
    parts = []
    for block in blocks:
        if "text" in block:
            parts.append(block["text"])
        elif "json" in block:
            parts.append(json.dumps(block["json"]))
    return "".join(parts)


def _tool_names(messages: Messages) -> dict[str, str]:
    """``toolUseId → tool name`` for every tool call in the history."""
    return {block["toolUse"]["toolUseId"]: block["toolUse"]["name"]
            for message in messages if message["role"] == "assistant"
            for block in message["content"] if "toolUse" in block}


def _answer(messages: Messages) -> tuple[str, str | None, dict[str, Any] | None]:
    """What the script does next: ``(text, None, None)`` or ``("", tool name, tool input)``."""
    last = messages[-1] if messages else {"role": "user", "content": []}
    results = [block["toolResult"] for block in last["content"] if "toolResult" in block]
    if last["role"] == "user" and results:
        names = _tool_names(messages)
        texts = []
        for result in results:
            text = _text_of(result["content"])
            steps = steps_answer(text) if names.get(result["toolUseId"]) == STEPS_TOOL else None
            texts.append(steps or f"Tool said: {text}")
        return "; ".join(texts), None, None
    first = first_word(_text_of(last["content"]))
    if first == "hello":
        return HELLO, None, None
    if first == "steps":
        return "", STEPS_TOOL, STEPS_ARGS
    return "", "delete_files", DELETE_ARGS


class ScriptedModel(Model):
    """A ``strands.models.Model`` that streams a scripted answer instead of calling an LLM."""

    def __init__(self) -> None:
        """A model with an empty config (there is nothing to configure)."""
        self.config: dict[str, Any] = {}

    def update_config(self, **model_config: Any) -> None:
        """Store configuration overrides (unused by the script)."""
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """The (empty) configuration."""
        return self.config

    async def structured_output(self, output_model: Any, prompt: Messages, system_prompt: str | None = None,
                                **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Not supported: the script only streams."""
        raise NotImplementedError("ScriptedModel has no structured output")
        yield {}  # pragma: no cover - makes this an async generator

    async def stream(self, messages: Messages, tool_specs: list[ToolSpec] | None = None,
                     system_prompt: str | None = None, **kwargs: Any) -> AsyncIterator[StreamEvent]:
        """Stream Bedrock-style events: one text block, or one tool use (``stopReason: tool_use``)."""
        text, name, args = _answer(messages)
        yield {"messageStart": {"role": "assistant"}}
        if name is None:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": text}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        turn = sum(message["role"] == "assistant" for message in messages) + 1
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"call_{turn}_1", "name": name}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def create_app() -> FastAPI:
    """The FastAPI app: the AG-UI endpoint on ``POST /`` and ``GET /health``."""
    agent = StrandsAgent(
        Agent(model=ScriptedModel(), tools=[delete_files], callback_handler=None),
        name="strands_demo",
        description="LLM-free Strands agent with a tool that needs approval",
        config=StrandsAgentConfig(tool_behaviors={"delete_files": ToolBehavior(interrupt_on_call=True)}),
    )
    app = FastAPI(title="LLM-free Strands AG-UI server")
    add_strands_fastapi_endpoint(app, agent, "/")

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


if __name__ == "__main__":
    serve(create_app(), default_port=8125, description="LLM-free Strands AG-UI server")
