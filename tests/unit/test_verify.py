"""Ordering rules (interrupt_chat.agui.verify), after @ag-ui/client's verify/verify.ts (doc section 8.4)."""

from __future__ import annotations

import pytest

from interrupt_chat.agui import ProtocolViolation, Verifier, parse_event


def ev(type_: str, **fields):
    defaults = {
        "RUN_STARTED": {"threadId": "t", "runId": "r"},
        "RUN_FINISHED": {"threadId": "t", "runId": "r"},
        "RUN_ERROR": {"message": "boom"},
        "STEP_STARTED": {"stepName": "s"},
        "STEP_FINISHED": {"stepName": "s"},
        "TEXT_MESSAGE_START": {"messageId": "m"},
        "TEXT_MESSAGE_CONTENT": {"messageId": "m", "delta": "x"},
        "TEXT_MESSAGE_END": {"messageId": "m"},
        "TOOL_CALL_START": {"toolCallId": "c", "toolCallName": "f"},
        "TOOL_CALL_ARGS": {"toolCallId": "c", "delta": "{}"},
        "TOOL_CALL_END": {"toolCallId": "c"},
        "TOOL_CALL_RESULT": {"messageId": "tm", "toolCallId": "c", "content": "ok"},
        "REASONING_MESSAGE_START": {"messageId": "rm", "role": "reasoning"},
        "REASONING_MESSAGE_CONTENT": {"messageId": "rm", "delta": "x"},
        "REASONING_MESSAGE_END": {"messageId": "rm"},
        "STATE_SNAPSHOT": {"snapshot": {}},
        "CUSTOM": {"name": "n", "value": 1},
        "RAW": {"event": {}},
    }
    return parse_event({"type": type_, **defaults.get(type_, {}), **fields})


def check_all(*events, verifier: Verifier | None = None) -> Verifier:
    verifier = verifier or Verifier()
    for event in events:
        verifier.check(event)
    return verifier


def violates(*events, match: str | None = None) -> None:
    """All but the last event pass; the last raises."""
    verifier = check_all(*events[:-1])
    with pytest.raises(ProtocolViolation, match=match):
        verifier.check(events[-1])


# -- first event ------------------------------------------------------------------------------------

def test_first_event_run_started_ok():
    check_all(ev("RUN_STARTED"), ev("RUN_FINISHED"))


def test_first_event_run_error_ok():
    check_all(ev("RUN_ERROR"))


@pytest.mark.parametrize("first", ["TEXT_MESSAGE_START", "RUN_FINISHED", "STEP_STARTED", "CUSTOM", "RAW",
                                   "STATE_SNAPSHOT", "TOOL_CALL_START"])
def test_first_event_must_be_run_started_or_run_error(first):
    violates(ev(first), match="first event must be RUN_STARTED or RUN_ERROR")


# -- after RUN_ERROR ---------------------------------------------------------------------------------

@pytest.mark.parametrize("after", ["TEXT_MESSAGE_START", "RUN_FINISHED", "RUN_ERROR", "CUSTOM", "STATE_SNAPSHOT",
                                   "STEP_STARTED"])
def test_nothing_but_run_started_after_run_error(after):
    violates(ev("RUN_STARTED"), ev("RUN_ERROR"), ev(after), match="after RUN_ERROR")


def test_run_error_as_first_event_then_only_run_started():
    violates(ev("RUN_ERROR"), ev("RUN_FINISHED"), match="after RUN_ERROR")
    check_all(ev("RUN_ERROR"), ev("RUN_STARTED"), ev("RUN_FINISHED"))


def test_new_run_after_run_error_is_fine():
    check_all(ev("RUN_STARTED", runId="r1"), ev("TEXT_MESSAGE_START"), ev("RUN_ERROR"),
              ev("RUN_STARTED", runId="r2"), *[ev(t) for t in ("TEXT_MESSAGE_START", "TEXT_MESSAGE_END")],
              ev("RUN_FINISHED", runId="r2"))


def test_run_error_may_close_a_run_with_open_message_tool_call_and_step():
    check_all(ev("RUN_STARTED"), ev("STEP_STARTED"), ev("TEXT_MESSAGE_START"), ev("TOOL_CALL_START"),
              ev("RUN_ERROR"))


# -- after RUN_FINISHED ------------------------------------------------------------------------------

@pytest.mark.parametrize("after", ["TEXT_MESSAGE_START", "RUN_FINISHED", "CUSTOM", "STATE_SNAPSHOT",
                                   "STEP_STARTED", "TOOL_CALL_RESULT", "RAW"])
def test_only_run_started_or_run_error_after_run_finished(after):
    violates(ev("RUN_STARTED"), ev("RUN_FINISHED"), ev(after), match="after RUN_FINISHED")


def test_late_run_error_after_run_finished_is_allowed():
    verifier = check_all(ev("RUN_STARTED"), ev("RUN_FINISHED"), ev("RUN_ERROR"))
    with pytest.raises(ProtocolViolation, match="after RUN_ERROR"):
        verifier.check(ev("CUSTOM"))


# -- RUN_STARTED -------------------------------------------------------------------------------------

def test_no_run_started_while_a_run_is_active():
    violates(ev("RUN_STARTED", runId="r1"), ev("RUN_STARTED", runId="r2"), match="while a run is active")


def test_no_run_started_while_active_even_after_content():
    violates(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START"), ev("TEXT_MESSAGE_END"), ev("RUN_STARTED"),
             match="while a run is active")


def test_multi_run_stream_resets_tracking():
    check_all(
        ev("RUN_STARTED", runId="r1"), ev("TEXT_MESSAGE_START"), ev("TEXT_MESSAGE_END"),
        ev("STEP_STARTED"), ev("STEP_FINISHED"), ev("RUN_FINISHED", runId="r1"),
        # the same ids may be reused in the next run
        ev("RUN_STARTED", runId="r2"), ev("TEXT_MESSAGE_START"), ev("TEXT_MESSAGE_END"),
        ev("STEP_STARTED"), ev("STEP_FINISHED"), ev("RUN_FINISHED", runId="r2"),
        ev("RUN_STARTED", runId="r3"), ev("RUN_FINISHED", runId="r3"))


def test_new_run_after_run_error_forgets_open_items():
    check_all(ev("RUN_STARTED", runId="r1"), ev("TEXT_MESSAGE_START"), ev("TOOL_CALL_START"), ev("STEP_STARTED"),
              ev("RUN_ERROR"), ev("RUN_STARTED", runId="r2"), ev("RUN_FINISHED", runId="r2"))


# -- text messages -----------------------------------------------------------------------------------

def test_text_message_lifecycle_ok():
    check_all(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START"), ev("TEXT_MESSAGE_CONTENT"), ev("TEXT_MESSAGE_CONTENT"),
              ev("TEXT_MESSAGE_END"), ev("RUN_FINISHED"))


def test_text_message_start_needs_an_inactive_id():
    violates(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START"), ev("TEXT_MESSAGE_START"), match="already open")


def test_text_message_id_can_restart_after_end():
    check_all(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START"), ev("TEXT_MESSAGE_END"), ev("TEXT_MESSAGE_START"),
              ev("TEXT_MESSAGE_END"))


def test_interleaved_text_messages_ok():
    check_all(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START", messageId="a"), ev("TEXT_MESSAGE_START", messageId="b"),
              ev("TEXT_MESSAGE_CONTENT", messageId="a"), ev("TEXT_MESSAGE_END", messageId="b"),
              ev("TEXT_MESSAGE_END", messageId="a"), ev("RUN_FINISHED"))


@pytest.mark.parametrize("kind", ["TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"])
def test_text_message_content_and_end_need_an_active_id(kind):
    violates(ev("RUN_STARTED"), ev(kind), match="not open")
    violates(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START", messageId="a"), ev(kind, messageId="b"), match="not open")
    violates(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START"), ev("TEXT_MESSAGE_END"), ev(kind), match="not open")


# -- tool calls --------------------------------------------------------------------------------------

def test_tool_call_lifecycle_ok():
    check_all(ev("RUN_STARTED"), ev("TOOL_CALL_START"), ev("TOOL_CALL_ARGS"), ev("TOOL_CALL_END"),
              ev("TOOL_CALL_RESULT"), ev("RUN_FINISHED"))


def test_tool_call_start_needs_an_inactive_id():
    violates(ev("RUN_STARTED"), ev("TOOL_CALL_START"), ev("TOOL_CALL_START"), match="TOOL_CALL_START .*already open")


@pytest.mark.parametrize("kind", ["TOOL_CALL_ARGS", "TOOL_CALL_END"])
def test_tool_call_args_and_end_need_an_active_id(kind):
    violates(ev("RUN_STARTED"), ev(kind), match="not open")
    violates(ev("RUN_STARTED"), ev("TOOL_CALL_START", toolCallId="a"), ev(kind, toolCallId="b"), match="not open")
    violates(ev("RUN_STARTED"), ev("TOOL_CALL_START"), ev("TOOL_CALL_END"), ev(kind), match="not open")


def test_tool_call_and_message_ids_are_separate_namespaces():
    check_all(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START", messageId="x"), ev("TOOL_CALL_START", toolCallId="x"),
              ev("TOOL_CALL_END", toolCallId="x"), ev("TEXT_MESSAGE_END", messageId="x"), ev("RUN_FINISHED"))


def test_tool_call_result_for_an_earlier_run_call_is_fine():
    """Tool-bound interrupts: the resumed run sends only TOOL_CALL_RESULT for the old call id."""
    check_all(ev("RUN_STARTED", runId="r2"), ev("TOOL_CALL_RESULT", toolCallId="call_from_r1"),
              ev("RUN_FINISHED", runId="r2"))


# -- reasoning ---------------------------------------------------------------------------------------

def test_reasoning_message_lifecycle_ok():
    check_all(ev("RUN_STARTED"), ev("REASONING_MESSAGE_START"), ev("REASONING_MESSAGE_CONTENT"),
              ev("REASONING_MESSAGE_END"), ev("RUN_FINISHED"))


def test_reasoning_message_start_needs_an_inactive_id():
    violates(ev("RUN_STARTED"), ev("REASONING_MESSAGE_START"), ev("REASONING_MESSAGE_START"), match="already open")


@pytest.mark.parametrize("kind", ["REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END"])
def test_reasoning_content_and_end_need_an_active_id(kind):
    violates(ev("RUN_STARTED"), ev(kind), match="not open")


# -- steps -------------------------------------------------------------------------------------------

def test_step_finished_needs_a_started_step():
    violates(ev("RUN_STARTED"), ev("STEP_FINISHED"), match="was not started")
    violates(ev("RUN_STARTED"), ev("STEP_STARTED", stepName="a"), ev("STEP_FINISHED", stepName="b"),
             match="was not started")
    violates(ev("RUN_STARTED"), ev("STEP_STARTED"), ev("STEP_FINISHED"), ev("STEP_FINISHED"),
             match="was not started")


def test_step_started_twice_is_refused():
    violates(ev("RUN_STARTED"), ev("STEP_STARTED"), ev("STEP_STARTED"), match="already open")


def test_nested_steps_ok():
    check_all(ev("RUN_STARTED"), ev("STEP_STARTED", stepName="outer"), ev("STEP_STARTED", stepName="inner"),
              ev("STEP_FINISHED", stepName="inner"), ev("STEP_FINISHED", stepName="outer"), ev("RUN_FINISHED"))


# -- RUN_FINISHED with open items ---------------------------------------------------------------------

@pytest.mark.parametrize("opener, label", [
    ("TEXT_MESSAGE_START", "text message m"),
    ("TOOL_CALL_START", "tool call c"),
    ("STEP_STARTED", "step s"),
    ("REASONING_MESSAGE_START", "reasoning message rm"),
])
def test_run_finished_refused_while_something_is_open(opener, label):
    violates(ev("RUN_STARTED"), ev(opener), ev("RUN_FINISHED"), match=f"RUN_FINISHED while {label} is still open")


def test_run_finished_refusal_leaves_the_run_active():
    verifier = check_all(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START"))
    with pytest.raises(ProtocolViolation):
        verifier.check(ev("RUN_FINISHED"))
    check_all(ev("TEXT_MESSAGE_END"), ev("RUN_FINISHED"), verifier=verifier)


# -- other events within a run ------------------------------------------------------------------------

def test_other_events_pass_within_a_run():
    check_all(ev("RUN_STARTED"), ev("STATE_SNAPSHOT"), ev("CUSTOM"), ev("RAW"),
              parse_event({"type": "STATE_DELTA", "delta": []}),
              parse_event({"type": "MESSAGES_SNAPSHOT", "messages": []}),
              parse_event({"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "p", "content": {}}),
              ev("RUN_FINISHED"))


# -- end of stream ------------------------------------------------------------------------------------

def test_end_of_stream_after_run_finished_or_run_error_is_fine():
    check_all(ev("RUN_STARTED"), ev("RUN_FINISHED")).end_of_stream()
    check_all(ev("RUN_STARTED"), ev("RUN_ERROR")).end_of_stream()
    check_all(ev("RUN_ERROR")).end_of_stream()
    check_all(ev("RUN_STARTED"), ev("RUN_FINISHED"), ev("RUN_ERROR")).end_of_stream()


def test_end_of_stream_while_a_run_is_active_is_a_violation():
    verifier = check_all(ev("RUN_STARTED"), ev("TEXT_MESSAGE_START"))
    with pytest.raises(ProtocolViolation, match="before RUN_FINISHED"):
        verifier.end_of_stream()


def test_end_of_stream_without_any_event_is_a_violation():
    with pytest.raises(ProtocolViolation, match="without any event"):
        Verifier().end_of_stream()
