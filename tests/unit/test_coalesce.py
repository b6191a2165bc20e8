"""Deltas that arrived together are applied together (interrupt_chat.agui.coalesce)."""

from __future__ import annotations

import random

from ag_ui.core import BaseEvent, EventType

from interrupt_chat.agui import Transcript
from interrupt_chat.agui.coalesce import coalesce
from interrupt_chat.agui.events import parse_event


def ev(kind: str, **fields) -> BaseEvent:
    event = parse_event({"type": kind, **fields})
    assert event is not None
    return event


def content(message_id: str, delta: str, **extra) -> BaseEvent:
    return ev("TEXT_MESSAGE_CONTENT", messageId=message_id, delta=delta, **extra)


def shape(events: list[BaseEvent]) -> list[tuple[str, str | None]]:
    return [(e.type.value, getattr(e, "delta", None)) for e in events]


def test_consecutive_deltas_of_one_message_become_one_event():
    first = content("m1", "Hel", timestamp=17)
    out = coalesce([ev("TEXT_MESSAGE_START", messageId="m1", role="assistant"), first, content("m1", "lo"),
                    content("m1", ", world"), ev("TEXT_MESSAGE_END", messageId="m1")])
    assert shape(out) == [("TEXT_MESSAGE_START", None), ("TEXT_MESSAGE_CONTENT", "Hello, world"),
                          ("TEXT_MESSAGE_END", None)]
    assert out[1].message_id == "m1" and out[1].timestamp == 17  # the group's first event, joined delta
    assert first.delta == "Hel"  # the input events are not changed


def test_deltas_join_only_with_their_own_message_or_call():
    out = coalesce([content("a", "1"), content("b", "2"), content("b", "3"), content("a", "4"),
                    ev("REASONING_MESSAGE_CONTENT", messageId="a", delta="r1"),
                    ev("REASONING_MESSAGE_CONTENT", messageId="a", delta="r2"),
                    ev("TOOL_CALL_ARGS", toolCallId="c1", delta='{"x"'),
                    ev("TOOL_CALL_ARGS", toolCallId="c1", delta=": 1}"),
                    ev("TOOL_CALL_ARGS", toolCallId="c2", delta="{}")])
    assert shape(out) == [("TEXT_MESSAGE_CONTENT", "1"), ("TEXT_MESSAGE_CONTENT", "23"),
                          ("TEXT_MESSAGE_CONTENT", "4"), ("REASONING_MESSAGE_CONTENT", "r1r2"),
                          ("TOOL_CALL_ARGS", '{"x": 1}'), ("TOOL_CALL_ARGS", "{}")]


def test_any_other_event_between_two_deltas_keeps_them_apart():
    out = coalesce([content("m", "a"), ev("STATE_DELTA", delta=[]), content("m", "b"), ev("RAW", event={}),
                    content("m", "c")])
    assert [e.type for e in out] == [EventType.TEXT_MESSAGE_CONTENT, EventType.STATE_DELTA,
                                     EventType.TEXT_MESSAGE_CONTENT, EventType.RAW, EventType.TEXT_MESSAGE_CONTENT]


def test_a_lone_delta_is_passed_on_as_is():
    lone = content("m", "x")
    assert coalesce([lone])[0] is lone and coalesce([]) == []


def test_the_transcript_is_the_same_with_or_without_joining():
    """Random interleavings of two messages and a tool call: joined deltas fold into the same transcript."""
    rng = random.Random(20261201)
    for _ in range(50):
        events = [ev("RUN_STARTED", threadId="t", runId="r"),
                  ev("TEXT_MESSAGE_START", messageId="m1", role="assistant"),
                  ev("REASONING_MESSAGE_START", messageId="m2", role="reasoning"),
                  ev("TOOL_CALL_START", toolCallId="c1", toolCallName="lookup", parentMessageId="m1")]
        for i in range(rng.randint(1, 60)):
            kind = rng.choice(["text", "reasoning", "args", "state"])
            if kind == "text":
                events.append(content("m1", f"t{i} "))
            elif kind == "reasoning":
                events.append(ev("REASONING_MESSAGE_CONTENT", messageId="m2", delta=f"r{i} "))
            elif kind == "args":
                events.append(ev("TOOL_CALL_ARGS", toolCallId="c1", delta=str(i)))
            else:
                events.append(ev("STATE_SNAPSHOT", snapshot={"i": i}))
        events += [ev("TEXT_MESSAGE_END", messageId="m1"), ev("REASONING_MESSAGE_END", messageId="m2"),
                   ev("TOOL_CALL_END", toolCallId="c1"), ev("RUN_FINISHED", threadId="t", runId="r")]
        one_by_one, joined = Transcript(), Transcript()
        for event in events:
            one_by_one.apply(event)
        for event in coalesce(events):
            joined.apply(event)
        assert [(m.id, m.role, m.content) for m in joined.messages] == \
            [(m.id, m.role, m.content) for m in one_by_one.messages]
        assert joined.tool_calls["c1"].args_text == one_by_one.tool_calls["c1"].args_text
        assert joined.state == one_by_one.state
