"""Deltas that arrived together are applied together.

An agent that streams faster than the client reads (no pacing, a backlog after a slow moment)
leaves hundreds of events in one network read. Most are text deltas of one message: applying
each on its own costs the verify, reduce and view stages once per delta, when their sum is what
the transcript keeps. :func:`coalesce` joins consecutive ``TEXT_MESSAGE_CONTENT``,
``REASONING_MESSAGE_CONTENT`` and ``TOOL_CALL_ARGS`` deltas of the same message or call into one
event, in a batch of events that were already read (it never waits for more).

The result folds into the same transcript: a message's content, or a call's arguments, is the
concatenation of its deltas, and consecutive deltas of one message are valid or invalid together
(the verifier sees the same open message for each). The joined event is the group's first, with
the joined delta (its ``timestamp`` and ``rawEvent`` are the first's).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

from ag_ui.core import BaseEvent, EventType

from .events import DELTA_TYPES

__all__ = ["coalesce"]


def _target(event: BaseEvent) -> tuple[EventType, str] | None:
    """What a delta adds to (its type and message or call id), or None for any other event."""
    if event.type not in DELTA_TYPES:
        return None
    owner = getattr(event, "tool_call_id" if event.type == EventType.TOOL_CALL_ARGS else "message_id")
    return event.type, owner


def coalesce(events: Iterable[BaseEvent]) -> list[BaseEvent]:
    """``events`` with each run of consecutive deltas to one message or call joined into one event."""
    out: list[BaseEvent] = []
    for target, run in groupby(events, key=_target):
        group = list(run)
        if target is None or len(group) == 1:
            out += group
        else:
            joined = "".join(getattr(event, "delta") for event in group)  # noqa: B009 - every DELTA_TYPES event has one
            out.append(group[0].model_copy(update={"delta": joined}))
    return out
