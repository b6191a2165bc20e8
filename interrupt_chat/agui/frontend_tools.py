"""Frontend tools: tools the chat declares in ``RunAgentInput.tools`` and answers itself (S26-S31).

The other way an AG-UI agent waits for a person (CopilotKit's ``useHumanInTheLoop`` /
``useFrontendTool``): the agent calls a tool the client declared; the call ends the run without a
result; the client answers it (a person, or a handler on the server), and the answer goes back as
the tool's result, a ``tool`` message, in the next run.

:class:`FrontendTool` declares one tool; :class:`FrontendTools` holds a chat's tools and turns a
finished run's unanswered calls into :class:`ToolWait` entries: the ones a person or a handler
answers, and the ones that cannot be answered as asked (an undeclared tool, arguments that fail the
schema), which get an error result at once (S29).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from ag_ui.core import Tool

from .sanitize import short_text
from .transcript import ToolCallView, Transcript

__all__ = ["FrontendTool", "FrontendTools", "ToolWait", "error_result", "result_text"]

Handler = Callable[[Any], Any | Awaitable[Any]]


@dataclass(frozen=True)
class FrontendTool:
    """A tool the chat offers the agent and answers itself.

    Args:
        name: the tool's name, as the agent calls it.
        description: what the tool does, for the agent's model.
        parameters: the JSON Schema of its arguments (an object schema).
        handler: answers the call on the server (sync or async, gets the arguments, returns the
            result); None: a person answers it in the chat.
        cancellable: whether the person may decline to answer (the result then says so).
    """

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    handler: Handler | None = field(default=None, compare=False)
    cancellable: bool = True

    def __post_init__(self) -> None:
        """Refuse a tool the agent could not call: no name, or a schema that is not JSON Schema."""
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a frontend tool needs a name")
        try:
            jsonschema.validators.validator_for(self.parameters).check_schema(self.parameters)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"the parameters of tool {self.name!r} are not a valid JSON Schema: {exc.message}") \
                from None

    def to_tool(self) -> Tool:
        """The tool as ``RunAgentInput.tools`` carries it."""
        return Tool(name=self.name, description=self.description, parameters=self.parameters)

    def check(self, args: Any) -> str | None:
        """Why ``args`` do not fit the parameters (a short message), or None when they do."""
        validator = jsonschema.validators.validator_for(self.parameters)(self.parameters)
        error = jsonschema.exceptions.best_match(validator.iter_errors(args))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return short_text(f"{where}: {error.message}" if where else error.message, 200)


@dataclass(frozen=True)
class ToolWait:
    """A call to a frontend tool that waits for its result (or was answered with an error at once).

    ``error`` says why the call cannot be answered as asked; such a call is never shown as waiting.
    """

    tool_call_id: str
    name: str
    args: Any
    error: str | None = None
    cancellable: bool = True
    handled: bool = False  # a server-side handler answers it


class FrontendTools:
    """The frontend tools of one chat.

    Args:
        tools: the declared tools; names must be unique.
    """

    def __init__(self, tools: Iterable[FrontendTool] = ()) -> None:
        """Index the tools by name."""
        self.by_name: dict[str, FrontendTool] = {}
        for tool in tools:
            if tool.name in self.by_name:
                raise ValueError(f"two frontend tools are named {tool.name!r}")
            self.by_name[tool.name] = tool

    def __bool__(self) -> bool:
        """True when at least one tool is declared."""
        return bool(self.by_name)

    def declared(self) -> list[Tool]:
        """Every declared tool, for ``RunAgentInput.tools`` (S26)."""
        return [tool.to_tool() for tool in self.by_name.values()]

    def waits(self, transcript: Transcript, call_ids: Iterable[str], bound: set[str]) -> list[ToolWait]:
        """The finished run's calls that the chat must answer (S27, S29).

        Args:
            transcript: the thread.
            call_ids: the tool calls of the run that just finished, in order.
            bound: tool call ids a pending interrupt is about (the agent asks for approval, not
                for a result: those are not frontend-tool calls).
        """
        waits = []
        for call_id in call_ids:
            call = transcript.tool_calls.get(call_id)
            if call is None or call.result is not None or call.failed or call.rejected or call_id in bound:
                continue
            wait = self._wait(call)
            if wait is not None:
                waits.append(wait)
        return waits

    def _wait(self, call: ToolCallView) -> ToolWait | None:
        tool = self.by_name.get(call.name)
        if tool is None:
            if not self.by_name:  # the chat offers no tools: the call is the agent's own business
                return None
            return ToolWait(call.id, call.name, None, error=f"the tool {short_text(call.name, 60)!r} is not"
                                                            " available in this chat")
        args = call.args
        if args is None and call.args_text.strip():
            error: str | None = "the arguments are not valid JSON"
        else:
            args = {} if args is None else args
            error = tool.check(args)
            error = f"the arguments do not fit the tool's parameters: {error}" if error else None
        return ToolWait(call.id, call.name, args, error=error, cancellable=tool.cancellable,
                        handled=tool.handler is not None)

    async def handle(self, wait: ToolWait) -> str:
        """Run a handler tool on its arguments; the result text (an error result when it raises, S29)."""
        tool = self.by_name[wait.name]
        assert tool.handler is not None
        try:
            result = tool.handler(wait.args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # noqa: BLE001 - a handler's failure is the tool's result, never a stuck chat
            return error_result(f"the tool {wait.name!r} failed: {short_text(exc, 160) or type(exc).__name__}")
        return result_text(result)


def result_text(result: Any) -> str:
    """A tool result as the ``tool`` message's content: strings as they are, anything else as JSON."""
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)


def error_result(message: str) -> str:
    """The result of a call that could not be answered: ``{"error": message}``."""
    return json.dumps({"error": message}, ensure_ascii=False)
