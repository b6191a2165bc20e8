"""The fold: each AG-UI event type the transcript tracks, and the handler that folds it in.

``@ag-ui/client``'s ``defaultApplyEvents`` as a table: :meth:`.core.Transcript.apply` looks an
event's type up here (one dict lookup per event) and calls the handler with the transcript and the
event, of the class its type names (AG-UI's union is discriminated by ``type``). Other types
(``RAW``, other ``CUSTOM`` names, …) are not tracked and pass unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ag_ui.core import EventType

from . import messages, reasoning, run, shared_state, tool_calls

if TYPE_CHECKING:
    from .core import Transcript

_E = EventType

HANDLERS: dict[EventType, Callable[[Transcript, Any], None]] = {
    # the run
    _E.RUN_STARTED: run.run_started,
    _E.RUN_FINISHED: run.run_finished,
    _E.RUN_ERROR: run.run_error,
    _E.STEP_STARTED: run.step_started,
    _E.STEP_FINISHED: run.step_finished,
    # messages
    _E.TEXT_MESSAGE_START: messages.text_start,
    _E.TEXT_MESSAGE_CONTENT: messages.content,
    _E.TEXT_MESSAGE_END: messages.end,
    _E.MESSAGES_SNAPSHOT: messages.snapshot,
    # reasoning (its content and end as a text message's)
    _E.REASONING_MESSAGE_START: reasoning.start,
    _E.REASONING_MESSAGE_CONTENT: messages.content,
    _E.REASONING_MESSAGE_END: messages.end,
    _E.REASONING_ENCRYPTED_VALUE: reasoning.encrypted_value,
    # tool calls
    _E.TOOL_CALL_START: tool_calls.start,
    _E.TOOL_CALL_ARGS: tool_calls.args,
    _E.TOOL_CALL_END: tool_calls.end,
    _E.TOOL_CALL_RESULT: tool_calls.result,
    # shared state and activity
    _E.STATE_SNAPSHOT: shared_state.state_snapshot,
    _E.STATE_DELTA: shared_state.state_delta,
    _E.ACTIVITY_SNAPSHOT: shared_state.activity_snapshot,
    _E.ACTIVITY_DELTA: shared_state.activity_delta,
    _E.CUSTOM: shared_state.custom,
}
