"""A run's request body: its ``RunAgentInput`` as JSON bytes, the history written from cached JSON text.

Every run sends the whole history (the protocol requires it), so a body dumped whole costs more as the
thread grows: about 6 ms at 600 messages, most of it ag-ui-protocol's serializer, which runs Python for
every model. The transcript keeps each message's JSON text beside its cached model
(:meth:`~.transcript.Transcript.message_json`): :func:`encode` writes those and dumps the rest, and
gives the same bytes as dumping the input whole (``tests/unit/test_transcript_cache.py`` checks it
after every step of its event sequences).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ag_ui.core import Message, RunAgentInput
from pydantic import TypeAdapter

__all__ = ["MESSAGE_ADAPTER", "MessageJson", "body_of", "encode", "json_text", "message_json"]

#: The JSON text of a message as the run input writes it, or None when the caller has none cached.
MessageJson = Callable[[Message], str | None]
#: The messages' own type: a message dumped through it is written as the input's list writes it.
MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)
# always sent (protocol doc section 4): producers on ag-ui-protocol 0.1.x require them, and
# exclude_none drops them when unset (or when the last state snapshot was null)
_ALWAYS: tuple[tuple[str, Any], ...] = (("state", {}), ("tools", []), ("context", []), ("forwardedProps", {}))


def json_text(value: Any) -> str:
    """``value`` as httpx writes a JSON body: compact, characters as they are (UTF-8), no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def message_json(message: Message) -> str:
    """One message's JSON text, as the run input's ``messages`` list writes it."""
    return json_text(MESSAGE_ADAPTER.dump_python(message, mode="json", by_alias=True, exclude_none=True))


def body_of(run_input: RunAgentInput) -> dict[str, Any]:
    """The input as its wire dict (camelCase keys, no nulls), with the keys every producer requires."""
    body = run_input.model_dump(mode="json", by_alias=True, exclude_none=True)
    for key, empty in _ALWAYS:
        body.setdefault(key, empty)
    return body


def encode(run_input: RunAgentInput | dict[str, Any], cached: MessageJson | None = None) -> bytes:
    """The request body: ``json_text(body_of(run_input))`` in UTF-8, the messages' text from ``cached``.

    A message ``cached`` has no text for is dumped on its own. A dict is sent as it is.

    Raises:
        ValueError: a value JSON cannot hold (NaN, infinity), as ``json.dumps`` raises it.
    """
    if isinstance(run_input, dict):
        return json_text(run_input).encode()
    if cached is None:
        return json_text(body_of(run_input)).encode()
    rest = body_of(run_input.model_copy(update={"messages": []}))  # every other field, in its place
    texts = []
    for message in run_input.messages:
        text = cached(message)
        texts.append(text if text is not None else message_json(message))
    messages = "[" + ",".join(texts) + "]"
    fields = ",".join(json_text(key) + ":" + (messages if key == "messages" else json_text(value))
                      for key, value in rest.items())
    return ("{" + fields + "}").encode()
