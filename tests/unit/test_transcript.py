"""The reducer (interrupt_chat.agui.transcript), after @ag-ui/client's apply/default.ts (doc section 8.5)."""

from __future__ import annotations

import json
import logging

import pytest

from interrupt_chat.agui import Transcript, parse_event

LOG = "interrupt_chat.agui.transcript"


def apply(transcript: Transcript, *events: dict) -> Transcript:
    for event in events:
        transcript.apply(parse_event(event))
    return transcript


def fresh(*events: dict) -> Transcript:
    return apply(Transcript(), *events)


def run_started(run_id="r1"):
    return {"type": "RUN_STARTED", "threadId": "t1", "runId": run_id}


def run_finished(run_id="r1", **extra):
    return {"type": "RUN_FINISHED", "threadId": "t1", "runId": run_id, **extra}


def text(mid, *deltas, role="assistant"):
    return [{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role},
            *[{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": d} for d in deltas],
            {"type": "TEXT_MESSAGE_END", "messageId": mid}]


def call_start(cid, name="f", parent=None):
    event = {"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": name}
    if parent:
        event["parentMessageId"] = parent
    return event


def call_args(cid, delta):
    return {"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": delta}


def call_end(cid):
    return {"type": "TOOL_CALL_END", "toolCallId": cid}


def call(cid, args: dict, name="f", parent=None):
    raw = json.dumps(args)
    return [call_start(cid, name, parent), call_args(cid, raw[:3]), call_args(cid, raw[3:]), call_end(cid)]


def result(mid, cid, content="ok"):
    return {"type": "TOOL_CALL_RESULT", "messageId": mid, "toolCallId": cid, "content": content}


def snapshot(*messages):
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def order(transcript: Transcript) -> list[tuple[str, str]]:
    return [(m.id, m.role) for m in transcript.messages]


def dumped(transcript: Transcript) -> list[dict]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in transcript.to_messages()]


# -- messages ------------------------------------------------------------------------------------------

def test_messages_in_order_with_streamed_content():
    t = Transcript()
    t.add_user_message("u1", "hi")
    apply(t, run_started(), *text("a1", "Hel", "lo", "!"), *text("a2", "second"), run_finished())
    assert order(t) == [("u1", "user"), ("a1", "assistant"), ("a2", "assistant")]
    assert t.message("a1").content == "Hello!"
    assert t.message("a2").content == "second"
    assert t.message("missing") is None


def test_streaming_flag_follows_start_and_end():
    t = fresh(run_started(), text("a1")[0], {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "x"})
    assert t.message("a1").streaming is True
    apply(t, text("a1")[-1])
    assert t.message("a1").streaming is False


def test_text_message_start_role_and_name():
    t = fresh(run_started(), {"type": "TEXT_MESSAGE_START", "messageId": "s1", "role": "system", "name": "sys"})
    assert t.message("s1").role == "system" and t.message("s1").name == "sys"
    t = fresh(run_started(), {"type": "TEXT_MESSAGE_START", "messageId": "a1"})
    assert t.message("a1").role == "assistant"


def test_text_message_start_reuses_a_message_a_tool_call_created():
    t = fresh(run_started(), call_start("c1", parent="a1"), *text("a1", "calling"))
    assert order(t) == [("a1", "assistant")]
    assert t.message("a1").content == "calling"
    assert t.message("a1").tool_call_ids == ["c1"]


def test_content_for_unknown_message_is_ignored():
    t = fresh(run_started(), {"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost", "delta": "boo"})
    assert t.messages == []


# -- run lifecycle -----------------------------------------------------------------------------------

def test_run_status_lifecycle():
    t = Transcript()
    assert t.status == "idle"
    apply(t, run_started("r7"))
    assert (t.status, t.thread_id, t.run_id) == ("running", "t1", "r7")
    apply(t, {"type": "STEP_STARTED", "stepName": "plan"})
    assert t.step == "plan"
    apply(t, {"type": "STEP_FINISHED", "stepName": "plan"})
    assert t.step is None
    apply(t, run_finished("r7"))
    assert t.status == "finished"


def test_cancelled_outcome_is_neither_success_nor_error():
    t = fresh(run_started(), run_finished(outcome={"type": "cancelled"}))
    assert t.status == "cancelled" and t.error is None


def test_run_error_sets_error_with_code():
    t = fresh(run_started(), {"type": "RUN_ERROR", "message": "bad payload", "code": "INVALID_PAYLOAD"})
    assert t.status == "error" and t.error == "bad payload (INVALID_PAYLOAD)"
    apply(t, run_started("r2"))
    assert t.status == "running" and t.error is None


# -- tool calls ---------------------------------------------------------------------------------------

def test_tool_call_status_streaming_running_awaiting_complete():
    t = fresh(run_started(), *text("a1", ""), call_start("c1", "delete_files", parent="a1"),
              call_args("c1", '{"count"'))
    tc = t.tool_calls["c1"]
    assert tc.status == "streaming"
    assert tc.args is None  # not parsed while streaming
    assert tc.args_text == '{"count"'
    apply(t, call_args("c1", ": 3}"), call_end("c1"))
    assert tc.status == "running"
    assert tc.args == {"count": 3}
    apply(t, run_finished())
    t.set_awaiting({"c1"})
    assert tc.status == "awaiting_approval"
    apply(t, run_started("r2"))  # S4: the next run clears it
    assert tc.status == "running"
    apply(t, result("tool-1", "c1", "deleted 3 files"))
    assert tc.status == "complete" and tc.result == "deleted 3 files"


def test_tool_call_failed_on_fail():
    t = fresh(run_started(), *call("c1", {"a": 1}, parent="a1"), call_start("c2", parent="a1"))
    t.fail("connection dropped")
    assert t.tool_calls["c1"].status == "failed"
    assert t.tool_calls["c2"].status == "failed"
    assert t.status == "error" and t.error == "connection dropped"


def test_fail_spares_awaiting_completed_and_earlier_run_calls():
    t = fresh(run_started(), *call("old", {}, parent="a0"), run_finished())
    apply(t, run_started("r2"), *call("c1", {}, parent="a1"), *call("c2", {}, parent="a1"), result("t2", "c2"))
    t.set_awaiting({"c1"})
    t.fail("boom")
    assert t.tool_calls["old"].status == "running"  # not part of the failed run
    assert t.tool_calls["c1"].status == "awaiting_approval"
    assert t.tool_calls["c2"].status == "complete"


def test_run_error_fails_the_runs_tool_calls_and_stops_streaming_messages():
    t = fresh(run_started(), text("a1")[0], call_start("c1", parent="a1"), {"type": "RUN_ERROR", "message": "x"})
    assert t.tool_calls["c1"].status == "failed"
    assert t.message("a1").streaming is False


def test_set_awaiting_again_clears_an_earlier_failure():
    t = fresh(run_started(), *call("c1", {}, parent="a1"))
    t.fail("boom")
    t.set_awaiting({"c1"})
    assert t.tool_calls["c1"].status == "awaiting_approval"


def test_set_awaiting_replaces_the_set():
    t = fresh(run_started(), *call("c1", {}, parent="a1"), *call("c2", {}, parent="a1"))
    t.set_awaiting({"c1", "c2"})
    t.set_awaiting(["c2"])
    assert t.tool_calls["c1"].status == "running" and t.tool_calls["c2"].status == "awaiting_approval"
    t.set_awaiting(())
    assert t.tool_calls["c2"].status == "running"


def test_args_that_do_not_parse_are_none_and_empty_args_are_an_object():
    t = fresh(run_started(), call_start("c1", parent="a1"), call_args("c1", "{not json"), call_end("c1"),
              call_start("c2", parent="a1"), call_end("c2"))
    assert t.tool_calls["c1"].args is None and t.tool_calls["c1"].args_text == "{not json"
    assert t.tool_calls["c2"].args == {}


def test_tool_call_start_is_idempotent():
    t = fresh(run_started(), *text("a1", ""), *call("c1", {"v": 1}, "act", parent="a1"), run_finished())
    apply(t, run_started("r2"), *call("c1", {"v": 2}, "act", parent="a1"))
    assert list(t.tool_calls) == ["c1"]
    assert t.message("a1").tool_call_ids == ["c1"]
    assert t.tool_calls["c1"].args == {"v": 2}  # arguments streamed again, not appended
    assert order(t) == [("a1", "assistant")]


def test_tool_call_without_parent_attaches_to_the_last_assistant_message():
    t = fresh(run_started(), *text("a1", "let me check"), *call("c1", {}))
    assert t.tool_calls["c1"].parent_message_id == "a1"
    assert t.message("a1").tool_call_ids == ["c1"]


def test_tool_call_without_parent_after_a_user_message_creates_an_assistant_message():
    t = Transcript()
    t.add_user_message("u1", "go")
    apply(t, run_started(), *call("c1", {}))
    parent = t.tool_calls["c1"].parent_message_id
    assert order(t) == [("u1", "user"), (parent, "assistant")]
    assert t.message(parent).tool_call_ids == ["c1"]


def test_tool_call_with_unknown_parent_creates_it():
    t = fresh(run_started(), *call("c1", {}, parent="a9"))
    assert order(t) == [("a9", "assistant")]


# -- TOOL_CALL_RESULT placement -------------------------------------------------------------------------

def test_tool_result_goes_right_after_its_assistant_message():
    t = Transcript()
    t.add_user_message("u1", "q")
    apply(t, run_started(), *text("a1", "calling two"), *call("c1", {}, parent="a1"), *call("c2", {}, parent="a1"),
          run_finished())
    t.add_user_message("u2", "later message")
    apply(t, run_started("r2"), *text("a2", "later answer"), result("t1", "c1", "one"), result("t2", "c2", "two"),
          run_finished("r2"))
    assert order(t) == [("u1", "user"), ("a1", "assistant"), ("t1", "tool"), ("t2", "tool"), ("u2", "user"),
                        ("a2", "assistant")]
    assert t.message("t1").tool_call_id == "c1" and t.message("t1").content == "one"


def test_tool_result_goes_after_earlier_results_of_the_same_message_only():
    t = fresh(run_started(), *call("c1", {}, parent="a1"), *call("c2", {}, parent="a1"), result("t1", "c1"),
              *text("b1", "other"), *call("d1", {}, parent="b1"), result("tb", "d1"), result("t2", "c2"))
    assert order(t) == [("a1", "assistant"), ("t1", "tool"), ("t2", "tool"), ("b1", "assistant"), ("tb", "tool")]


def test_tool_result_for_an_unknown_call_is_appended():
    t = fresh(run_started(), *text("a1", "x"), result("t9", "nobody", "orphan"))
    assert order(t)[-1] == ("t9", "tool")
    assert t.message("t9").tool_call_id == "nobody"


def test_replayed_tool_result_updates_in_place():
    t = fresh(run_started(), *call("c1", {}, parent="a1"), result("t1", "c1", "first"), *text("a2", "after"),
              result("t1", "c1", "second"))
    assert order(t) == [("a1", "assistant"), ("t1", "tool"), ("a2", "assistant")]
    assert t.message("t1").content == "second" and t.tool_calls["c1"].result == "second"


def test_tool_result_multimodal_content_text():
    event = {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "plain"}
    t = fresh(run_started(), *call("c1", {}, parent="a1"), event)
    assert t.message("t1").content == "plain"


# -- state --------------------------------------------------------------------------------------------

def test_state_snapshot_replaces_and_delta_patches():
    t = fresh(run_started(), {"type": "STATE_SNAPSHOT", "snapshot": {"todo": ["a"], "n": 1}})
    before = t.state
    apply(t, {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/todo/-", "value": "b"},
                                               {"op": "replace", "path": "/n", "value": 2},
                                               {"op": "add", "path": "/x", "value": None}]})
    assert t.state == {"todo": ["a", "b"], "n": 2, "x": None}
    assert before == {"todo": ["a"], "n": 1}  # patched a copy
    apply(t, {"type": "STATE_SNAPSHOT", "snapshot": {"fresh": True}})
    assert t.state == {"fresh": True}


def test_state_delta_move_copy_remove_ops():
    t = fresh(run_started(), {"type": "STATE_SNAPSHOT", "snapshot": {"a": {"b": 1}, "l": [1, 2, 3]}},
              {"type": "STATE_DELTA", "delta": [{"op": "move", "from": "/a/b", "path": "/c"},
                                                {"op": "copy", "from": "/c", "path": "/d"},
                                                {"op": "remove", "path": "/l/0"},
                                                {"op": "test", "path": "/d", "value": 1}]})
    assert t.state == {"a": {}, "c": 1, "d": 1, "l": [2, 3]}


@pytest.mark.parametrize("bad", [
    [{"op": "replace", "path": "/missing", "value": 1}],
    [{"op": "test", "path": "/n", "value": 999}],
    [{"op": "remove", "path": "/todo/7"}],
    [{"op": "move", "from": "/nowhere", "path": "/n"}],
    [{"op": "add", "path": "/n/deeper/still", "value": 1}],
])
def test_state_delta_that_does_not_apply_keeps_the_old_state_and_warns(bad, caplog):
    t = fresh(run_started(), {"type": "STATE_SNAPSHOT", "snapshot": {"todo": ["a"], "n": 1}})
    with caplog.at_level(logging.WARNING, logger=LOG):
        apply(t, {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 5}, *bad]})
    assert t.state == {"todo": ["a"], "n": 1}  # all or nothing
    assert any("STATE_DELTA" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


@pytest.mark.parametrize("bad", [
    {"op": "frobnicate", "path": "/n"},
    {"op": "add", "path": "no-slash", "value": 1},
    {"path": "/n"},
    "not an op",
])
def test_state_delta_with_ill_formed_ops(bad, caplog):
    """ag-ui-protocol 1.0 types the ops: an ill-formed one makes a malformed event (a stream error).
    Fed past validation, the reducer still keeps the old state."""
    from ag_ui.core import StateDeltaEvent

    from interrupt_chat.agui import MalformedEvent

    with pytest.raises(MalformedEvent):
        parse_event({"type": "STATE_DELTA", "delta": [bad]})
    t = fresh(run_started(), {"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}})
    with caplog.at_level(logging.WARNING, logger=LOG):
        t.apply(StateDeltaEvent.model_construct(delta=[{"op": "replace", "path": "/n", "value": 5}, bad]))
    assert t.state == {"n": 1}
    assert any("STATE_DELTA" in r.getMessage() for r in caplog.records)


def test_state_delta_on_a_non_object_state_warns(caplog):
    t = fresh(run_started(), {"type": "STATE_SNAPSHOT", "snapshot": None})
    with caplog.at_level(logging.WARNING, logger=LOG):
        apply(t, {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/x", "value": 1}]})
    assert t.state is None
    assert caplog.records


# -- MESSAGES_SNAPSHOT -----------------------------------------------------------------------------------

def test_messages_snapshot_merges_by_id():
    t = Transcript()
    t.add_user_message("u1", "hi")
    apply(t, run_started(), *text("a1", "draft"), *text("gone", "dropped later"))
    apply(t, snapshot({"id": "new1", "role": "assistant", "content": "appended"},
                      {"id": "a1", "role": "assistant", "content": "final"},
                      {"id": "u1", "role": "user", "content": "hi"}))
    # existing order kept (u1, a1), new ids before every known one appended, missing ids dropped
    assert order(t) == [("u1", "user"), ("a1", "assistant"), ("new1", "assistant")]
    assert t.message("a1").content == "final"  # snapshot version swapped in
    assert t.message("gone") is None


def test_messages_snapshot_puts_a_new_message_after_the_known_one_before_it():
    # Microsoft's resumed run: TOOL_CALL_RESULT streams the result under one id, the snapshot names it
    # another and puts it between the call and the answer; the next run's history must keep that order
    t = Transcript()
    t.add_user_message("u1", "clean up")
    apply(t, run_started(), *call("c1", {"count": 3}, name="delete_files", parent="a1"))
    apply(t, result("streamed", "c1", "done"),
          *text("a2", "Tool said: done"))
    apply(t, snapshot({"id": "u1", "role": "user", "content": "clean up"},
                      {"id": "a1", "role": "assistant", "toolCalls": [
                          {"id": "c1", "type": "function", "function": {"name": "delete_files",
                                                                        "arguments": '{"count": 3}'}}]},
                      {"id": "approval-response-1", "role": "tool", "toolCallId": "c1", "content": "done"},
                      {"id": "a2", "role": "assistant", "content": "Tool said: done"}))
    assert order(t) == [("u1", "user"), ("a1", "assistant"), ("approval-response-1", "tool"), ("a2", "assistant")]


def test_messages_snapshot_keeps_this_runs_reasoning_before_a_renamed_answer():
    t = Transcript()
    t.add_user_message("u1", "hi")
    apply(t, run_started(), {"type": "REASONING_MESSAGE_START", "messageId": "think", "role": "reasoning"},
          {"type": "REASONING_MESSAGE_END", "messageId": "think"}, *text("streamed", "hello"))
    apply(t, snapshot({"id": "u1", "role": "user", "content": "hi"},
                      {"id": "final", "role": "assistant", "content": "hello"}))
    assert order(t) == [("u1", "user"), ("think", "reasoning"), ("final", "assistant")]


def test_messages_snapshot_keeps_client_only_activity_and_reasoning():
    t = fresh(run_started(), {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "progress",
                              "content": {"pct": 1}},
              {"type": "REASONING_MESSAGE_START", "messageId": "think", "role": "reasoning"},
              {"type": "REASONING_MESSAGE_END", "messageId": "think"}, *text("a1", "x"))
    apply(t, snapshot({"id": "a1", "role": "assistant", "content": "x"}))
    assert order(t) == [("act", "activity"), ("think", "reasoning"), ("a1", "assistant")]


def test_messages_snapshot_with_activity_speaks_for_activity():
    t = fresh(run_started(), {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "progress",
                              "content": {"pct": 1}}, *text("a1", "x"))
    apply(t, snapshot({"id": "a1", "role": "assistant", "content": "x"},
                      {"id": "act2", "role": "activity", "activityType": "progress", "content": {"pct": 2}}))
    assert order(t) == [("a1", "assistant"), ("act2", "activity")]
    assert t.message("act2").activity_content == {"pct": 2}


def test_messages_snapshot_rebuilds_tool_calls_and_results():
    t = Transcript()
    apply(t, snapshot(
        {"id": "u1", "role": "user", "content": "go"},
        {"id": "a1", "role": "assistant", "toolCalls": [
            {"id": "c1", "type": "function", "function": {"name": "delete_files", "arguments": '{"count": 3}'}}]},
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "deleted"}))
    tc = t.tool_calls["c1"]
    assert tc.name == "delete_files" and tc.args == {"count": 3} and tc.parent_message_id == "a1"
    assert tc.status == "complete" and tc.result == "deleted"
    assert t.message("a1").tool_call_ids == ["c1"]
    assert dumped(t)[1] == {"id": "a1", "role": "assistant", "toolCalls": [
        {"id": "c1", "type": "function", "function": {"name": "delete_files", "arguments": '{"count": 3}'}}]}


def test_messages_snapshot_then_streaming_continues():
    t = fresh(run_started(), text("a1")[0], {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "par"})
    apply(t, snapshot({"id": "a1", "role": "assistant", "content": "par"}),
          {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "tial"})
    assert t.message("a1").content == "partial"


def test_messages_snapshot_multimodal_user_content_is_sent_back_whole():
    parts = [{"type": "text", "text": "look at "},
             {"type": "image", "source": {"type": "url", "value": "http://x/i.png", "mimeType": "image/png"}}]
    t = fresh(snapshot({"id": "u1", "role": "user", "content": parts}))
    assert t.message("u1").content == "look at "
    sent = dumped(t)[0]
    assert sent["content"][0] == {"type": "text", "text": "look at "}
    assert sent["content"][1]["source"]["value"] == "http://x/i.png"


# -- activity -------------------------------------------------------------------------------------------

def test_activity_snapshot_and_delta():
    t = fresh(run_started(), {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan",
                              "content": {"steps": ["a"]}})
    assert order(t) == [("act", "activity")]
    assert t.message("act").activity_type == "plan"
    apply(t, {"type": "ACTIVITY_DELTA", "messageId": "act", "activityType": "plan",
              "patch": [{"op": "add", "path": "/steps/-", "value": "b"}]})
    assert t.message("act").activity_content == {"steps": ["a", "b"]}
    apply(t, {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan", "content": {"steps": []}})
    assert t.message("act").activity_content == {"steps": []}  # replace defaults to true


def test_activity_snapshot_replace_false_keeps_existing_content():
    t = fresh(run_started(), {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan",
                              "content": {"v": 1}},
              {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan", "content": {"v": 2},
               "replace": False})
    assert t.message("act").activity_content == {"v": 1}


def test_activity_delta_for_unknown_activity_or_bad_patch_warns(caplog):
    t = fresh(run_started(), {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan",
                              "content": {"v": 1}})
    with caplog.at_level(logging.WARNING, logger=LOG):
        apply(t, {"type": "ACTIVITY_DELTA", "messageId": "nope", "activityType": "plan", "patch": []},
              {"type": "ACTIVITY_DELTA", "messageId": "act", "activityType": "plan",
               "patch": [{"op": "replace", "path": "/missing", "value": 1}]})
    assert t.message("act").activity_content == {"v": 1}
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 2
    assert t.message("nope") is None


def test_activity_messages_are_never_sent():
    t = Transcript()
    t.add_user_message("u1", "x")
    apply(t, run_started(), {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "plan",
                             "content": {}}, *text("a1", "y"))
    assert [m["id"] for m in dumped(t)] == ["u1", "a1"]


# -- reasoning -----------------------------------------------------------------------------------------

def test_reasoning_messages_and_encrypted_values():
    t = fresh(run_started(),
              {"type": "REASONING_START", "messageId": "think"},
              {"type": "REASONING_MESSAGE_START", "messageId": "think", "role": "reasoning"},
              {"type": "REASONING_MESSAGE_CONTENT", "messageId": "think", "delta": "pondering "},
              {"type": "REASONING_MESSAGE_CONTENT", "messageId": "think", "delta": "deeply"},
              {"type": "REASONING_MESSAGE_END", "messageId": "think"},
              {"type": "REASONING_END", "messageId": "think"},
              {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "think",
               "encryptedValue": "enc-msg"},
              *call("c1", {}, parent="a1"),
              {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "tool-call", "entityId": "c1",
               "encryptedValue": "enc-call"})
    think = t.message("think")
    assert think.role == "reasoning" and think.content == "pondering deeply" and not think.streaming
    assert think.encrypted_value == "enc-msg"
    assert t.tool_calls["c1"].encrypted_value == "enc-call"
    sent = dumped(t)
    assert sent[0] == {"id": "think", "role": "reasoning", "content": "pondering deeply", "encryptedValue": "enc-msg"}
    assert sent[1]["toolCalls"][0]["encryptedValue"] == "enc-call"


# -- to_messages ------------------------------------------------------------------------------------------

def test_to_messages_shapes():
    t = Transcript()
    t.add_user_message("u1", "delete my files")
    apply(t, run_started(), *text("a1"), *call("c1", {"count": 3}, "delete_files", parent="a1"), run_finished(),
          run_started("r2"), result("t1", "c1", "deleted 3 files"), *text("a2", "Done."), run_finished("r2"))
    assert dumped(t) == [
        {"id": "u1", "role": "user", "content": "delete my files"},
        {"id": "a1", "role": "assistant", "toolCalls": [
            {"id": "c1", "type": "function", "function": {"name": "delete_files", "arguments": '{"count": 3}'}}]},
        {"id": "t1", "role": "tool", "content": "deleted 3 files", "toolCallId": "c1"},
        {"id": "a2", "role": "assistant", "content": "Done."},
    ]


def test_to_messages_drops_empty_assistant_turns():
    t = Transcript()
    t.add_user_message("u1", "x")
    apply(t, run_started(), *text("empty"), *text("a1", "real"))
    assert [m["id"] for m in dumped(t)] == ["u1", "a1"]


def test_to_messages_tool_call_with_no_args_sends_an_empty_object():
    t = fresh(run_started(), call_start("c1", "noop", parent="a1"), call_end("c1"))
    assert dumped(t)[0]["toolCalls"][0]["function"]["arguments"] == "{}"


def test_to_messages_assistant_with_text_and_tool_calls():
    t = fresh(run_started(), *text("a1", "I'll do it"), *call("c1", {"x": 1}, "act", parent="a1"))
    (assistant,) = dumped(t)
    assert assistant["content"] == "I'll do it"
    assert assistant["toolCalls"][0]["function"] == {"name": "act", "arguments": '{"x": 1}'}


def test_to_messages_system_and_developer_from_snapshot():
    t = fresh(snapshot({"id": "s1", "role": "system", "content": "be nice"},
                       {"id": "d1", "role": "developer", "content": "dev"}))
    assert dumped(t) == [{"id": "s1", "role": "system", "content": "be nice"},
                         {"id": "d1", "role": "developer", "content": "dev"}]


def test_set_tool_call_args_replaces_the_arguments():
    t = fresh(run_started(), *call("c1", {"count": 3}, parent="a1"))
    t.set_tool_call_args("c1", {"count": 1})
    assert t.tool_calls["c1"].args == {"count": 1}
    assert dumped(t)[0]["toolCalls"][0]["function"]["arguments"] == '{"count": 1}'


# -- take_changes ------------------------------------------------------------------------------------------

def test_take_changes_splits_history_and_tail():
    t = Transcript()
    t.add_user_message("u1", "x")  # before any mark: the tail starts at 0
    assert t.take_changes() == (False, True)
    apply(t, run_started(), text("a1")[0])
    assert t.take_changes() == (False, True)
    apply(t, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "y"})
    assert t.take_changes() == (False, True)
    assert t.take_changes() == (False, False)  # reported once
    apply(t, call_start("c1", parent="a1"), call_args("c1", "{}"), {"type": "TOOL_CALL_END", "toolCallId": "c1"})
    assert t.take_changes() == (False, True)  # a tool call change marks its parent message
    t.set_awaiting({"c1"})
    assert t.take_changes() == (False, True)
    t.set_awaiting({"c1"})  # no change, nothing reported
    assert t.take_changes() == (False, False)

    t.mark_tail()  # the resume run starts: everything so far is history
    assert t.tail_start == 2 and t.take_changes() == (True, True)
    apply(t, result("t1", "c1"))  # the resumed call's result: right after its message, in the history with it
    assert [m.id for m in t.messages] == ["u1", "a1", "t1"] and t.tail_start == 3
    assert t.take_changes() == (True, False)  # the history's a1 shows its call complete, with its result
    apply(t, text("a2")[0], {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a2", "delta": "done"})
    assert t.take_changes() == (False, True)  # streaming touches only the tail
    assert [m.id for m in t.messages[t.tail_start:]] == ["a2"]
    t.mark_tail()
    apply(t, result("t0", "c1", "again"))  # a result whose slot is inside the history moves the boundary
    assert [m.id for m in t.messages][:4] == ["u1", "a1", "t1", "t0"]
    assert t.take_changes()[0] is True and t.messages[t.tail_start:] == []

    apply(t, snapshot({"id": "u1", "role": "user", "content": "x"},
                      {"id": "a2", "role": "assistant", "content": "done"},
                      {"id": "a3", "role": "assistant", "content": "new"}))
    assert t.take_changes() == (True, True)
    assert [m.id for m in t.messages[t.tail_start:]] == ["a3"]  # only what the snapshot brought is new
