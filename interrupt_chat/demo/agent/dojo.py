"""Scenarios for the dojo pages the server-starter example also serves, as it serves them.

``write`` (predictive_state_updates): ``PredictState`` for ``document``, then ``write_document_local`` whose
``document`` argument streams word by word (no ``parentMessageId``, as the AG-UI server-starter sends it), then
the frontend tool ``confirm_changes``. ``think`` (agentic_chat_reasoning): a streamed reasoning message, then the
answer. ``haiku`` (tool_based_generative_ui): a ``generate_haiku`` call whose result is already there, sent only
inside a ``MESSAGES_SNAPSHOT``. ``flights`` (subgraphs) and ``plan`` (LangGraph's human in the loop): legacy
``on_interrupt`` values shaped as the dojo's LangGraph agents send them (options to choose, steps to tick).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ag_ui.core import AssistantMessage, BaseEvent, FunctionCall, ToolCall, ToolMessage

from .context import RunContext
from .events import new_id

__all__ = ["DOCUMENT_TOOL", "FLIGHTS", "HAIKU", "PLAN", "flights", "haiku", "plan", "think", "write"]

DOCUMENT_TOOL = "write_document_local"
CONFIRM_CHANGES = "confirm_changes"
STORY = ("Once upon a time, there was a dog named Rex. Rex was a very good dog. Every morning he walked the "
         "children to school, carried the newspaper home without a single tear in it, and greeted the baker "
         "with one polite bark. Every evening he waited at the gate until the last child was home, then he "
         "lay down by the fire and dreamt of long walks along the river, where the ducks never once let him "
         "catch them, and he never once minded.")
HAIKU = {"japanese": ["エーアイの", "橋つなぐ道", "コパキット"],
         "english": ["From AI's realm", "A bridge-road linking us—", "CopilotKit."]}


def write(ctx: RunContext) -> Iterator[BaseEvent]:
    """Predict ``document`` from the tool's streaming argument, then ask to confirm the change."""
    yield ctx.ev.custom("PredictState", [{"state_key": "document", "tool": DOCUMENT_TOOL,
                                          "tool_argument": "document"}])
    yield from ctx.ev.tool_call(new_id("call"), DOCUMENT_TOOL, {"document": STORY}, None, words=True)
    yield from ctx.ev.tool_call(new_id("call"), CONFIRM_CHANGES, {}, None)
    yield ctx.ev.run_finished()


def think(ctx: RunContext) -> Iterator[BaseEvent]:
    """Reasoning first (streamed), then the answer."""
    yield from ctx.ev.reasoning("The person asks me to think. I weigh two options, then pick the simpler one.")
    yield from ctx.ev.text_message("I would pick the simpler option: it is easier to undo.")
    yield ctx.ev.run_finished()


FLIGHTS = [{"airline": "KLM", "departure": "Amsterdam (AMS)", "arrival": "San Francisco (SFO)", "price": "$650",
            "duration": "11h 30m"},
           {"airline": "United", "departure": "Amsterdam (AMS)", "arrival": "San Francisco (SFO)", "price": "$720",
            "duration": "12h 15m"}]
PLAN = ("Start the planning", "Book the launch window", "Pack the rover", "Check the oxygen twice")


def flights(ctx: RunContext) -> Iterator[BaseEvent]:
    """The dojo's subgraphs: the flights sub-agent asks, on the legacy channel, to pick one of its options."""
    value = {"agent": "flights", "message": "Which flight should I book?", "options": FLIGHTS,
             "recommendation": FLIGHTS[0]}
    yield from ctx.interrupt("flights", legacy_value=json.dumps(value))


def plan(ctx: RunContext) -> Iterator[BaseEvent]:
    """The dojo's LangGraph human in the loop: ``{"steps": [{description, status}, …]}`` on the legacy channel."""
    value = {"steps": [{"description": step, "status": "enabled"} for step in PLAN]}
    yield from ctx.interrupt("plan", legacy_value=json.dumps(value))


def haiku(ctx: RunContext) -> Iterator[BaseEvent]:
    """A haiku as a ``generate_haiku`` call that comes only in a ``MESSAGES_SNAPSHOT``, its result with it."""
    call_id = new_id("call")
    call = ToolCall(id=call_id, type="function", function=FunctionCall(name="generate_haiku",
                                                                       arguments=json.dumps(HAIKU)))
    messages = [*ctx.body.messages, AssistantMessage(id=new_id("msg"), role="assistant", tool_calls=[call]),
                ToolMessage(id=new_id("msg"), role="tool", content="Haiku created", tool_call_id=call_id)]
    yield ctx.ev.messages_snapshot(messages)
    yield ctx.ev.run_finished()
