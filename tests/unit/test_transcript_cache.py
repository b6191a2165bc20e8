"""The transcript's per-message cache of the next run's messages, its indexes and state patches.

``Transcript.to_messages()`` keeps each message's AG-UI model and builds again only the messages
that changed. Every test here plays a sequence of events and client steps (``mark_tail``, a user
message, ``set_awaiting``, edited arguments, ``fail``, …) and, **after every step**, compares
``to_messages()`` with ``_to_messages_uncached()`` (every model built from scratch) and checks the
derived indexes; at the end the whole sequence is replayed into a fresh ``Transcript`` and compared
again. Sequences: normal runs, tool calls, resumes, ``MESSAGES_SNAPSHOT`` replacing and merging
messages, reasoning, hostile ids, a seeded random walk, and the hostile-agent corpus played over
HTTP with the check wrapped around ``Transcript.apply``. The check also writes the next run's request
body from the JSON text the transcript keeps per message (``request_body.encode`` with
``Transcript.message_json``), and compares its bytes with the body dumped whole from scratch.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Callable, Iterable
from typing import Any

import jsonpatch
import pytest
from ag_ui.core import RunAgentInput, UserMessage

from interrupt_chat.agui import MalformedEvent, ProtocolViolation, Transcript, parse_event
from interrupt_chat.agui.request_body import encode
from interrupt_chat.model.history import digest
from interrupt_chat.model.views import HistoryRows, message_rows
from tests.unit.agents import finished, run_error, started, tool_result

Step = dict | Callable[[Transcript], Any]


# -- the check ---------------------------------------------------------------------------------------

def wire(messages: Iterable[Any]) -> list[tuple[str, dict]]:
    """Models as comparable data: the class and every field (None included)."""
    return [(type(m).__name__, m.model_dump()) for m in messages]


def check(t: Transcript) -> None:
    cached = t.to_messages()
    assert wire(cached) == wire(t._to_messages_uncached())
    again = t.to_messages()
    assert again is not cached and wire(again) == wire(cached)
    for i, message in enumerate(t.messages):  # the position index (by identity, whatever the ids)
        assert t._index_of(message) == i
        if t.message(message.id) is message:  # the index itself is exact, not rescued by the scan
            assert t._pos[message.id] == i
    opened = {id(m) for m in t._opened}
    assert all(id(m) in opened for m in t.messages if m.streaming)  # fail() reaches every streaming one
    check_body(t)
    check_history_mark(t)


_DRAWN: dict[int, tuple[Transcript, tuple[str, int], str]] = {}  # id -> (the transcript, its mark, its rows)


def check_history_mark(t: Transcript) -> None:
    """The history's mark is the same as at the last step only if its rows are (what the page was sent stays true)."""
    made = message_rows(t.messages[:t.tail_start], t)
    rows = repr(made)
    for part in (t.messages[:t.tail_start], t.messages):  # the digests kept per message are the rows' now
        fresh, kept = message_rows(part, t), HistoryRows(part, t)
        assert list(kept) == fresh and kept.digests() == [digest(row) for row in fresh]
    last = _DRAWN.get(id(t))
    if last is not None and last[0] is t and last[1] == t.history_mark:
        assert rows == last[2], "the history changed and its mark did not"
    _DRAWN[id(t)] = (t, t.history_mark, rows)


def body(t: Transcript, messages: list[Any], cached: Any = None) -> bytes | type[ValueError]:
    run_input = RunAgentInput(thread_id="t", run_id="r", state=t.state, messages=messages)
    try:
        return encode(run_input, cached)
    except ValueError:  # a value JSON cannot hold: both ways fail alike
        return ValueError


def check_body(t: Transcript) -> None:
    """The request body written from the kept JSON texts is byte for byte the one dumped whole from scratch."""
    whole = body(t, t._to_messages_uncached())
    assert body(t, t.to_messages(), t.message_json) == whole  # texts dumped now and kept
    assert body(t, t.to_messages(), t.message_json) == whole  # texts read back


def step(t: Transcript, item: Step) -> None:
    try:
        if callable(item):
            item(t)
        else:
            t.apply(parse_event(item))
    except (ProtocolViolation, MalformedEvent):
        pass  # the session fails such a run; the transcript must still be consistent


def play(steps: list[Step]) -> Transcript:
    """Every step, checked after each; then the same steps into a fresh transcript, compared."""
    t = Transcript()
    for item in steps:
        step(t, item)
        check(t)
    replay = Transcript()
    for item in steps:
        step(replay, item)
    assert wire(replay.to_messages()) == wire(t.to_messages())
    return t


# -- client steps and event builders -------------------------------------------------------------------

def mark(t: Transcript) -> None:
    t.mark_tail()


def user(message_id: str, content: str = "hi") -> Step:
    return lambda t: t.add_user_message(message_id, content)


def awaiting(*call_ids: str) -> Step:
    return lambda t: t.set_awaiting(call_ids)


def edited(call_id: str, args: Any) -> Step:
    return lambda t: t.set_tool_call_args(call_id, args)


def rejected(call_id: str) -> Step:
    return lambda t: t.set_tool_call_rejected(call_id)


def failed(reason: str = "stopped") -> Step:
    return lambda t: t.fail(reason)


def deltas(message_id: str, *parts: str, role: str = "assistant") -> list[dict]:
    return [{"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": role},
            *({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": p} for p in parts),
            {"type": "TEXT_MESSAGE_END", "messageId": message_id}]


def args(call_id: str, *parts: str) -> list[dict]:
    return [{"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": p} for p in parts]


def call_start(call_id: str, parent: str | None = None, name: str = "lookup") -> dict:
    event = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
    if parent:
        event["parentMessageId"] = parent
    return event


def call_end(call_id: str) -> dict:
    return {"type": "TOOL_CALL_END", "toolCallId": call_id}


def snapshot(*messages: dict) -> dict:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def encrypted(subtype: str, entity: str, value: str) -> dict:
    return {"type": "REASONING_ENCRYPTED_VALUE", "subtype": subtype, "entityId": entity, "encryptedValue": value}


def assistant(message_id: str, content: str | None = None, *calls: tuple[str, str, str]) -> dict:
    out: dict[str, Any] = {"id": message_id, "role": "assistant"}
    if content is not None:
        out["content"] = content
    if calls:
        out["toolCalls"] = [{"id": c, "type": "function", "function": {"name": n, "arguments": a}}
                            for c, n, a in calls]
    return out


def run(i: int, *, interrupted: bool = False) -> list[Step]:
    """A run as ``AgentSession.send`` starts it: mark, user message, a streamed answer with a call."""
    steps: list[Step] = [mark, user(f"u{i}", f"question {i}"), started(f"r{i}"),
                         *deltas(f"a{i}", "The ", "answer ", f"{i}."), call_start(f"c{i}", f"a{i}"),
                         *args(f"c{i}", '{"n": ', f"{i}}}"), call_end(f"c{i}")]
    if interrupted:
        return [*steps, finished(f"r{i}", interrupts=[{"id": f"i{i}", "reason": "tool_call", "toolCallId": f"c{i}"}]),
                awaiting(f"c{i}")]
    return [*steps, tool_result(f"t{i}", f"c{i}", f"result {i}"), finished(f"r{i}")]


# -- scenarios ---------------------------------------------------------------------------------------

NORMAL = [*run(0), *run(1), *run(2)]

TOOL_CALLS = [
    mark, user("u0"), started(),
    *deltas("a0", "Let me look."), call_start("c0"),  # no parent: the last assistant message
    *args("c0", "{}"), call_end("c0"),
    call_start("c1", "a0"), *args("c1", '{"x"', ": 1}"), call_end("c1"),
    tool_result("t1", "c1", "one"), tool_result("t0", "c0", "zero"),  # placed after a0 and its results
    tool_result("t9", "unknown-call", "appended"),
    call_start("c0", "a0"), *args("c0", '{"again": true}'), call_end("c0"),  # replayed: args stream again
    tool_result("t0", "c0", "zero, replayed"),  # replayed result: updated in place
    {"type": "TOOL_CALL_RESULT", "messageId": "t2", "toolCallId": "c1",
     "content": [{"type": "text", "text": "multi"}, {"type": "text", "text": "modal"}]},
    finished(),
    mark, user("u1"), started("r2"),
    call_start("c2"), *args("c2", "{}"), call_end("c2"),  # no parent after a user message: a new message
    call_start("c3", "new-parent"), call_end("c3"),  # an unknown parent is created
    tool_result("t3", "c3", ""), finished("r2"),
]

RESUME = [
    *run(0),
    mark, user("u1", "delete two files"), started("r1"), *deltas("a1", "Deleting."),
    call_start("c1a", "a1", "delete"), *args("c1a", '{"f": "x"}'), call_end("c1a"),
    call_start("c1b", "a1", "delete"), *args("c1b", '{"f": "y"}'), call_end("c1b"),
    finished("r1", interrupts=[{"id": "i1", "reason": "tool_call", "toolCallId": "c1a"},
                               {"id": "i1b", "reason": "tool_call", "toolCallId": "c1b"}]),
    awaiting("c1a", "c1b"),
    edited("c1a", {"f": "x", "force": True}), rejected("c1b"),  # the person's answers (submit)
    started("r1-resume"), tool_result("t1a", "c1a", "deleted x"), tool_result("t1b", "c1b", "denied"),
    *deltas("a1-after", "Done."), finished("r1-resume"), awaiting(),
    mark, user("u2"), started("r2"), tool_result("t0-late", "c0", "a late result far back"),  # inserted in the history
    *deltas("a2", "ok"), finished("r2"),
    *run(3, interrupted=True), started("r3-resume"), failed("the resume failed"), awaiting("c3"),
    started("r3-resume-2"), tool_result("t3", "c3", "done"), finished("r3-resume-2"),
]

SNAPSHOTS = [
    *run(0), *run(1),
    # the whole history again, unchanged (LangGraph ends every run so): every model carries over
    snapshot({"id": "u0", "role": "user", "content": "question 0"},
             assistant("a0", "The answer 0.", ("c0", "lookup", '{"n": 0}')),
             {"id": "t0", "role": "tool", "toolCallId": "c0", "content": "result 0"},
             {"id": "u1", "role": "user", "content": "question 1"},
             assistant("a1", "The answer 1.", ("c1", "lookup", '{"n": 1}')),
             {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "result 1"}),
    # replaced content, changed arguments, a dropped message, new ids, an id repeated
    snapshot({"id": "u0", "role": "user", "content": "question 0, edited"},
             assistant("a0", "The answer 0.", ("c0", "lookup", '{"n": 100}')),
             {"id": "t0", "role": "tool", "toolCallId": "c0", "content": "result 0"},
             assistant("a1", "Rewritten.", ("c1", "renamed", '{"n": 1}')),
             {"id": "new", "role": "assistant", "content": "appended"},
             {"id": "new", "role": "assistant", "content": "appended, last version wins"},
             {"id": "s1", "role": "system", "content": "be brief"},
             {"id": "d1", "role": "developer", "content": "dev", "name": "ops"}),
    mark, user("u2"), started("r2"), *deltas("a2", "stream"),
    snapshot({"id": "u0", "role": "user", "content": "question 0, edited"},
             assistant("a2", "str")),  # mid-stream: the snapshot's version, then streaming continues
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a2", "delta": "eaming"},
    {"type": "TEXT_MESSAGE_END", "messageId": "a2"},
    # a call moved to another message; two messages claiming one call (hostile)
    snapshot(assistant("x1", None, ("c0", "lookup", '{"moved": 1}')),
             assistant("x2", "me too", ("c0", "lookup", '{"moved": 2}'), ("c9", "other", "{}"))),
    call_start("c0", "x2"), *args("c0", '{"moved": 3}'), call_end("c0"), finished("r2"),
    encrypted("tool-call", "c0", "enc-c0"), encrypted("message", "x1", "enc-x1"),
    snapshot(assistant("x1", None, ("c0", "lookup", '{"moved": 3}')),
             assistant("x2", "me too", ("c0", "lookup", '{"moved": 3}'), ("c9", "other", "{}"))),
    snapshot(assistant("x2", "me too", ("c0", "lookup", '{"moved": 3}'), ("c9", "other", "{}"))),
    mark, user("u3"), started("r3"), *args("c0", "ignored: not open"), tool_result("t-x2", "c9", "nine"),
    finished("r3"),
    snapshot(),  # an empty snapshot empties the list
    *run(4),
]

ACTIVITY_AND_REASONING = [
    mark, user("u0"), started(),
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan", "content": {"steps": ["a"]}},
    {"type": "REASONING_MESSAGE_START", "messageId": "think", "role": "reasoning"},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "think", "delta": "hmm "},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "think", "delta": "yes"},
    {"type": "REASONING_MESSAGE_END", "messageId": "think"},
    encrypted("message", "think", "enc-1"),  # after the model was cached: it must be built again
    encrypted("message", "think", "enc-2"),
    *deltas("a0", "Answer."), call_start("c0", "a0"), call_end("c0"),
    encrypted("tool-call", "c0", "enc-call"), encrypted("tool-call", "c0", "enc-call-2"),
    encrypted("message", "u0", "enc-user"), encrypted("message", "nobody", "x"),
    {"type": "ACTIVITY_DELTA", "messageId": "act", "activityType": "plan",
     "patch": [{"op": "add", "path": "/steps/-", "value": "b"}]},
    snapshot({"id": "u0", "role": "user", "content": "hi", "encryptedValue": "enc-user"},
             assistant("a0", "Answer.")),  # keeps the client-only activity and reasoning
    snapshot({"id": "u0", "role": "user", "content": "hi"},
             {"id": "think2", "role": "reasoning", "content": "replaced", "encryptedValue": "e"},
             {"id": "act2", "role": "activity", "activityType": "plan", "content": {"v": 2}}),
    {"type": "REASONING_MESSAGE_START", "messageId": "think3", "role": "reasoning"}, finished(),
]

HOSTILE = [
    mark, user("u0"), user("u0", "the same id twice"), started(), *deltas("a0", "x"), finished(),
    mark, user("u1"), started("r2"),
    {"type": "TEXT_MESSAGE_START", "messageId": "a0", "role": "assistant"},  # an earlier turn's id
    call_start("c-bad", "u1"),  # a user message as the parent
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "partial"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nobody", "delta": "lost"},
    call_start("c1", "m1"), *args("c1", '{"half'),
    tool_result("u1", "c1", "a result reusing the user's id"),
    run_error("the model exploded"),  # fails c1, stops m1 streaming
    mark, user("u2"), started("r3"), *deltas("m2", "again"),
    {"type": "TEXT_MESSAGE_START", "messageId": "m3", "role": "user"}, failed("stopped"),
    mark, user("u3"), started("r4"),
    snapshot({"id": "u3", "role": "user", "content": [{"type": "text", "text": "look "},
                                                     {"type": "image", "source": {"type": "url",
                                                                                  "value": "http://x/i.png"}}]},
             {"id": "u3", "role": "user", "content": "repeated id"}),
    snapshot({"id": "u3", "role": "user", "content": [{"type": "text", "text": "look "},
                                                     {"type": "image", "source": {"type": "url",
                                                                                  "value": "http://x/i.png"}}]}),
    user("u3", "a duplicate after the snapshot"), finished("r4"),
]


@pytest.mark.parametrize("steps", [NORMAL, TOOL_CALLS, RESUME, SNAPSHOTS, ACTIVITY_AND_REASONING, HOSTILE],
                         ids=["normal", "tool-calls", "resume", "snapshots", "activity-reasoning", "hostile"])
def test_to_messages_equals_a_fresh_build_after_every_step(steps):
    play(steps)


def test_the_scenarios_reach_what_they_are_about():
    t = play(SNAPSHOTS)
    assert [m.id for m in t.messages] == ["u4", "a4", "t4"]
    t = play(RESUME)
    ids = [m.id for m in t.messages]
    assert ids.index("t0-late") == ids.index("a0") + 2  # after a0's own result, far back in the history
    assert t.tool_calls["c1a"].args == {"f": "x", "force": True} and t.tool_calls["c1b"].rejected
    t = play(HOSTILE)
    assert [m.id for m in t.messages] == ["u3", "u3"]
    sent = t.to_messages()
    assert isinstance(sent[0].content, list) and sent[1].content == "a duplicate after the snapshot"
    assert not any(m.streaming for m in t.messages)


# -- what the cache shares, and what it does not -----------------------------------------------------------

def built(t: Transcript) -> list[dict]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in t.to_messages()]


def test_unchanged_messages_keep_their_models_and_changed_ones_get_new_ones():
    t = play([*run(0), *run(1)])
    first = t.to_messages()
    second = t.to_messages()
    assert second is not first and all(a is b for a, b in zip(first, second, strict=True))
    second.clear()  # the caller's list: the transcript does not see it
    assert len(t.to_messages()) == 6
    for item in [mark, user("u2"), started("r2"), *deltas("a2", "new")]:
        step(t, item)
    third = t.to_messages()
    assert all(a is b for a, b in zip(first, third[:6], strict=True))
    t.set_tool_call_args("c0", {"n": "edited"})
    fourth = t.to_messages()
    assert fourth[1] is not third[1] and json.loads(fourth[1].tool_calls[0].function.arguments) == {"n": "edited"}
    assert [a is b for a, b in zip(third, fourth, strict=True)] == [True, False, True, True, True, True, True, True]


def test_a_snapshot_of_the_unchanged_history_keeps_every_model():
    multimodal = {"id": "mm", "role": "user", "content": [{"type": "text", "text": "look "},
                                                           {"type": "image", "source": {"type": "url", "value": "u"}}]}
    t = play([snapshot(multimodal), *run(0), *run(1)])
    before = t.to_messages()
    views = list(t.messages)
    t.apply(parse_event(snapshot(*built(t))))
    after = t.to_messages()
    assert all(a is b for a, b in zip(before, after, strict=True))
    assert all(a is not b for a, b in zip(views, t.messages, strict=True))  # the snapshot's versions, as before
    t.apply(parse_event(snapshot(*[{**m, "content": "changed"} if m["id"] == "a1" else m for m in built(t)])))
    changed = t.to_messages()
    assert [a is b for a, b in zip(before, changed, strict=True)] == [True, True, True, True, True, False, True]


def test_the_body_keeps_each_message_text_and_dumps_what_is_not_its_own():
    t = play([*run(0), *run(1)])
    sent = t.to_messages()
    texts = [t.message_json(m) for m in sent]
    assert all(texts) and all(a is b for a, b in zip(texts, map(t.message_json, t.to_messages()), strict=True))
    copied = sent[0].model_copy(update={"content": "a file, resolved"})  # as multimodal.resolve sends one
    foreign = UserMessage(id="elsewhere", content="not in the transcript")
    assert t.message_json(copied) is None and t.message_json(foreign) is None
    mixed = [copied, *sent[1:], foreign]
    assert body(t, mixed, t.message_json) == body(t, mixed)
    step(t, deltas("a1", " more")[1])  # a1 changed: its model and its text are new
    assert t.message_json(sent[4]) is None and t.message_json(t.to_messages()[4]) != texts[4]


def test_models_are_never_changed_in_place():
    t = play([*run(0)])
    sent = t.to_messages()
    frozen = wire(sent)
    for item in [*deltas("a0-more", "x"), edited("c0", {"n": 9}), tool_result("t0", "c0", "again"),
                 encrypted("tool-call", "c0", "e"), snapshot(*built(t)[:1]), *run(1)]:
        step(t, item)
        t.to_messages()
    assert wire(sent) == frozen


def test_pickle_and_copy_leave_the_cache_out_and_rebuild_the_indexes():
    t = play([*run(0), *run(1, interrupted=True), {"type": "TEXT_MESSAGE_START", "messageId": "open"}])
    t.to_messages()
    state = t.__getstate__()
    assert not {"_wire", "_pos", "_opened"} & set(state)
    restored = pickle.loads(pickle.dumps(t))
    assert restored._wire == {} and wire(restored.to_messages()) == wire(t.to_messages())
    check(restored)
    old = Transcript.__new__(Transcript)  # a pickle from before the indexes existed
    old.__setstate__({k: v for k, v in copy.deepcopy(state).items()})
    check(old)
    assert wire(old.to_messages()) == wire(t.to_messages())
    copied = copy.copy(t)
    assert copied._wire is not t._wire and copied._wire == {}


# -- a seeded random walk ------------------------------------------------------------------------------------

MESSAGE_IDS = ["m0", "m1", "m2", "m3", "m4"]
CALL_IDS = ["c0", "c1", "c2"]


def _random_snapshot(rng: random.Random, t: Transcript) -> dict:
    messages = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in t._to_messages_uncached()]
    messages = [m for m in messages if rng.random() < 0.8]
    for m in messages:
        if rng.random() < 0.2 and m["role"] in ("user", "assistant", "system"):
            m["content"] = rng.choice(["edited", "", "x" * rng.randint(1, 3)])
        if rng.random() < 0.2 and m.get("toolCalls"):
            m["toolCalls"][0]["function"]["arguments"] = rng.choice(["{}", '{"a": 1}', ""])
    if rng.random() < 0.4:
        calls = rng.sample(CALL_IDS, rng.randint(0, 2))
        messages.append(assistant(rng.choice(MESSAGE_IDS), rng.choice([None, "snap"]),
                                  *((c, "f", rng.choice(["{}", '{"z": 0}'])) for c in calls)))
    if rng.random() < 0.2 and messages:
        messages.append(dict(rng.choice(messages)))  # a repeated id
    rng.shuffle(messages)
    return snapshot(*messages)


def _random_step(rng: random.Random, t: Transcript) -> Step:
    mid, cid, roll = rng.choice(MESSAGE_IDS), rng.choice(CALL_IDS), rng.random()
    choices: list[Callable[[], Step]] = [
        lambda: mark, lambda: user(mid, "u"), lambda: started(), lambda: finished(), lambda: run_error(),
        lambda: {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": rng.choice(["assistant", "user"])},
        lambda: {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": rng.choice(["a", "bc", "{"])},
        lambda: {"type": "TEXT_MESSAGE_END", "messageId": mid},
        lambda: {"type": "REASONING_MESSAGE_START", "messageId": mid, "role": "reasoning"},
        lambda: {"type": "REASONING_MESSAGE_CONTENT", "messageId": mid, "delta": "r"},
        lambda: encrypted("tool-call" if roll < 0.5 else "message", cid if roll < 0.5 else mid, f"e{roll:.2f}"),
        lambda: call_start(cid, mid if roll < 0.7 else None), lambda: args(cid, rng.choice(["{", "}", '"k"']))[0],
        lambda: call_end(cid), lambda: tool_result(rng.choice([*MESSAGE_IDS, "t0", "t1"]), cid, f"r{roll:.1f}"),
        lambda: _random_snapshot(rng, t),
        lambda: {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": "a", "content": {"v": roll}},
        lambda: awaiting(*rng.sample(CALL_IDS, rng.randint(0, 2))), lambda: edited(cid, {"e": roll}),
        lambda: rejected(cid), lambda: failed(),
    ]
    return rng.choice(choices)()


def _history_after(t: Transcript, change: Step) -> tuple[bool, bool]:
    """(the history's mark moved, its rows changed) by ``change``."""
    mark_before, rows = t.history_mark, repr(message_rows(t.messages[:t.tail_start], t))
    step(t, change)
    return t.history_mark != mark_before, repr(message_rows(t.messages[:t.tail_start], t)) != rows


def test_a_call_that_two_messages_list_is_redrawn_in_both():
    """A snapshot gives one call id to a message of the history and one of the tail: a change to it reaches both."""
    t = play([mark, user("u1"), started(), snapshot({"id": "u1", "role": "user", "content": "hi"},
                                                    assistant("a1", "first", ("c1", "f", "{}"))),
              finished(), mark, user("u2"), started(),
              snapshot({"id": "u1", "role": "user", "content": "hi"}, assistant("a1", "first", ("c1", "f", "{}")),
                       {"id": "u2", "role": "user", "content": "again"}, assistant("a2", "second", ("c1", "f", "{}")))])
    assert [m.id for m in t.messages[:t.tail_start]] == ["u1", "a1"] and "c1" in t.messages[-1].tool_call_ids
    assert _history_after(t, rejected("c1")) == (True, True)
    check(t)


def test_a_user_message_sent_with_a_used_id_leaves_the_history_drawn_right():
    """Two messages with one id, one in the history: a change to that id is a change to the history too."""
    t = play([*run(1), mark, user("a1", "same id as the answer"), started("r2")])
    assert [m.id for m in t.messages].count("a1") == 2
    assert _history_after(t, rejected("c1")) == (True, True)  # the call is on the history's a1
    check(t)


@pytest.mark.parametrize("seed", range(120))
def test_random_walk(seed):
    rng = random.Random(seed)
    t = Transcript()
    steps: list[Step] = []
    for _ in range(60):
        item = _random_step(rng, t)
        steps.append(item)
        step(t, item)
        check(t)
    replay = Transcript()
    for item in steps:
        step(replay, item)
    assert wire(replay.to_messages()) == wire(t.to_messages())


# -- the hostile-agent corpus, over HTTP, checked after every event --------------------------------------------

def _event_cases() -> list[Any]:
    from tests.unit.hostile import params
    from tests.unit.test_hostile_agent import IDS, ORDERING
    from tests.unit.test_hostile_agent import RESUME as RESUME_CASES

    slow = ("slow", "huge", "timeout", "stall")
    return params(c for c in [*IDS, *ORDERING, *RESUME_CASES] if not any(s in c.name for s in slow) and not c.memory)


@pytest.mark.parametrize("case", _event_cases())
async def test_hostile_agent_corpus_keeps_the_cache_exact(case, loopback, monkeypatch):
    from tests.unit.hostile import run_case

    apply = Transcript.apply

    def checked_apply(self: Transcript, event: Any) -> None:
        try:
            apply(self, event)
        finally:
            check(self)

    monkeypatch.setattr(Transcript, "apply", checked_apply)
    await run_case(case, loopback)


# -- state patches: one copy, all or nothing ---------------------------------------------------------------------

@pytest.fixture
def document_copies(monkeypatch):
    """How many times ``jsonpatch`` deep-copies each document it is given (by identity)."""
    copies: list[int] = []
    deepcopy = jsonpatch.copy.deepcopy

    def counting(value, *rest):
        copies.append(id(value))
        return deepcopy(value, *rest)

    monkeypatch.setattr(jsonpatch.copy, "deepcopy", counting)
    return copies


def test_state_delta_copies_the_state_once_and_never_touches_it(document_copies):
    state = {"todo": [{"t": "a"}], "n": 1, "big": list(range(50))}
    t = play([started(), {"type": "STATE_SNAPSHOT", "snapshot": state}])
    before, frozen = t.state, json.dumps(t.state)
    document_copies.clear()
    t.apply(parse_event({"type": "STATE_DELTA", "delta": [
        {"op": "add", "path": "/todo/-", "value": {"t": "b"}}, {"op": "replace", "path": "/n", "value": 2},
        {"op": "remove", "path": "/big/0"}, {"op": "move", "from": "/n", "path": "/m"}]}))
    assert document_copies.count(id(before)) == 1  # the one copy of the document (added values are copied too)
    assert json.dumps(before) == frozen and t.state is not before
    assert t.state["m"] == 2 and t.state["todo"][-1] == {"t": "b"} and len(t.state["big"]) == 49


def test_a_state_delta_failing_half_way_leaves_the_same_state_object(document_copies):
    t = play([started(), {"type": "STATE_SNAPSHOT", "snapshot": {"n": 1, "l": [1, 2]}}])
    before, frozen = t.state, json.dumps(t.state)
    t.apply(parse_event({"type": "STATE_DELTA", "delta": [
        {"op": "replace", "path": "/n", "value": 5}, {"op": "remove", "path": "/l/0"},
        {"op": "remove", "path": "/missing"}]}))
    assert t.state is before and json.dumps(t.state) == frozen
    assert document_copies.count(id(before)) == 1


def test_an_activity_delta_is_one_copy_and_all_or_nothing(document_copies):
    t = play([started(), {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan",
                          "content": {"steps": ["a"], "n": 1}}])
    content = t.message("act").activity_content
    t.apply(parse_event({"type": "ACTIVITY_DELTA", "messageId": "act", "activityType": "plan",
                         "patch": [{"op": "replace", "path": "/n", "value": 2},
                                   {"op": "test", "path": "/n", "value": 9}]}))
    assert t.message("act").activity_content is content and content == {"steps": ["a"], "n": 1}
    t.apply(parse_event({"type": "ACTIVITY_DELTA", "messageId": "act", "activityType": "plan",
                         "patch": [{"op": "add", "path": "/steps/-", "value": "b"}]}))
    assert content == {"steps": ["a"], "n": 1} and t.message("act").activity_content == {"steps": ["a", "b"], "n": 1}
    assert document_copies.count(id(content)) == 2  # one per delta, the failed one included

