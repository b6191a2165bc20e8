"""Wire dicts -> typed ``ag_ui.core`` events, with AG-UI 1.0's drop/strip rules.

The Python SDK has no enforcement stage, so the client applies the spec's forward-compatibility
rules itself: an unknown event type is dropped, an unknown ``RUN_FINISHED`` outcome type is
stripped (read as success). Both log a warning and never raise.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Event,
    EventType,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from pydantic import TypeAdapter, ValidationError

from .errors import MalformedEvent

__all__ = ["DELTA_TYPES", "EVENT_ADAPTER", "KNOWN_EVENT_TYPES", "KNOWN_OUTCOME_TYPES", "RUN_ENDS", "MalformedEvent",
           "parse_delta_json", "parse_event", "parse_snapshot_json"]

log = logging.getLogger(__name__)

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
KNOWN_EVENT_TYPES = frozenset(t.value for t in EventType)
KNOWN_OUTCOME_TYPES = frozenset({"success", "interrupt", "cancelled"})
# the streamed deltas: nearly all of a stream's events (joined by coalesce, paced by the driver's throttle)
DELTA_TYPES = frozenset({EventType.TEXT_MESSAGE_CONTENT, EventType.REASONING_MESSAGE_CONTENT,
                         EventType.TOOL_CALL_ARGS})
RUN_ENDS = frozenset({EventType.RUN_FINISHED, EventType.RUN_ERROR})  # a run's last event, whichever way it ends
# a hint only (what parse_delta_json takes is decided on the validated event): the type comes first
_DELTA_PREFIX = re.compile(r'\{\s*"type"\s*:\s*"(' + "|".join(sorted(t.value for t in DELTA_TYPES)) + ')"')
# the model the prefix names, validated on its own: 12 % less per delta than through the union of 31 events
_DELTA_MODELS: dict[str, Any] = {  # type -> the model's schema validator
    m.model_fields["type"].default.value: m.__pydantic_validator__
    for m in (TextMessageContentEvent, ReasoningMessageContentEvent, ToolCallArgsEvent)}


def parse_delta_json(data: str) -> BaseEvent | None:
    """A streamed delta validated straight from its JSON text; None: take the general path.

    Deltas are nearly all of a stream's events, and pydantic reads JSON text into the model without
    building a dict first (about 2.5 times faster than ``json.loads`` and :func:`parse_event`). Only
    a plain delta is taken: no ``rawEvent``, ``metadata`` or unknown fields, so nothing nested that
    the general path's depth limit would have to see. Anything else, an error included, is None,
    and the general path decides, with its own messages. The caller keeps surrogate escapes away.
    """
    found = _DELTA_PREFIX.match(data)
    if found is None:
        return None
    try:  # a later "type" key wins in JSON: the model's own literal type then refuses it
        event = _DELTA_MODELS[found.group(1)].validate_json(data)
    except ValidationError:
        return None
    if event.type in DELTA_TYPES and event.raw_event is None and event.metadata is None and not event.model_extra:
        return event
    return None


_SNAPSHOT_PREFIX = re.compile(r'\{\s*"type"\s*:\s*"MESSAGES_SNAPSHOT"')


def _plain_part(part: Any) -> bool:
    source = part.__dict__.get("source")
    return not part.__pydantic_extra__ and (source is None or not source.__pydantic_extra__)


def _plain_message(message: Any) -> bool:
    """A snapshot message of fixed depth: known fields only, and no free-form JSON (an activity's content).

    Reads the models' own ``__dict__`` (a field a role lacks is a miss there, not a raised AttributeError).
    """
    if message.__pydantic_extra__ or message.role == "activity":
        return False
    fields = message.__dict__
    content = fields.get("content")
    if content.__class__ is list and not all(map(_plain_part, content)):
        return False
    calls = fields.get("tool_calls")
    return not calls or all(not c.__pydantic_extra__ and not c.function.__pydantic_extra__ for c in calls)


def parse_snapshot_json(data: str) -> BaseEvent | None:
    """A ``MESSAGES_SNAPSHOT`` validated straight from its JSON text; None: take the general path.

    A snapshot carries the whole thread, and producers such as LangGraph's send one at the end of
    every run: building its dicts with ``json.loads``, walking them for the depth limit and then
    validating them cost about three times what pydantic's reading of the text does. Only a plain
    snapshot is taken (no ``rawEvent``, ``metadata`` or unknown fields on it or on any message, part
    or tool call, no activity message): its depth is that of the AG-UI models, so the general path's
    depth limit has nothing to see. Anything else, an error included, is None. The caller keeps
    surrogate escapes away.
    """
    if _SNAPSHOT_PREFIX.match(data) is None:
        return None
    try:
        event = EVENT_ADAPTER.validate_json(data)
    except ValidationError:
        return None
    if (event.type != EventType.MESSAGES_SNAPSHOT or event.raw_event is not None or event.metadata is not None
            or event.model_extra or not all(map(_plain_message, event.messages))):
        return None
    return event


def parse_event(obj: Any) -> BaseEvent | None:
    """Validate one wire event.

    Args:
        obj: a decoded JSON value (normally a dict with camelCase keys) or an event model.

    Returns:
        The typed event, or None when the event must be dropped (unknown ``type``).

    Raises:
        MalformedEvent: the value is not an object, or a known type fails validation.
    """
    if isinstance(obj, BaseEvent):
        return obj
    if not isinstance(obj, dict):
        raise MalformedEvent(f"an event must be a JSON object, got {type(obj).__name__}")
    event_type = obj.get("type")
    if event_type is not None and not isinstance(event_type, str):
        raise MalformedEvent(f"an event's type must be a string, got {type(event_type).__name__}")
    if event_type not in KNOWN_EVENT_TYPES:
        log.warning("dropping event of unknown type %.80r", event_type)
        return None
    outcome = obj.get("outcome")
    if (event_type == EventType.RUN_FINISHED.value and isinstance(outcome, dict)
            and isinstance(outcome.get("type"), str) and outcome.get("type") not in KNOWN_OUTCOME_TYPES):
        log.warning("stripping RUN_FINISHED outcome of unknown type %.80r", outcome.get("type"))
        obj = {k: v for k, v in obj.items() if k != "outcome"}
    try:
        return EVENT_ADAPTER.validate_python(obj)
    except ValidationError as exc:
        raise MalformedEvent(f"invalid {event_type} event: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg')}{more}"
