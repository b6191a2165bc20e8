"""Pickled transcripts keep the class's path, whichever module of the reducer defines it (issue 40 §2).

Reflex pickles its state (Redis, disk), the sessions and their transcripts with it. Pickles name the
class ``interrupt_chat.agui.transcript.Transcript``: one made on 30b3740 (the reducer one module)
loads and goes on as a fresh transcript does, and one made now names no other path of the reducer,
so it loads in the code from before too.
"""

from __future__ import annotations

import base64
import pickle
import pickletools
import zlib
from typing import Any

from interrupt_chat.agui import Transcript, parse_event
from interrupt_chat.agui.transcript import MAX_PARTS, MAX_TEXT_CHARS, MessageView, ToolCallView

EVENTS: list[dict[str, Any]] = [
    {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
    {"type": "STEP_STARTED", "stepName": "plan"},
    {"type": "REASONING_MESSAGE_START", "messageId": "think", "role": "reasoning"},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "think", "delta": "hm"},
    {"type": "REASONING_MESSAGE_END", "messageId": "think"},
    {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "think", "encryptedValue": "enc"},
    {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Hello"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": " there"},
    {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
    {"type": "CUSTOM", "name": "PredictState",
     "value": [{"state_key": "doc", "tool": "write", "tool_argument": "text"}]},
    {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "write", "parentMessageId": "a1"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"text\": \"dra"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "ft\"}"},
    {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    {"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "look", "parentMessageId": "a1"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": "{}"},
    {"type": "TOOL_CALL_END", "toolCallId": "c2"},
    {"type": "TOOL_CALL_RESULT", "messageId": "r-c2", "toolCallId": "c2", "content": "seen"},
    {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": 1}]},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "PLAN", "content": {"steps": ["a"]}},
    {"type": "ACTIVITY_DELTA", "messageId": "act", "activityType": "PLAN",
     "patch": [{"op": "add", "path": "/steps/-", "value": "b"}]},
    {"type": "TEXT_MESSAGE_START", "messageId": "open", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "open", "delta": "still"},
]

# pickle.dumps(build()) on 30b3740, the last commit with agui/transcript.py one module; zlib, base64
BEFORE_THE_SPLIT = (
    "eNqFVF1P1EAUhWV3YZfvYETBDyQxYMIS0BgS3wgvJuCKCaIvps62A3eg29aZKbgiib7tJpNI4vh/PdNCAcXYl/beuXN65txz51v5"
    "19dKX/aYByLSXMo00Z5PTC+z/VQsa8ki5UuRaGvqO5fBT/vkuz21i2aozZVi+1zZD4ge3YRxXuEdCX6srBl+lce7CC9xSiKwppSu"
    "WlOWccjxShWX1lQSJrUDNyUSlplyxNrcNs2ojuPQ81kYeiLI1keuZlBRAZFY4mOcR77sJJoH3hEL02w387U4Errj6U7iEhNFwo9x"
    "hEgjV1NactYW0b7tmWHJji/X0hbVcuI0YiqaRHRoaczUUK/iyO2giYxy2zKaatKtD5ZuN2m6SXfMAOhYutukmSbN9ujedbASW82Q"
    "mFJCaYafZUjDL3kYxnOauOQFJFTzIVjJf2r5BXzzn8hl2UAhsMtOqBy2rDiPrlCkxn9ABqCTwxi60CvD+eOI2G7K21vrTUszp2ih"
    "0jzJ/dHPrOlvWa5u4hcn4EJjtJhRwy4Rhn/JV1DrZvu5qXqtjmu4AxmlOj2k+7RAj2mFlmmNntMGraemXnhDZYVLNGhGdpDbQOqa"
    "EWkEi1OmciyFhgsnYT903LvwMH5EC6bO5L7yCmdOnsxr/lnPv5ibDyTb0/OnMGqFRwEPbNdU95gI8dUzVclVGsI+OAYUPGZCO6t0"
    "zZDkB9zXrgiSNGir4NIAl3IYx7DXNo71xpnqBPC006W3PdqlZ06Sdz16j52pE42BthuogSD2oWJGCKJHdrM/NVW3nmIIB2Ua5T6d"
    "htE1wbiBl42ghqOqWM0j6QbS9Q+vJGSRNbWQKe1lKTow454rvaLuD9Bu0NKZqXnFAV3OZRLJA+FrDKWZvemiOF/HP7aLyuKCGD5f"
    "FXHkRKdPpr5dZC7LapkC3iGHMz/SKr0+vynQsbTtZhf2R69s2mKwzoUjaAmIX5gyg66rigdZbnMSCYrDIO9SJZECjE6xF4ZCU6EC"
    "LGA3+3DYLHY3kTvsBpy4ACeu0NqZGfMIkxzLjhcIiYHBXZJX52E3bS3/BmnrGlk="
)

REST = [
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "open", "delta": " here"},
    {"type": "TEXT_MESSAGE_END", "messageId": "open"},
    {"type": "TOOL_CALL_RESULT", "messageId": "r-c1", "toolCallId": "c1", "content": "written"},
    {"type": "STATE_SNAPSHOT", "snapshot": {"doc": "final"}},
    {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
]


def build() -> Transcript:
    t = Transcript()
    t.mark_tail()
    t.add_user_message("u1", "hi")
    for event in EVENTS:
        t.apply(parse_event(event))
    t.set_awaiting(["c1"])
    t.to_messages()
    return t


def summary(t: Transcript) -> dict[str, Any]:
    return {
        "messages": list(t.messages), "tool_calls": dict(t.tool_calls), "state": t.state, "status": t.status,
        "error": t.error, "step": t.step, "last_step": t.last_step, "tail_start": t.tail_start,
        "run": (t.thread_id, t.run_id, t.run_tool_call_ids()), "changes": t.take_changes(),
        "wire": [(type(m).__name__, m.model_dump()) for m in t.to_messages()],
        "uncached": [(type(m).__name__, m.model_dump()) for m in t._to_messages_uncached()],
    }


def globals_named(blob: bytes) -> set[str]:
    """The module paths a pickle names (the strings before a STACK_GLOBAL)."""
    strings = [arg for _, arg, _ in pickletools.genops(blob) if isinstance(arg, str)]
    return {s for s in strings if s.startswith("interrupt_chat.")}


def test_a_pickle_from_before_the_split_loads_and_goes_on_as_a_fresh_one():
    blob = zlib.decompress(base64.b64decode("".join(BEFORE_THE_SPLIT)))
    assert "interrupt_chat.agui.transcript" in globals_named(blob)
    old = pickle.loads(blob)
    assert type(old) is Transcript
    now = pickle.loads(pickle.dumps(build()))
    assert summary(old) == summary(now)
    assert isinstance(old.messages[0], MessageView) and isinstance(old.tool_calls["c1"], ToolCallView)
    assert old.tool_calls["c1"].status == "awaiting_approval" and old.state == {"doc": "draft", "n": 1}
    for t in (old, now):
        t.settle_prediction(kept=True)
        for event in REST:
            t.apply(parse_event(event))
    assert summary(old) == summary(now)
    assert old.messages[-1].content == "still here" and old.state == {"doc": "final"} and old.status == "finished"


def test_a_pickle_made_now_names_the_class_by_its_path_from_before():
    blob = pickle.dumps(build())
    named = globals_named(blob)
    assert "interrupt_chat.agui.transcript" in named
    assert not {name for name in named if name.startswith("interrupt_chat.agui.transcript.")}, named
    assert Transcript.__module__ == "interrupt_chat.agui.transcript" and Transcript.__qualname__ == "Transcript"


def test_the_old_module_names_still_import():
    assert MAX_TEXT_CHARS == 16_000_000 and MAX_PARTS == 4096


def test_a_pickled_or_copied_transcript_has_a_history_mark_of_its_own():
    """A page's feed skips making the rows while the mark is the one it made them at: a copy never shares it."""
    import copy

    t = build()
    mark = t.history_mark
    assert t.history_mark == mark  # reading changes nothing
    loaded = pickle.loads(pickle.dumps(t))
    assert "_history_name" not in loaded.__getstate__() and loaded.history_mark[0] != mark[0]
    assert copy.copy(t).history_mark[0] != mark[0] and copy.deepcopy(t).history_mark[0] != mark[0]
    t.mark_tail()  # what was the tail joins the history
    assert t.history_mark != mark
    after = t.history_mark
    t.apply(parse_event({"type": "TEXT_MESSAGE_START", "messageId": "a9", "role": "assistant"}))
    assert t.history_mark == after  # the tail's streaming leaves the history's mark alone
