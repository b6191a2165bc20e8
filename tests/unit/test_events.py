"""``parse_delta_json`` and ``parse_snapshot_json``, the fast paths for streamed deltas and for snapshots, agree
with the general path or stand aside.

The general path is ``json.loads`` then :func:`parse_event` (with the depth limit and the surrogate
repair in the transport). The fast path may only ever return the event the general path would
return; for anything else it returns None and the general path decides.
"""

from __future__ import annotations

import json
import random

import pytest

from interrupt_chat.agui.events import parse_delta_json, parse_event, parse_snapshot_json
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
    # the model is the one the first "type" names: a later one, even another delta's, is the general path's
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","type":"TOOL_CALL_ARGS","toolCallId":"c"}',
    '{"type":"TOOL_CALL_ARGS","messageId":"m","delta":"x"}',  # another delta's fields under this type
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


# -- parse_snapshot_json: a MESSAGES_SNAPSHOT straight from its text (issue 27) -------------------------------

SNAPSHOT_MESSAGES = [
    {"id": "u1", "role": "user", "content": "hi ü 😀 \\ \" \n"},
    {"id": "a1", "role": "assistant", "content": "calling",
     "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": [1, {}]}"}}]},
    {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "done", "error": "no"},
    {"id": "u2", "role": "user", "content": [{"type": "text", "text": "see"},
                                             {"type": "image", "source": {"type": "url", "value": "https://x/y.png"}}]},
    {"id": "s1", "role": "system", "content": "be brief"},
    {"id": "a2", "role": "assistant"},
]


def test_a_plain_snapshot_is_read_from_its_text_as_the_general_path_reads_it():
    for messages in (SNAPSHOT_MESSAGES, [], SNAPSHOT_MESSAGES[:1]):
        data = json.dumps({"type": "MESSAGES_SNAPSHOT", "messages": messages}, ensure_ascii=False)
        fast = parse_snapshot_json(data)
        assert fast is not None and fast == general(data)
        assert _decode(data, SurrogateRepair()) == general(data)


@pytest.mark.parametrize("change", [
    lambda e: e.update(rawEvent={"a": [[1]]}),
    lambda e: e.update(metadata={}),
    lambda e: e.update(extra=[[[1]]]),
    lambda e: e["messages"][0].update(extra={"deep": [[[]]]}),  # an unknown field on a message
    lambda e: e["messages"][1]["toolCalls"][0].update(extra=1),
    lambda e: e["messages"][1]["toolCalls"][0]["function"].update(extra=1),
    lambda e: e["messages"][3]["content"][1]["source"].update(extra=1),
    lambda e: e["messages"].append({"id": "x", "role": "activity", "activityType": "a", "content": {"d": [[1]]}}),
    lambda e: e["messages"][0].update(content=42),  # invalid: the general path words the error
    lambda e: e.update(type="MESSAGES_SNAPSHOTS"),
])
def test_the_snapshot_fast_path_stands_aside_for_anything_but_a_plain_valid_snapshot(change):
    event = {"type": "MESSAGES_SNAPSHOT", "messages": json.loads(json.dumps(SNAPSHOT_MESSAGES))}
    change(event)
    assert parse_snapshot_json(json.dumps(event)) is None
