"""``parse_delta_json``, the fast path for streamed deltas, agrees with the general path or stands aside.

The general path is ``json.loads`` then :func:`parse_event` (with the depth limit and the surrogate
repair in the transport). The fast path may only ever return the event the general path would
return; for anything else it returns None and the general path decides.
"""

from __future__ import annotations

import json
import random

import pytest

from interrupt_chat.agui.events import parse_delta_json, parse_event
from interrupt_chat.agui.sanitize import SurrogateRepair
from interrupt_chat.agui.transport import _decode

CHARS = ['a', 'Z', ' ', '"', "\\", "\n", "\t", "\r", "\x00", "\x1f", "é", "ß", "€", "😀", "{", "}", "[", "]", ":",
         ",", "\u2028", "\u00a0", "/", "<b>", "`"]
DELTAS = (("TEXT_MESSAGE_CONTENT", "messageId"), ("TOOL_CALL_ARGS", "toolCallId"),
          ("REASONING_MESSAGE_CONTENT", "messageId"))


def general(data: str):
    return parse_event(json.loads(data))


def random_delta(rng: random.Random) -> str:
    kind, id_key = rng.choice(DELTAS)
    fields = {id_key: rng.choice(["m", "msg_0123", "c-1", "ü-id"]),
              "delta": "".join(rng.choice(CHARS) for _ in range(rng.randrange(0, 12)))}
    if rng.random() < 0.3:
        fields["timestamp"] = rng.randrange(0, 2**40)
    keys = list(fields)
    rng.shuffle(keys)
    separators = rng.choice([(",", ":"), (", ", ": "), (" ,", " : ")])
    body = json.dumps({"type": kind, **{k: fields[k] for k in keys}}, ensure_ascii=rng.random() < 0.5,
                      separators=separators)
    return body if rng.random() < 0.8 else " " + body  # SSE keeps a space after "data: " once; JSON allows more


def test_fast_path_reads_random_deltas_as_the_general_path_does():
    rng = random.Random(20261202)
    taken = 0
    for _ in range(3000):
        data = random_delta(rng)
        fast = parse_delta_json(data)
        if fast is not None:
            taken += 1
            assert fast == general(data), data
            assert type(fast) is type(general(data))
    assert taken > 2000  # the leading-space variant is left to the general path; the rest is taken


@pytest.mark.parametrize("data", [
    '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}',  # not a delta
    '{"messageId":"m","type":"TEXT_MESSAGE_CONTENT","delta":"x"}',  # type not first: not worth a try
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","extra":[[1]]}',  # unknown field
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","rawEvent":{"a":1}}',
    '{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"x","metadata":{}}',
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":42}',  # invalid: the general path words the error
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"} trailing',
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","timestamp":NaN}',
    '{"type":"TEXT_MESSAGE_CONTENTS","messageId":"m","delta":"x"}',  # unknown type: dropped by the general path
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","type":"RUN_STARTED","threadId":"t","runId":"r"}',
])
def test_fast_path_stands_aside_for_anything_but_a_plain_valid_delta(data):
    assert parse_delta_json(data) is None


def test_a_pair_split_across_deltas_is_rejoined_with_the_fast_path_in_place():
    """Escaped halves of a UTF-16 pair must meet the repair, so the transport keeps them off the fast path."""
    repair = SurrogateRepair()
    first = _decode('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"a\\ud83d"}', repair)
    second = _decode('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ude00b"}', repair)
    plain = _decode('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"c"}', repair)
    assert [e.delta for e in (first, second, plain)] == ["a", "\U0001f600b", "c"]
