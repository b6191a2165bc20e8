"""A run's lifecycle: ``RUN_STARTED``, ``RUN_FINISHED``, ``RUN_ERROR``, steps, and a failed run's clean-up.

Each handler takes the transcript and the event of its type (as :mod:`.fold` lists them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ag_ui.core import RunErrorEvent, RunFinishedEvent, RunStartedEvent, StepFinishedEvent, StepStartedEvent

from ..sanitize import short_text

if TYPE_CHECKING:
    from .core import Transcript


def run_started(t: Transcript, event: RunStartedEvent) -> None:
    """A run starts: status ``running``, no error, no step; no call is awaiting until an interrupt says so."""
    t.status, t.error, t.step, t.last_step = "running", None, None, None
    t.thread_id, t.run_id = event.thread_id, event.run_id
    t._run_tool_calls.clear()
    t._sizes = {}
    t.predictor.run_started()
    t.set_awaiting(())


def run_finished(t: Transcript, event: RunFinishedEvent) -> None:
    """The run ended: ``cancelled`` if its outcome says so, else ``finished``."""
    outcome = getattr(event.outcome, "type", None)
    t.status = "cancelled" if outcome == "cancelled" else "finished"
    t.step = None


def run_error(t: Transcript, event: RunErrorEvent) -> None:
    """The agent reported an error: the run fails with its message (shortened) and code."""
    message = short_text(event.message, 240) or "the agent reported an error without a message"
    detail = f" ({short_text(event.code, 56)})" if event.code else ""
    t.fail(f"{message}{detail}")


def step_started(t: Transcript, event: StepStartedEvent) -> None:
    """The current step, and the run's last one."""
    t.step = t.last_step = event.step_name


def step_finished(t: Transcript, event: StepFinishedEvent) -> None:
    """The current step ended (another's end leaves it)."""
    if t.step == event.step_name:
        t.step = None


def fail(t: Transcript, error: str) -> None:
    """The run failed: its calls without a result (none awaiting) fail, its streaming messages close."""
    t.status = "error"
    t.error = error
    for call_id in t._run_tool_calls:
        call = t.tool_calls.get(call_id)
        if call is not None and call.result is None and not call.awaiting:
            call.failed = True
            t._touch_call(call)
    for message in t._opened:  # every streaming message is in it
        if message.streaming:
            message.streaming = False
            t._touch(message.id)
    t._opened = []
    t._run_tool_calls.clear()
    t.step = None
