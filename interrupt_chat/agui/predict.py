"""Predictive state updates (S33–S35): a tool's argument, while it streams, mirrored into the shared state.

An agent announces ``CUSTOM name="PredictState"`` with ``[{state_key, tool, tool_argument}]`` (LangGraph's
``copilotkit_predict_state``, the dojo's ``predictive_state_updates``). From then on in that run, while a call
of ``tool`` streams its arguments, ``state[state_key]`` follows the partial value of its ``tool_argument``
(S33), parsed from the incomplete JSON by jiter's partial mode. A later ``STATE_SNAPSHOT`` or ``STATE_DELTA``
applies on top as usual: the agent's word wins (S34). The state from before the first predicted change is
kept until the person answers the ``confirm_changes`` frontend tool: keeping the change forgets it, rejecting
(a decline, or ``{"accepted": false}``) restores it (S35).
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass
from typing import Any

import jiter

__all__ = ["CONFIRM_TOOL", "PREDICT_STATE", "Prediction", "Predictor", "parse_predictions", "rejects"]

log = logging.getLogger(__name__)

PREDICT_STATE = "PredictState"
CONFIRM_TOOL = "confirm_changes"
MAX_PREDICTIONS = 32
#: Up to this many characters of arguments, every delta is parsed; past it, once they grew by a sixteenth
#: since the last parse (and at the call's end): a long document costs O(n log n), not O(n²).
EVERY_DELTA_CHARS = 16 * 1024


@dataclass(frozen=True)
class Prediction:
    """``state[state_key]`` follows the argument ``tool_argument`` of the tool ``tool`` while it streams."""

    state_key: str
    tool: str
    tool_argument: str


def parse_predictions(value: Any) -> list[Prediction]:
    """The predictions of a ``PredictState`` value (a list, or its JSON text); malformed entries are skipped."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    out = []
    for entry in value[:MAX_PREDICTIONS]:
        if not isinstance(entry, dict):
            continue
        key, tool, argument = entry.get("state_key"), entry.get("tool"), entry.get("tool_argument")
        if isinstance(key, str) and isinstance(tool, str) and isinstance(argument, str) and key and tool and argument:
            out.append(Prediction(key, tool, argument))
    return out


def rejects(result: Any) -> bool:
    """Whether a ``confirm_changes`` result turns the change down (``{"accepted": false}``, as the dojo answers)."""
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            return False
    return isinstance(result, dict) and result.get("accepted") is False


class Predictor:
    """One thread's predictions: announced per run, and the state to restore until the change is answered."""

    def __init__(self) -> None:
        """Nothing announced, nothing to restore."""
        self.predictions: list[Prediction] = []
        self._calls: dict[str, list[Prediction]] = {}  # tool call id -> what it predicts
        self._parsed: dict[str, int] = {}  # tool call id -> argument length at its last parse
        # the state before the first predicted change (S35), while ``holding``: a flag, not a sentinel
        # object (a pickled copy, another worker's, would hold a different sentinel)
        self.holding = False
        self.prior: Any = None

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickle, also one from before the ``holding`` flag (its sentinel is not a state)."""
        self.__dict__.update(state)
        if "holding" not in state:
            self.holding, self.prior = False, None

    def run_started(self) -> None:
        """A run starts: announcements are per run; a change waiting for an answer stays."""
        self.predictions, self._calls, self._parsed = [], {}, {}

    def announce(self, value: Any) -> None:
        """``PredictState``: these tools' arguments are mirrored from now on in this run."""
        self.predictions = parse_predictions(value)

    def call_started(self, tool_call_id: str, name: str) -> None:
        """A tool call starts: it predicts if its tool was announced."""
        found = [p for p in self.predictions if p.tool == name]
        if found:
            self._calls[tool_call_id] = found
            self._parsed[tool_call_id] = -1

    def predicts(self, tool_call_id: str) -> bool:
        """Whether this call's arguments are mirrored into the state."""
        return tool_call_id in self._calls

    def due(self, tool_call_id: str, size: int) -> bool:
        """Whether arguments grown to ``size`` characters are parsed now (every delta while short)."""
        last = self._parsed.get(tool_call_id)
        return last is not None and (size <= EVERY_DELTA_CHARS or size - last >= size // 16)

    def follow(self, tool_call_id: str, args_text: str, state: Any) -> Any:
        """The state with this call's partial argument values in it (S33), or ``state`` itself when nothing moved."""
        found = self._calls.get(tool_call_id)
        if not found:
            return state
        self._parsed[tool_call_id] = len(args_text)
        try:
            args = jiter.from_json(args_text.encode("utf-8", "surrogatepass"), partial_mode="trailing-strings")
        except ValueError:
            return state  # not JSON (yet, or ever): nothing to mirror
        if not isinstance(args, dict):
            return state
        updates = {p.state_key: args[p.tool_argument] for p in found if p.tool_argument in args}
        base = state if isinstance(state, dict) else {}
        if not updates or all(base.get(k) == v for k, v in updates.items()):
            return state
        if not self.holding:
            self.holding, self.prior = True, copy.deepcopy(state)
        return {**base, **updates}

    def overridden(self) -> None:
        """A ``STATE_SNAPSHOT``: the agent's word wins (S34); calls streaming now no longer move the state."""
        self._calls, self._parsed = {}, {}

    def confirmed(self) -> None:
        """The person kept the change: nothing to restore any more."""
        self.holding, self.prior = False, None

    def rejected(self) -> Any:
        """The person rejected the change: the state to restore (call it only while :attr:`holding`)."""
        prior = self.prior
        self.holding, self.prior = False, None
        return prior

    def export(self) -> dict[str, Any] | None:
        """What a stored thread keeps: the state to restore while a change waits, else None."""
        return {"prior": self.prior} if self.holding else None

    def restore(self, data: Any) -> None:
        """From :meth:`export`."""
        self.holding = isinstance(data, dict) and "prior" in data
        self.prior = data["prior"] if self.holding else None
