"""New bytes only (docs/decisions/0011): frozen texts in the var, chunks for the rest."""

from __future__ import annotations

import json

from ag_ui.core import (
    MessagesSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from interrupt_chat.agui import Transcript
from interrupt_chat.model.views import message_rows
from interrupt_chat.tab.streaming import Outbox, args_key, script, text_key

THREAD = "thread-1"


def streaming_answer(*parts: str) -> Transcript:
    transcript = Transcript()
    transcript.mark_tail()
    transcript.apply(TextMessageStartEvent(message_id="m1", role="assistant"))
    for part in parts:
        transcript.apply(TextMessageContentEvent(message_id="m1", delta=part))
    return transcript


def test_a_streaming_text_is_frozen_at_first_sight_then_sent_as_appended_chunks():
    transcript, frozen, outbox = streaming_answer("Hel"), {}, Outbox(THREAD)
    key = text_key(THREAD, "m1")
    assert outbox.prepare(frozen, transcript, resync=False) == []  # the var carries "Hel"
    assert frozen == {key: 3}
    assert message_rows(transcript.messages, transcript, THREAD, frozen)[0].content == "Hel"
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="lo, "))
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="world"))
    assert outbox.prepare(frozen, transcript, resync=False) == [(key, 3, "lo, world", False)]
    assert outbox.prepare(frozen, transcript, resync=False) == []  # nothing new, nothing sent
    row = message_rows(transcript.messages, transcript, THREAD, frozen)[0]
    assert (row.content, row.stream) == ("Hel", key)  # the var did not change: no resend


def test_the_end_of_a_text_is_a_done_chunk_and_the_var_keeps_its_prefix():
    transcript, frozen, outbox = streaming_answer("Hi"), {}, Outbox(THREAD)
    outbox.prepare(frozen, transcript, resync=False)
    transcript.apply(TextMessageContentEvent(message_id="m1", delta=" there"))
    transcript.apply(TextMessageEndEvent(message_id="m1"))
    key = text_key(THREAD, "m1")
    assert outbox.prepare(frozen, transcript, resync=False) == [(key, 2, " there", True)]
    assert outbox.prepare(frozen, transcript, resync=False) == []
    row = message_rows(transcript.messages, transcript, THREAD, frozen)[0]
    assert (row.content, row.streaming) == ("Hi", False)  # not sent again: the page has it


def test_resync_puts_streaming_texts_whole_in_the_var_and_unfreezes_finished_ones():
    transcript, frozen, outbox = streaming_answer("abc"), {}, Outbox(THREAD)
    outbox.prepare(frozen, transcript, resync=False)
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="def"))
    key = text_key(THREAD, "m1")
    assert outbox.prepare(frozen, transcript, resync=True) == []
    assert frozen == {key: 6}
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="g"))
    assert outbox.prepare(frozen, transcript, resync=False) == [(key, 6, "g", False)]
    transcript.apply(TextMessageEndEvent(message_id="m1"))
    assert outbox.prepare(frozen, transcript, resync=True) == []
    assert frozen == {}
    assert message_rows(transcript.messages, transcript, THREAD, frozen)[0].content == "abcdefg"


def test_a_text_replaced_by_a_snapshot_goes_whole_in_the_var():
    transcript, frozen, outbox = streaming_answer("first draft"), {}, Outbox(THREAD)
    outbox.prepare(frozen, transcript, resync=False)
    transcript.apply(MessagesSnapshotEvent(messages=[{"id": "m1", "role": "assistant", "content": "other"}]))
    assert outbox.prepare(frozen, transcript, resync=False) == []  # not an append: no chunk
    assert message_rows(transcript.messages, transcript, THREAD, frozen)[0].content == "other"


def test_tool_call_arguments_stream_as_chunks_then_go_formatted_in_the_var():
    transcript, frozen, outbox = Transcript(), {}, Outbox(THREAD)
    transcript.mark_tail()
    transcript.apply(ToolCallStartEvent(tool_call_id="c1", tool_call_name="search"))
    transcript.apply(ToolCallArgsEvent(tool_call_id="c1", delta='{"q": '))
    key = args_key(THREAD, "c1")
    assert outbox.prepare(frozen, transcript, resync=False) == []
    transcript.apply(ToolCallArgsEvent(tool_call_id="c1", delta='"x"}'))
    assert outbox.prepare(frozen, transcript, resync=False) == [(key, 6, '"x"}', False)]
    transcript.apply(ToolCallEndEvent(tool_call_id="c1"))
    assert outbox.prepare(frozen, transcript, resync=False) == []
    assert frozen == {}
    call = message_rows(transcript.messages, transcript, THREAD, frozen)[0].tool_calls[0]
    assert (call.args, call.stream) == ('{\n  "q": "x"\n}', "")


def test_only_grown_frozen_texts_skip_the_lock():
    transcript, frozen, outbox = streaming_answer("ab"), {}, Outbox(THREAD)
    assert outbox.grown(transcript) is None  # a new text: the var must freeze it first
    outbox.prepare(frozen, transcript, resync=False)
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="cd"))
    assert outbox.grown(transcript) == [(text_key(THREAD, "m1"), 2, "cd", False)]
    assert outbox.grown(transcript) == []


def test_keys_are_short_and_distinct_per_thread_and_kind():
    keys = {text_key("t1", "m"), text_key("t2", "m"), args_key("t1", "m")}
    assert len(keys) == 3 and all(len(k) == 10 for k in keys)


def test_s24_the_script_carries_hostile_text_as_json_data_never_code():
    hostile = 'a"); alert(1); ("\n</script>\u2028\u2029\\'
    code = script([("k", 3, hostile, True), ("j", 0, "x", False)])
    prefix = "window.icStream?.("
    assert code.startswith(prefix) and code.endswith(")")
    assert json.loads(code[len(prefix):-1]) == [["k", 3, hostile, 1], ["j", 0, "x"]]


def test_an_earlier_turns_frozen_texts_are_forgotten_when_the_next_turn_streams():
    transcript, frozen, outbox = streaming_answer("one"), {}, Outbox(THREAD)
    outbox.prepare(frozen, transcript, resync=False)
    transcript.apply(TextMessageEndEvent(message_id="m1"))
    outbox.prepare(frozen, transcript, resync=False)
    transcript.mark_tail()  # the next turn: "m1" is history now, drawn whole from `messages`
    transcript.apply(TextMessageStartEvent(message_id="m2", role="assistant"))
    transcript.apply(TextMessageContentEvent(message_id="m2", delta="two"))
    assert outbox.prepare(frozen, transcript, resync=False) == []
    assert frozen == {text_key(THREAD, "m2"): 3}
