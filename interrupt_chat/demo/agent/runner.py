"""Dispatch one ``RunAgentInput`` to a resume handler, a re-raise or a scenario."""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator

from ag_ui.core import BaseEvent, RunAgentInput

from .context import DemoConfig, RunContext
from .frontend import last_tool_result, tool_followup
from .resume import handle_legacy_resume, handle_resume, legacy_resume_of
from .scenarios import SCENARIOS, select_scenario
from .store import DemoStore

__all__ = ["run_agent"]

logger = logging.getLogger(__name__)


def run_agent(body: RunAgentInput, store: DemoStore, config: DemoConfig) -> Generator[BaseEvent, None, None]:
    """All events of one run, RUN_STARTED first and RUN_FINISHED / RUN_ERROR last.

    - ``resume`` present (non-empty): a standard resume (see ``resume``); it wins over a
      legacy ``forwardedProps.command.resume`` sent alongside, as in ag-ui-langgraph.
    - ``forwardedProps.command.resume``: a legacy resume.
    - otherwise, if interrupts are open on the thread, they are raised again unchanged
      (same ids, now owned by this run), like LangGraph; the new message is not answered.
    - otherwise, if the last message is a tool result (a frontend tool answered), the agent
      answers it (``frontend.tool_followup``).
    - otherwise the scenario named by the last user message runs.
    """
    ctx = RunContext(body, store, config)
    ctx.thread.turn += 1
    yield ctx.ev.run_started(body.parent_run_id)
    legacy = legacy_resume_of(body)
    if body.resume:
        mode, events = "resume", handle_resume(ctx)
    elif legacy is not None:
        mode, events = "legacy-resume", handle_legacy_resume(ctx, legacy)
    elif ctx.thread.open is not None:
        mode, events = "re-raise", _reraise(ctx)
    elif (result := last_tool_result(body)) is not None:
        mode, events = "tool-followup", tool_followup(ctx, result)
    else:
        mode = select_scenario(body)
        events = SCENARIOS[mode](ctx)
    logger.debug("demo agent run %s on thread %s: %s", body.run_id, body.thread_id, mode)
    yield from events


def _reraise(ctx: RunContext) -> Iterator[BaseEvent]:
    open_set = ctx.thread.open
    assert open_set is not None
    yield from ctx.interrupt(open_set.scenario, open_set.pending, legacy_value=open_set.legacy_value)
