"""LLM-free Agno agent served over AG-UI by Agno's own ``AGUI`` interface.

Run (from this directory, with the producer venv that ``scripts/producer_venvs.sh agno`` builds)::

    ../../.producers/agno/bin/python server.py --port 8128        # binds 127.0.0.1 unless --host says otherwise

Routes: ``POST /`` (a ``RunAgentInput``, the AGUI router's ``/agui`` endpoint mounted at the root),
``GET /health`` and the router's own ``POST /agui`` and ``GET /status``.

The agent is a real ``agno.agent.Agent`` whose model is :class:`ScriptedModel`, an ``agno.models.base.Model``
that Agno's run loop drives like any provider; its answers come from a script, never from a network. Agno
keeps the thread (``threadId`` = Agno session) in an in-memory database, which it needs to resume paused runs.
The script looks at what the agent loop hands the model:

- tool results at the end (the run went on after a pause) → ``Tool said: <result>`` (several joined by ``"; "``),
  except a ``generate_task_steps`` result in its JSON shape → ``Running <k> of <n> steps: <enabled ones>.``;
- user text whose first word is ``hello`` → ``Hello from Agno!``;
- first word ``steps`` and the client declared ``generate_task_steps`` in ``RunAgentInput.tools`` → calls that
  frontend tool with three enabled steps; the run pauses and the chat answers with a ``tool`` message (without
  the tool declared, ``steps`` counts as anything else);
- anything else → calls ``delete_files(path="/tmp/demo", count=3)``, a backend tool with
  ``requires_confirmation=True``.

Agno's AGUI interface (agno 3.1.10) never emits AG-UI interrupts: every pause (external execution, confirmation,
user input) ends the run with ``TOOL_CALL_START/ARGS/END`` for the paused calls and a plain ``RUN_FINISHED``, and
``RunAgentInput.resume`` is ignored. A run resumes when the request's messages end with ``tool`` messages: for a
frontend tool the content is the result as is; for the ``delete_files`` confirmation it is parsed as JSON,
``{"accepted": true}`` confirms (the tool runs), anything else rejects (``"note"`` becomes the rejection text).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.base import Model
from agno.models.message import Message
from agno.models.response import ModelResponse
from agno.os.interfaces.agui import AGUI
from agno.tools import tool
from fastapi import FastAPI
from fastapi.routing import APIRoute

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: the ``examples`` package
from examples._script import DELETE_ARGS, STEPS_ARGS, STEPS_TOOL, first_word, steps_answer  # after the path is set
from examples._serve import serve

os.environ.setdefault("AGNO_TELEMETRY", "false")  # read when an Agent is built: no calls home

DISPLAY_NAME = "Agno"


def _text(content: Any) -> str:
    """A message's content as plain text (Agno keeps strings, or lists of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def script(messages: list[Message], tool_names: set[str]) -> ModelResponse:
    """The scripted model's whole answer to ``messages`` (one turn: text, or one tool call)."""
    results = []
    for message in reversed(messages):  # the tool results at the end: the turn goes on after the tools ran
        if message.role != "tool":
            break
        results.insert(0, message)
    if results:
        texts = []
        for message in results:
            result = _text(message.content)
            summary = steps_answer(result) if message.tool_name == STEPS_TOOL else None
            texts.append(summary or f"Tool said: {result}")
        return ModelResponse(role="assistant", content="; ".join(texts))
    user = next((m for m in reversed(messages) if m.role == "user"), None)
    first = first_word(_text(user.content if user else ""))
    if first == "hello":
        return ModelResponse(role="assistant", content=f"Hello from {DISPLAY_NAME}!")
    name, args = (STEPS_TOOL, STEPS_ARGS) if first == "steps" and STEPS_TOOL in tool_names else (
        "delete_files", DELETE_ARGS)
    call = {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}
    return ModelResponse(role="assistant", tool_calls=[call])


def _tool_names(tools: list[Any] | None) -> set[str]:
    """Names of the tools the agent offers the model (OpenAI-style dicts)."""
    return {t.get("function", {}).get("name", "") for t in tools or [] if isinstance(t, dict)}


@dataclass
class ScriptedModel(Model):
    """An ``agno`` model that answers from :func:`script` instead of a provider API."""

    id: str = "scripted"
    name: str = "ScriptedModel"
    provider: str = "local"

    def invoke(self, *args: Any, messages: list[Message], tools: list[Any] | None = None,
               **kwargs: Any) -> ModelResponse:
        """One non-streamed answer."""
        return script(messages, _tool_names(tools))

    async def ainvoke(self, *args: Any, messages: list[Message], tools: list[Any] | None = None,
                      **kwargs: Any) -> ModelResponse:
        """One non-streamed answer (async)."""
        return script(messages, _tool_names(tools))

    def invoke_stream(self, *args: Any, messages: list[Message], tools: list[Any] | None = None,
                      **kwargs: Any) -> Iterator[ModelResponse]:
        """The answer as one streamed delta."""
        yield script(messages, _tool_names(tools))

    async def ainvoke_stream(self, *args: Any, messages: list[Message], tools: list[Any] | None = None,
                             **kwargs: Any) -> AsyncIterator[ModelResponse]:
        """The answer as one streamed delta (async): the path the AGUI interface uses."""
        yield script(messages, _tool_names(tools))

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        """Nothing to parse: :func:`script` already answers in Agno's terms."""
        return response

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        """Nothing to parse: :func:`script` already answers in Agno's terms."""
        return response


@tool(requires_confirmation=True)
def delete_files(path: str, count: int) -> str:
    """Delete ``count`` files under ``path`` (pretend); a person must confirm the call first."""
    return f"deleted {count} files in {path}"


def create_agent() -> Agent:
    """The Agno agent: the scripted model, ``delete_files``, and an in-memory session store."""
    return Agent(name=f"{DISPLAY_NAME} demo", model=ScriptedModel(), tools=[delete_files], db=InMemoryDb(),
                 telemetry=False)


def create_app() -> FastAPI:
    """The FastAPI app: Agno's AGUI router, its ``/agui`` endpoint also at ``POST /``, and ``GET /health``."""
    app = FastAPI(title=f"LLM-free {DISPLAY_NAME} AG-UI server")
    router = AGUI(agent=create_agent()).get_router()
    app.include_router(router)
    endpoint = next(r for r in router.routes if isinstance(r, APIRoute) and r.path == "/agui")
    app.add_api_route("/", endpoint.endpoint, methods=["POST"])

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


if __name__ == "__main__":
    serve(create_app(), default_port=8128, description=f"LLM-free {DISPLAY_NAME} AG-UI server")
