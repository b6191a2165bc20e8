"""*_CHUNK expansion (interrupt_chat.agui.chunks), after @ag-ui/client's chunks/transform.ts.

A chunked message / tool call stays open while chunks with its id (or no id) arrive; it closes
on a chunk naming another id, on another lifecycle or message event, and at the end (flush).
"""

from __future__ import annotations

import pytest
from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    EventType,
    RawEvent,
    ReasoningEncryptedValueEvent,
    ReasoningMessageChunkEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    TextMessageChunkEvent,
    TextMessageStartEvent,
    ToolCallChunkEvent,
    ToolCallResultEvent,
)

from interrupt_chat.agui import ChunkError, ChunkExpander, Transcript, Verifier, parse_event

E = EventType


def text_chunk(message_id=None, delta=None, **kw) -> TextMessageChunkEvent:
    return TextMessageChunkEvent(message_id=message_id, delta=delta, **kw)


def tool_chunk(call_id=None, delta=None, name=None, parent=None) -> ToolCallChunkEvent:
    return ToolCallChunkEvent(tool_call_id=call_id, tool_call_name=name, parent_message_id=parent, delta=delta)


def reasoning_chunk(message_id=None, delta=None) -> ReasoningMessageChunkEvent:
    return ReasoningMessageChunkEvent(message_id=message_id, delta=delta)


def expand(*events, flush=True) -> list:
    expander = ChunkExpander()
    out = []
    for event in events:
        out += expander.feed(event)
    if flush:
        out += expander.flush()
    return out


def shape(events) -> list[tuple]:
    """(type, id, delta-or-name) per event, for compact assertions."""
    rows = []
    for e in events:
        ident = getattr(e, "message_id", None) or getattr(e, "tool_call_id", None)
        extra = getattr(e, "delta", None)
        if e.type in (E.TOOL_CALL_START,):
            extra = e.tool_call_name
        rows.append((e.type.value, ident, extra) if ident else (e.type.value,))
    return rows


# -- text -------------------------------------------------------------------------------------------

def test_single_text_chunk_expands_to_start_content_end():
    out = expand(text_chunk("m1", "Hello"))
    assert shape(out) == [("TEXT_MESSAGE_START", "m1", None), ("TEXT_MESSAGE_CONTENT", "m1", "Hello"),
                          ("TEXT_MESSAGE_END", "m1", None)]
    assert out[0].role == "assistant"


def test_text_chunks_with_same_id_or_no_id_continue_one_message():
    out = expand(text_chunk("m1", "a"), text_chunk("m1", "b"), text_chunk(None, "c"), text_chunk(delta="d"))
    assert shape(out) == [("TEXT_MESSAGE_START", "m1", None), ("TEXT_MESSAGE_CONTENT", "m1", "a"),
                          ("TEXT_MESSAGE_CONTENT", "m1", "b"), ("TEXT_MESSAGE_CONTENT", "m1", "c"),
                          ("TEXT_MESSAGE_CONTENT", "m1", "d"), ("TEXT_MESSAGE_END", "m1", None)]


def test_text_chunk_with_another_id_closes_the_open_message():
    out = expand(text_chunk("m1", "a"), text_chunk("m2", "b"))
    assert shape(out) == [("TEXT_MESSAGE_START", "m1", None), ("TEXT_MESSAGE_CONTENT", "m1", "a"),
                          ("TEXT_MESSAGE_END", "m1", None),
                          ("TEXT_MESSAGE_START", "m2", None), ("TEXT_MESSAGE_CONTENT", "m2", "b"),
                          ("TEXT_MESSAGE_END", "m2", None)]


def test_text_chunk_role_and_name_carried_to_start():
    out = expand(text_chunk("m1", "hi", role="user", name="alice"))
    assert out[0].role == "user" and out[0].name == "alice"


def test_text_chunk_without_delta_only_starts():
    out = expand(text_chunk("m1"), text_chunk("m1", ""), text_chunk("m1", "x"))
    assert shape(out) == [("TEXT_MESSAGE_START", "m1", None), ("TEXT_MESSAGE_CONTENT", "m1", "x"),
                          ("TEXT_MESSAGE_END", "m1", None)]


@pytest.mark.parametrize("closer", [
    RunFinishedEvent(thread_id="t", run_id="r"),
    TextMessageStartEvent(message_id="m9"),
    StateDeltaEvent(delta=[]),
    CustomEvent(name="on_interrupt", value="x"),
    ToolCallResultEvent(message_id="tm", tool_call_id="c", content="done"),
    RunStartedEvent(thread_id="t", run_id="r2"),
], ids=lambda e: e.type.value)
def test_another_lifecycle_or_message_event_closes_the_open_chunk(closer):
    out = expand(text_chunk("m1", "a"), closer, flush=False)
    assert shape(out)[-2:] == [("TEXT_MESSAGE_END", "m1", None), shape([closer])[0]]
    assert out[-1] is closer


@pytest.mark.parametrize("passthrough", [
    RawEvent(event={"x": 1}),
    ActivitySnapshotEvent(message_id="a1", activity_type="progress", content={"pct": 10}),
    ActivityDeltaEvent(message_id="a1", activity_type="progress", patch=[]),
    ReasoningEncryptedValueEvent(subtype="message", entity_id="m1", encrypted_value="enc"),
    parse_event({"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "helper"}),
], ids=lambda e: e.type.value)
def test_raw_activity_and_encrypted_value_do_not_close_the_open_chunk(passthrough):
    """As in transform.ts: these pass through; an id-less chunk after them continues the message."""
    out = expand(text_chunk("m1", "a"), passthrough, text_chunk(delta="b"))
    assert shape(out) == [("TEXT_MESSAGE_START", "m1", None), ("TEXT_MESSAGE_CONTENT", "m1", "a"),
                          shape([passthrough])[0], ("TEXT_MESSAGE_CONTENT", "m1", "b"),
                          ("TEXT_MESSAGE_END", "m1", None)]


def test_chunk_after_a_closing_event_reopens_with_a_start():
    out = expand(text_chunk("m1", "a"), StateDeltaEvent(delta=[]), text_chunk("m1", "b"))
    assert [s[0] for s in shape(out)] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                                          "STATE_DELTA", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                                          "TEXT_MESSAGE_END"]


def test_id_less_chunk_after_a_closing_event_is_an_error():
    expander = ChunkExpander()
    expander.feed(text_chunk("m1", "a"))
    expander.feed(StateDeltaEvent(delta=[]))
    with pytest.raises(ChunkError):
        expander.feed(text_chunk(delta="b"))


# -- flush ------------------------------------------------------------------------------------------

def test_flush_closes_the_open_chunk_once():
    expander = ChunkExpander()
    expander.feed(text_chunk("m1", "a"))
    assert shape(expander.flush()) == [("TEXT_MESSAGE_END", "m1", None)]
    assert expander.flush() == []


def test_flush_with_nothing_open_is_empty():
    assert ChunkExpander().flush() == []


def test_non_chunk_events_pass_through_unchanged():
    started = RunStartedEvent(thread_id="t", run_id="r")
    assert ChunkExpander().feed(started) == [started]


# -- missing ids ------------------------------------------------------------------------------------

@pytest.mark.parametrize("first", [text_chunk(None, "a"), reasoning_chunk(None, "a"),
                                   tool_chunk(None, "{}", name="f")], ids=lambda e: e.type.value)
def test_first_chunk_without_id_is_a_chunk_error(first):
    with pytest.raises(ChunkError, match="needs an id"):
        ChunkExpander().feed(first)


def test_first_tool_call_chunk_without_name_is_a_chunk_error():
    with pytest.raises(ChunkError, match="toolCallName"):
        ChunkExpander().feed(tool_chunk("c1", "{}"))


def test_id_less_chunk_of_another_kind_is_a_chunk_error():
    expander = ChunkExpander()
    expander.feed(text_chunk("m1", "a"))
    with pytest.raises(ChunkError):
        expander.feed(tool_chunk(None, "{}"))


# -- tool calls -------------------------------------------------------------------------------------

def test_tool_call_chunks_expand_to_start_args_end():
    out = expand(tool_chunk("c1", '{"a":', name="search", parent="m1"), tool_chunk(None, " 1"),
                 tool_chunk("c1", "}"))
    assert shape(out) == [("TOOL_CALL_START", "c1", "search"), ("TOOL_CALL_ARGS", "c1", '{"a":'),
                          ("TOOL_CALL_ARGS", "c1", " 1"), ("TOOL_CALL_ARGS", "c1", "}"),
                          ("TOOL_CALL_END", "c1", None)]
    assert out[0].parent_message_id == "m1"


def test_tool_call_chunk_with_another_id_closes_the_first_call():
    out = expand(tool_chunk("c1", "{}", name="a"), tool_chunk("c2", "{}", name="b"))
    assert [s[:2] for s in shape(out)] == [("TOOL_CALL_START", "c1"), ("TOOL_CALL_ARGS", "c1"),
                                           ("TOOL_CALL_END", "c1"), ("TOOL_CALL_START", "c2"),
                                           ("TOOL_CALL_ARGS", "c2"), ("TOOL_CALL_END", "c2")]


def test_text_then_tool_then_text_close_each_other():
    out = expand(text_chunk("m1", "thinking"), tool_chunk("c1", "{}", name="f", parent="m1"),
                 text_chunk("m2", "done"))
    assert [s[0] for s in shape(out)] == [
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


def test_tool_call_chunk_without_delta_only_starts():
    out = expand(tool_chunk("c1", name="noop"))
    assert shape(out) == [("TOOL_CALL_START", "c1", "noop"), ("TOOL_CALL_END", "c1", None)]


# -- reasoning --------------------------------------------------------------------------------------

def test_reasoning_chunks_expand():
    out = expand(reasoning_chunk("r1", "hmm"), reasoning_chunk(None, " ok"), text_chunk("m1", "answer"))
    assert shape(out) == [("REASONING_MESSAGE_START", "r1", None), ("REASONING_MESSAGE_CONTENT", "r1", "hmm"),
                          ("REASONING_MESSAGE_CONTENT", "r1", " ok"), ("REASONING_MESSAGE_END", "r1", None),
                          ("TEXT_MESSAGE_START", "m1", None), ("TEXT_MESSAGE_CONTENT", "m1", "answer"),
                          ("TEXT_MESSAGE_END", "m1", None)]
    assert out[0].role == "reasoning"


def test_reasoning_chunk_with_another_id_closes_the_first():
    out = expand(reasoning_chunk("r1", "a"), reasoning_chunk("r2", "b"))
    assert [s[:2] for s in shape(out)] == [
        ("REASONING_MESSAGE_START", "r1"), ("REASONING_MESSAGE_CONTENT", "r1"), ("REASONING_MESSAGE_END", "r1"),
        ("REASONING_MESSAGE_START", "r2"), ("REASONING_MESSAGE_CONTENT", "r2"), ("REASONING_MESSAGE_END", "r2")]


def test_text_and_reasoning_chunks_sharing_an_id_are_separate_blocks():
    out = expand(text_chunk("x", "a"), reasoning_chunk("x", "b"))
    assert [s[0] for s in shape(out)] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                                          "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
                                          "REASONING_MESSAGE_END"]


# -- the expansion feeds the rest of the pipeline -----------------------------------------------------

def test_expanded_stream_passes_the_verifier_and_builds_the_transcript():
    wire = [RunStartedEvent(thread_id="t", run_id="r"),
            reasoning_chunk("think", "let me see"),
            text_chunk("m1", "Deleting "), text_chunk(delta="files"),
            tool_chunk("c1", '{"count"', name="delete_files", parent="m1"), tool_chunk(delta=": 3}"),
            RawEvent(event={}),
            tool_chunk(delta=""),
            RunFinishedEvent(thread_id="t", run_id="r")]
    verifier, transcript, expander = Verifier(), Transcript(), ChunkExpander()
    for event in wire:
        for expanded in expander.feed(event):
            verifier.check(expanded)
            transcript.apply(expanded)
    assert expander.flush() == []
    assert [(m.id, m.role, m.content) for m in transcript.messages] == [
        ("think", "reasoning", "let me see"), ("m1", "assistant", "Deleting files")]
    call = transcript.tool_calls["c1"]
    assert call.args == {"count": 3} and call.status == "running"
    assert transcript.status == "finished"
