"""LLM-free Google ADK agent served over AG-UI by ``ag-ui-adk``, with a tool that needs confirmation.

Run from its own venv (``scripts/producer_venvs.sh adk`` builds it)::

    cd examples/adk && ../../.producers/adk/bin/python server.py --port 8126      # binds 127.0.0.1

Routes: ``POST /`` (a ``RunAgentInput``), ``GET /health``, and the two that ``add_adk_fastapi_endpoint`` always
adds: ``GET /capabilities`` (``{}`` here) and ``POST /agents/state`` (experimental thread state; unused here).

The model is :class:`ScriptedLlm`, a ``google.adk.models.BaseLlm`` that ADK drives like Gemini; it decides on the
last content of the request ADK builds:

- a function response (the tool ran, or the client answered a frontend tool) → ``Tool said: <result>``; for
  ``generate_task_steps`` a ``{"steps": [...]}`` result gives ``Running <n> of <total> steps: <enabled ones>.``;
- user text whose first word is ``hello`` → ``Hello from Google ADK!``;
- first word ``steps`` → calls the client's frontend tool ``generate_task_steps`` (declared in
  ``RunAgentInput.tools``; ``AGUIToolset`` makes them callable): the run ends with the call and no result, and the
  client's ``tool`` message in the next run's ``messages`` is the result;
- anything else → calls ``delete_files(path="/tmp/demo", count=3)``, a ``FunctionTool(require_confirmation=True)``.

ADK answers the ``delete_files`` call with a synthetic ``adk_request_confirmation`` call, which ag-ui-adk streams as a
tool call and (``emit_interrupt_outcome=True``) reports as ``RUN_FINISHED.outcome = {type: "interrupt", interrupts:
[{id, reason: "confirmation", toolCallId: id, message: <ADK's hint>, metadata: {adk: {originalFunctionCall,
toolConfirmation}}}]}`` with ``id`` = the confirmation call's id (``adk-<uuid>``) and no ``responseSchema``. Resume
with ``resume: [{interruptId, status, payload}]``: ``{"confirmed": true|false}`` (ADK's ``ToolConfirmation``),
``{"approved": true|false}`` or a bare boolean work too; ``status: "cancelled"`` is ``{"confirmed": false}``. A
rejected call's result is ADK's ``{"error": "This tool call is rejected."}``. Careful: any other payload (``{}``,
``{"approved": "no"}``) *confirms* (ag-ui-adk sends ``{"confirmed": true, "payload": ...}``), and a
``ToolConfirmation`` with an unknown key fails the run (``RUN_ERROR BACKGROUND_EXECUTION_ERROR``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from ag_ui_adk import ADKAgent, AGUIToolset, add_adk_fastapi_endpoint
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.tools import FunctionTool
from google.genai import types

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: the ``examples`` package
from examples._script import DELETE_ARGS, STEPS_ARGS, STEPS_TOOL, first_word, steps_answer  # after the path is set
from examples._serve import serve

NAME = "Google ADK"


def delete_files(path: str, count: int) -> str:
    """Delete ``count`` files under ``path`` (pretend).

    Args:
        path: The folder to clean.
        count: How many files to delete.

    Returns:
        What was done.
    """
    return f"deleted {count} files in {path}"


def _result_text(response: types.FunctionResponse) -> str:
    """The text a function response stands for.

    ADK wraps a tool's plain return value as ``{"result": value}``; ag-ui-adk wraps a client's non-JSON tool
    message as ``{"success": true, "result": text, "status": "completed"}``. Both are unwrapped; any other
    response (``{"error": ...}``, a JSON object from the client) is shown as JSON.
    """
    value: Any = response.response
    if isinstance(value, dict) and "result" in value and set(value) <= {"result", "success", "status"}:
        value = value["result"]
    return value if isinstance(value, str) else json.dumps(value)


def _steps_answer(response: types.FunctionResponse) -> str:
    """The follow-up to a ``generate_task_steps`` result: the enabled steps, or ``Tool said: ...``."""
    return steps_answer(response.response or {}) or f"Tool said: {_result_text(response)}"


class ScriptedLlm(BaseLlm):
    """A scripted stand-in for Gemini: one ``LlmResponse`` per model turn, decided by the last content."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yield the scripted turn (a single complete response, streamed or not)."""
        yield LlmResponse(content=types.Content(role="model", parts=self._decide(llm_request.contents)),
                          turn_complete=True)

    @staticmethod
    def _decide(contents: list[types.Content]) -> list[types.Part]:
        last = contents[-1] if contents else None
        parts = (last.parts or []) if last else []
        responses = [p.function_response for p in parts if p.function_response]
        if responses:
            texts = [_steps_answer(r) if r.name == STEPS_TOOL else f"Tool said: {_result_text(r)}" for r in responses]
            return [types.Part(text="; ".join(texts))]
        first = first_word(" ".join(p.text for p in parts if p.text))
        if first == "hello":
            return [types.Part(text=f"Hello from {NAME}!")]
        if first == "steps":
            return [types.Part(function_call=types.FunctionCall(name=STEPS_TOOL, args=STEPS_ARGS))]
        return [types.Part(function_call=types.FunctionCall(name="delete_files", args=DELETE_ARGS))]


def create_app() -> FastAPI:
    """The FastAPI app: the ADK agent behind ``ADKAgent`` at ``/``, plus ``/health``."""
    agent = LlmAgent(
        name="adk_demo",
        model=ScriptedLlm(),
        tools=[FunctionTool(delete_files, require_confirmation=True), AGUIToolset()],
    )
    adk_agent = ADKAgent(adk_agent=agent, app_name="adk_demo", user_id="demo", use_in_memory_services=True,
                         emit_interrupt_outcome=True)
    app = FastAPI(title=f"LLM-free {NAME} AG-UI server")

    @app.get("/health")
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    add_adk_fastapi_endpoint(app, adk_agent, path="/")
    return app


if __name__ == "__main__":
    serve(create_app(), default_port=8126, description=f"LLM-free {NAME} AG-UI server")
