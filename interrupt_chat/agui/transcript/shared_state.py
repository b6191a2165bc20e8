"""Shared state and activity content: snapshots, JSON Patch deltas, and PredictState (S33-S35).

``STATE_SNAPSHOT`` replaces the state, ``STATE_DELTA`` patches it all or nothing (:mod:`..json_patch`);
``ACTIVITY_SNAPSHOT`` and ``ACTIVITY_DELTA`` do the same for an activity message's content. Each
handler takes the transcript and the event of its type (as :mod:`.fold` lists them).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ag_ui.core import ActivityDeltaEvent, ActivitySnapshotEvent, CustomEvent, StateDeltaEvent, StateSnapshotEvent

from ..json_patch import UNCHANGED, patched
from ..predict import PREDICT_STATE

if TYPE_CHECKING:
    from .core import Transcript

log = logging.getLogger("interrupt_chat.agui.transcript")  # the reducer's one logger, as before its split


def state_snapshot(t: Transcript, event: StateSnapshotEvent) -> None:
    """The whole state; it wins over a prediction (S34)."""
    t.state = event.snapshot
    t.predictor.overridden()  # S34


def state_delta(t: Transcript, event: StateDeltaEvent) -> None:
    """A JSON Patch on the state: applied whole, or not at all (with a warning)."""
    state = patched(t.state, event.delta, "STATE_DELTA")
    if state is not UNCHANGED:
        t.state = state


def activity_snapshot(t: Transcript, event: ActivitySnapshotEvent) -> None:
    """An activity message's content: set (replaced unless ``replace`` is false and it has some)."""
    message = t._ensure(event.message_id, "activity")
    if message.activity_content is None or event.replace is not False:
        message.activity_content = dict(event.content)
    message.activity_type = event.activity_type
    t._touch(message.id)


def activity_delta(t: Transcript, event: ActivityDeltaEvent) -> None:
    """A JSON Patch on an activity message's content (an unknown activity's is ignored, with a warning)."""
    message = t._by_id.get(event.message_id)
    if message is None or message.activity_content is None:
        log.warning("ACTIVITY_DELTA for unknown activity %.100r ignored", event.message_id)
        return
    content = patched(message.activity_content, event.patch, "ACTIVITY_DELTA")
    if content is not UNCHANGED:
        message.activity_content = content
        t._touch(message.id)


def custom(t: Transcript, event: CustomEvent) -> None:
    """``PredictState`` (S33): which tool arguments the state follows in this run; other custom events pass."""
    if event.name == PREDICT_STATE:
        t.predictor.announce(event.value)


def settle_prediction(t: Transcript, kept: bool) -> None:
    """The person answered ``confirm_changes``: keep the predicted state, or restore the one before it (S35)."""
    if t.predictor.holding:
        if kept:
            t.predictor.confirmed()
        else:
            t.state = t.predictor.rejected()
