"""``ic.for_reasons(...)``: a configuration's ``enabled`` that takes sets by their interrupt's reason (S16).

A reason is an open string (docs/semantics.md): the standard ``tool_call``, ``input_required`` and
``confirmation``, or a producer's own ``<framework>:<name>``. A hand-written ``enabled`` that compares
against a misspelled reason ("tool_cal") never matches, and every set falls silently to the default
slot; ``for_reasons`` refuses such a name when the class is defined, and says which one was meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

__all__ = ["STANDARD_REASONS", "for_reasons"]

STANDARD_REASONS = ("tool_call", "input_required", "confirmation")


def _check(reason: Any) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise TypeError(f"a reason is a string such as 'tool_call', not {reason!r}")
    framework, _, name = reason.partition(":")
    if reason in STANDARD_REASONS or (framework and name):
        return reason
    close = difflib.get_close_matches(reason, STANDARD_REASONS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"unknown interrupt reason {reason!r}{hint}: a reason is one of "
                     f"{', '.join(STANDARD_REASONS)}, or a producer's own '<framework>:<name>'")


def for_reasons(*reasons: str) -> Callable[[Any, dict[str, Any]], bool]:
    """An ``enabled(self, event)`` that takes a set when its interrupt's ``reason`` is one of ``reasons``.

    ``class Approvals(ic.InterruptState): enabled = ic.for_reasons("tool_call")``. The reason looked at
    is the set's first interrupt's (``event["value"]``), as a hand-written ``enabled`` sees it; a legacy
    value without a reason is not taken.

    Raises:
        ValueError: a reason that is neither standard nor ``<framework>:<name>`` (a typo), or none at all.
    """
    if not reasons:
        raise ValueError("for_reasons() takes at least one reason, e.g. for_reasons('tool_call')")
    wanted = frozenset(_check(reason) for reason in reasons)

    def enabled(self: Any, event: dict[str, Any]) -> bool:
        value = event.get("value") if isinstance(event, dict) else None
        return isinstance(value, dict) and value.get("reason") in wanted

    enabled.__doc__ = f"Take sets whose interrupt's reason is one of {sorted(wanted)}."
    return enabled
