"""Hostile producers against the real protocol core over real loopback HTTP (issue 8).

Each case of the table is one producer that is broken, malicious or merely unusual: SSE framing,
JSON, event ordering, ids, interrupts, oversized data, HTTP faults, and the same faults on the
resume path. ``tests/unit/hostile.py`` plays every case the same way: a good first run, the
hostile run (time bounded, nothing may escape ``send``/``submit``), then a short readable error
(or none, for input the client must accept), the history unchanged, the interrupt rules S10 and
S15 on a failed resume, and a next run on the same session that works and sends clean UTF-8 JSON.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from interrupt_chat.agui.json_patch import MAX_DOCUMENT_CHARS
from interrupt_chat.agui.sanitize import MAX_DEPTH, too_deep
from interrupt_chat.agui.transcript import MAX_TEXT_CHARS
from interrupt_chat.agui.transport import MAX_EVENT_CHARS
from tests.unit.agents import SSE_HEAD_CHUNKED, SSE_HEAD_UNTIL_CLOSE, ScriptedAgent, Stream, chunk, reset, tool_result
from tests.unit.hostile import (
    EVENT_STREAM,
    MB,
    Case,
    Ctx,
    Mounted,
    Raw,
    Refused,
    assert_clean_request,
    assert_utf8,
    call_args,
    call_end,
    call_start,
    deep_text,
    delta,
    end,
    fin,
    frame,
    frames,
    interrupt,
    legacy,
    msg,
    params,
    raw_of,
    run_case,
    run_err,
    run_of,
    st,
    start,
)

pytestmark = pytest.mark.loopback

SECRET_PASSWORD, SECRET_TOKEN = "hunter2-pw", "tok-5ecret-abc"
HTML_PAGE = ("<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body>"
             "<h1>Internal Server Error</h1><script>alert('owned')</script></body></html>")
LOGIN_PAGE = "<html><body><form action='/login'><input name='user'><input type='password'></form></body></html>"


# -- reply helpers ---------------------------------------------------------------------------------

def resp(body: bytes | str = b"", status: int = 200, content_type: str | None = EVENT_STREAM,
         **headers: str) -> Response:
    """A response with exactly these headers (no charset added, no content-type when None)."""
    raw = {k.replace("_", "-"): v for k, v in headers.items()}
    if content_type is not None:
        raw["content-type"] = content_type
    return Response(body, status_code=status, headers=raw)


def reply_with(build):
    """A reply built from the request body at request time (big payloads are never built at import)."""
    return lambda body: build(body or {})


def streamed(parts, content_type: str = EVENT_STREAM, status: int = 200):
    """A StreamingResponse whose body is ``parts(body)``, an iterable of bytes, built lazily."""
    def reply(body):
        async def gen():
            for part in parts(body or {}):
                yield part
                await asyncio.sleep(0)
        return StreamingResponse(gen(), status_code=status, media_type=content_type)
    return reply


class SlowHeaders(Response):
    """Waits before sending the status line and headers, then answers as ``inner``."""

    def __init__(self, delay: float, inner: Response) -> None:
        self.delay, self.inner = delay, inner

    async def __call__(self, scope, receive, send) -> None:
        await asyncio.sleep(self.delay)
        await self.inner(scope, receive, send)


def ok_text(*deltas: str, message_id: str = "m"):
    return run_of(*msg(message_id, *deltas))


def history_ids(body: dict) -> list[str]:
    return [m["id"] for m in body.get("messages", [])]


# -- checks --------------------------------------------------------------------------------------------

def has(message_id: str, content: str):
    def check(ctx: Ctx) -> None:
        assert ctx.content(message_id) == content
    return check


def has_one_of(message_id: str, *contents: str):
    def check(ctx: Ctx) -> None:
        assert ctx.content(message_id) in contents, repr(ctx.content(message_id))
    return check


def args_are(call_id: str, expected):
    def check(ctx: Ctx) -> None:
        call = ctx.session.transcript.tool_calls[call_id]
        assert call.args == expected
        assert_utf8(call.args)
    return check


def state_is(expected):
    def check(ctx: Ctx) -> None:
        assert ctx.session.transcript.state == expected
    return check


def error_lacks(*words: str):
    def check(ctx: Ctx) -> None:
        for word in words:
            assert word not in (ctx.session.error or ""), f"{word!r} shown in {ctx.session.error!r}"
    return check


def all_of(*checks):
    async def check(ctx: Ctx) -> None:
        for one in checks:
            outcome = one(ctx)
            if asyncio.iscoroutine(outcome):
                await outcome
    return check


def nothing_pending(ctx: Ctx) -> None:
    assert ctx.session.tracker.pending is None


def deep_args_ignored(call_id: str, text_length: int):
    def check(ctx: Ctx) -> None:
        call = ctx.session.transcript.tool_calls[call_id]
        assert call.args is None  # too deep to parse: not shown as arguments
        assert len(call.args_text) == text_length
    return check


def pending_then_resume(count: int | None = None, message_len: int | None = None, kind: str = "standard"):
    """The run surfaced an interrupt set; answering it resumes the agent with a clean request."""
    async def check(ctx: Ctx) -> None:
        tracker = ctx.session.tracker
        pending = tracker.pending
        assert pending is not None and pending.kind == kind
        assert_utf8(pending.wire_event)
        assert_utf8(pending.wire_interrupts)
        if count is not None:
            assert len(pending.interrupts) == count
        if message_len is not None:
            assert len(pending.interrupts[0].message) == message_len
        ids = pending.ids
        decision = None
        for interrupt_id in (ids or [None]):
            decision = tracker.resolve({"approved": True}, interrupt_id=interrupt_id)
            if decision.sends:
                break
        assert decision is not None and decision.sends, decision
        ctx.agent.then(run_of(*msg("m-resumed", "resumed")))
        await ctx.run(ctx.session.submit(decision))
        assert ctx.session.error is None, ctx.session.error
        assert tracker.pending is None
        body = assert_clean_request(ctx.agent.requests[-1])
        if kind == "standard":
            assert {entry["interruptId"] for entry in body["resume"]} == set(ids)
        else:
            assert "interruptEvent" in body["forwardedProps"]["command"]  # S13
    return check


# -- SSE framing ---------------------------------------------------------------------------------------

def _framed(newline: str):
    return raw_of(lambda b: frames(st(b), *msg("m", "line endings"), fin(b), newline=newline))


def _mixed(b):
    return (frame(st(b), "\r\n") + frame(start("m"), "\r") + frame(delta("m", "mixed"), "\n")
            + frame(end("m"), "\r\n") + frame(fin(b), "\r"))


def _multi_line(b):
    return (frames(st(b), start("m")) + b'data: {"type": "TEXT_MESSAGE_CONTENT",\ndata:  "messageId": "m",\n'
            b'data:  "delta": "multi"}\n\n' + frames(end("m"), fin(b)))


def _comments(b):
    return (b": hello\n\n" + frame(st(b)) + b":\n: ping\n\n" + b": inside\n" + frame(start("m"))
            + frame(delta("m", "commented")) + b": ping\n\n" * 5 + frames(end("m"), fin(b)))


def _fields(b):
    out = b""
    for i, event in enumerate([st(b), *msg("m", "fields"), fin(b)]):
        out += f"event: message\nid: {i}\nretry: 3000\n".encode() + frame(event)
    return out


def _odd_fields(b):
    return (b"foo: bar\nevent:\nid\nretry: soon\n" + frame(st(b)) + b"data\n" + frame(start("m"))
            + b"x-custom: 1\n" + frames(delta("m", "odd"), end("m"), fin(b)))


def _no_space(b):
    return b"".join(f"data:{json.dumps(e)}\n\n".encode() for e in [st(b), *msg("m", "tight"), fin(b)])


def _trickle(payload_of, size: int = 3, split_after: bytes | None = None):
    def handler(conn: socket.socket, body) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        payload = payload_of(body or {})
        conn.sendall(SSE_HEAD_CHUNKED)
        if split_after is not None:
            pieces = [p + split_after for p in payload.split(split_after)]
            pieces[-1] = pieces[-1][:-len(split_after)]
        else:
            pieces = [payload[i:i + size] for i in range(0, len(payload), size)]
        for piece in pieces:
            if piece:
                conn.sendall(chunk(piece))
                threading.Event().wait(0.0005)
        conn.sendall(b"0\r\n\r\n")
    return Raw(handler)


FRAMING = [
    Case("framing-lf", _framed("\n"), check=has("m", "line endings")),
    Case("framing-crlf", _framed("\r\n"), check=has("m", "line endings")),
    Case("framing-cr-only", _framed("\r"), check=has("m", "line endings")),
    Case("framing-mixed-line-endings", raw_of(_mixed), check=has("m", "mixed")),
    Case("framing-multi-line-data", raw_of(_multi_line), check=has("m", "multi")),
    Case("framing-comments-and-pings", raw_of(_comments), check=has("m", "commented")),
    Case("framing-event-id-retry-fields", raw_of(_fields), check=has("m", "fields")),
    Case("framing-unknown-and-bare-fields", raw_of(_odd_fields), check=has("m", "odd")),
    Case("framing-data-without-space", raw_of(_no_space), check=has("m", "tight")),
    Case("framing-extra-blank-lines", raw_of(lambda b: b"\n\n\n" + frames(st(b), *msg("m", "airy"), fin(b),
                                                                          newline="\n\n\n")),
         check=has("m", "airy")),
    Case("framing-empty-data-events", raw_of(lambda b: b"data:\n\ndata: \n\n" + frames(st(b), "", *msg("m", "e"),
                                                                                     fin(b))),
         check=has("m", "e")),
    Case("framing-no-trailing-blank-line",
         raw_of(lambda b: frames(st(b), *msg("m", "cut")) + b"data: " + json.dumps(fin(b)).encode()),
         error=r"before RUN_FINISHED"),
    Case("framing-single-trailing-newline",
         raw_of(lambda b: frames(st(b), *msg("m", "cut")) + b"data: " + json.dumps(fin(b)).encode() + b"\n"),
         error=r"before RUN_FINISHED"),
    Case("framing-bom-at-start", raw_of(lambda b: b"\xef\xbb\xbf" + frames(st(b), *msg("m", "bom"), fin(b))),
         check=has("m", "bom")),
    Case("framing-bom-mid-stream",
         raw_of(lambda b: frames(st(b), *msg("m", "x")) + b"\xef\xbb\xbf" + frame(fin(b))),
         error=r"before RUN_FINISHED"),
    Case("framing-double-bom", raw_of(lambda b: b"\xef\xbb\xbf\xef\xbb\xbf" + frames(st(b), *msg("m", "x"), fin(b))),
         error=r"first event must be RUN_STARTED"),
    Case("framing-empty-body", b"", error=r"closed the stream without any event"),
    Case("framing-only-comments", b": ping\n\n" * 50, error=r"closed the stream without any event"),
    Case("framing-nul-byte-in-data-line",
         raw_of(lambda b: frames(st(b), start("m")) + b'data: {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", '
                                                      b'"delta": "a\x00b"}\n\n' + frames(end("m"), fin(b))),
         error=r"not JSON"),
    Case("framing-nul-byte-before-json", raw_of(lambda b: frame(st(b)) + b"data: \x00" + frame(fin(b))[6:]),
         error=r"not JSON"),
    Case("framing-nul-in-id-field", raw_of(lambda b: b"id: a\x00b\n" + frames(st(b), *msg("m", "nul id"), fin(b))),
         check=has("m", "nul id")),
    Case("framing-split-into-3-byte-writes",
         _trickle(lambda b: frames(st(b), *msg("m", "grüße 😀 €"), fin(b), newline="\r\n")),
         check=has("m", "grüße 😀 €")),
    Case("framing-crlf-split-between-writes",
         _trickle(lambda b: frames(st(b), *msg("m", "split"), fin(b), newline="\r\n"), split_after=b"\r"),
         check=has("m", "split")),
    Case("framing-comment-larger-than-event-cap",
         streamed(lambda b: [frame(st(b)), b":", *[b"c" * MB] * 11, b"\n\n", frame(fin(b))]),
         error=r"larger than"),
]


# -- JSON --------------------------------------------------------------------------------------------

def _line(text: str):
    """A run whose second event is the data line ``text``, verbatim."""
    return raw_of(lambda b: frame(st(b)) + f"data: {text}\n\n".encode("utf-8", "surrogatepass") + frame(fin(b)))


def _event_text(text: str | bytes):
    """A run with a message ``m`` whose content event is the JSON text ``text`` (verbatim bytes)."""
    data = text if isinstance(text, bytes) else text.encode()
    return raw_of(lambda b: frames(st(b), start("m")) + b"data: " + data + b"\n\n" + frames(end("m"), fin(b)))


_CONTENT = b'{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": '


def _replaced_between(head: str, tail: str):
    def check(ctx: Ctx) -> None:
        content = ctx.content("m")
        assert_utf8(content)
        assert content[0] == head and content[-1] == tail and set(content[1:-1]) == {"\ufffd"}, repr(content)
    return check


def _deep_event(kind: str, depth: int) -> str:
    if kind == "snapshot":
        return '{"type": "STATE_SNAPSHOT", "snapshot": ' + deep_text(depth) + "}"
    if kind == "delta":
        return '{"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/deep", "value": ' + deep_text(depth) + "}]}"
    return ('{"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "metadata": {"x": '
            + deep_text(depth) + "}}")


def _deeper_and_deeper(body):
    events, path = [st(body), {"type": "STATE_SNAPSHOT", "snapshot": {}}], ""
    for _ in range(2 * MAX_DEPTH):
        path += "/a"
        events.append({"type": "STATE_DELTA", "delta": [{"op": "add", "path": path, "value": {}}]})
    return [*events, fin(body)]


def _amplify(kind: str, doublings: int = 7):
    """A big string, then JSON Patch ``copy`` ops that copy the whole document into itself."""
    def reply(b):
        if kind == "state":
            events = [{"type": "STATE_SNAPSHOT", "snapshot": {"s": "x" * 600_000}}]
            patch = [{"type": "STATE_DELTA", "delta": [{"op": "copy", "from": "", "path": f"/c{i}"}]}
                     for i in range(doublings)]
        else:
            events = [{"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "progress",
                       "content": {"s": "x" * 600_000}}]
            patch = [{"type": "ACTIVITY_DELTA", "messageId": "act", "activityType": "progress",
                      "patch": [{"op": "copy", "from": "", "path": f"/c{i}"}]} for i in range(doublings)]
        return [st(b), *events, *patch, fin(b)]
    return reply


def _json_chars(value) -> int:
    """Characters of the strings in ``value`` (JSON data), counted as often as they occur."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total


def _bounded_copy(kind: str):
    def check(ctx: Ctx) -> None:
        value = ctx.session.transcript.state if kind == "state" else ctx.message("act").activity_content
        assert _json_chars(value) <= MAX_DOCUMENT_CHARS, f"{_json_chars(value):,} characters from a ~600 KB run"
    return check


def _bounded_state(ctx: Ctx) -> None:
    state = ctx.session.transcript.state
    assert not too_deep(state) and too_deep(state, MAX_DEPTH - 5)  # grew up to the limit, never past it


def _deep_args(depth: int):
    return run_of(start("m"), end("m"), call_start("c", parent="m"), call_args("c", deep_text(depth)), call_end("c"))


def _non_finite_state(ctx: Ctx) -> None:
    state = ctx.session.transcript.state
    assert set(state) == {"nan", "inf", "neg"} and state["nan"] != state["nan"] and state["neg"] == -state["inf"]


def _surrogate_state_key(ctx: Ctx) -> None:
    state = ctx.session.transcript.state
    assert state == {"\ufffdkey": "v\ufffd"}


def _surrogate_interrupt(ctx: Ctx) -> None:
    pending = ctx.session.tracker.pending
    assert pending is not None and pending.interrupts[0].message == "\ufffd approve?"


JSON_CASES = [
    Case("json-not-json", _line("hello world"), error=r"not JSON.*hello world"),
    Case("json-truncated", _line('{"type": "TEXT_MESS'), error=r"not JSON"),
    Case("json-trailing-comma", _line('{"type": "RUN_FINISHED", "threadId": "t", "runId": "r",}'),
         error=r"not JSON"),
    Case("json-single-quotes", _line("{'type': 'RUN_FINISHED'}"), error=r"not JSON"),
    Case("json-two-objects-on-one-line", _line('{"type": "CUSTOM", "name": "a", "value": 1} {"x": 1}'),
         error=r"not JSON"),
    Case("json-top-level-array", _line('[{"type": "RUN_FINISHED"}]'), error=r"must be a JSON object, got list"),
    Case("json-top-level-string", _line('"RUN_FINISHED"'), error=r"must be a JSON object, got str"),
    Case("json-top-level-number", _line("42"), error=r"must be a JSON object, got int"),
    Case("json-top-level-null", _line("null"), error=r"must be a JSON object, got NoneType"),
    Case("json-top-level-true", _line("true"), error=r"must be a JSON object"),
    Case("json-nan-and-infinity-in-state",
         _line('{"type": "STATE_SNAPSHOT", "snapshot": {"nan": NaN, "inf": Infinity, "neg": -Infinity}}'),
         check=_non_finite_state),  # the next request must still be strict JSON (no NaN token)
    Case("json-1e400-in-state", _line('{"type": "STATE_SNAPSHOT", "snapshot": {"big": 1e400, "n": 1}}'),
         check=state_is({"big": float("inf"), "n": 1})),
    Case("json-5000-digit-integer", _line('{"type": "STATE_SNAPSHOT", "snapshot": {"n": ' + "9" * 5000 + "}}"),
         error=r"not JSON"),
    Case("json-duplicate-keys",
         _event_text('{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "first", "delta": "second"}'),
         check=has("m", "second")),
    Case("json-duplicate-type-key",
         _event_text('{"type": "RUN_FINISHED", "messageId": "m", "delta": "typed", "type": "TEXT_MESSAGE_CONTENT"}'),
         check=has("m", "typed")),
    Case("json-known-type-invalid-field",
         _event_text('{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 42}'), error=r"malformed event"),
    Case("json-type-is-a-list", _line('{"type": ["RUN_FINISHED"]}'), error=r"malformed event"),
    Case("json-outcome-type-is-an-object",
         _line('{"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": {"a": 1}}}'),
         error=r"malformed event"),
    Case("json-empty-delta", ok_text("", "x"), check=has("m", "x")),
    Case("json-state-delta-copy-amplification", _amplify("state"), check=_bounded_copy("state")),
    Case("json-activity-delta-copy-amplification", _amplify("activity"), check=_bounded_copy("activity")),
    Case("json-unknown-event-type", run_of({"type": "TELEPATHY", "payload": "<b>x</b>"}, *msg("m", "still here")),
         check=has("m", "still here")),
    Case("json-missing-type", run_of({"messageId": "m", "delta": "typeless"}, *msg("m", "ok")), check=has("m", "ok")),
    Case("json-escaped-nul-in-text", ok_text("a\x00b"), check=has("m", "a\x00b")),
    Case("json-deep-150-state-snapshot", _line(_deep_event("snapshot", 150)), error=r"nested deeper than 100"),
    Case("json-deep-600-state-snapshot", _line(_deep_event("snapshot", 600)), error=r"nested deeper than 100"),
    Case("json-deep-100000-state-snapshot", _line(_deep_event("snapshot", 100_000)), error=r"nested deeper than 100"),
    Case("json-deep-150-state-delta", _line(_deep_event("delta", 150)), error=r"nested deeper than 100"),
    Case("json-deep-600-state-delta", _line(_deep_event("delta", 600)), error=r"nested deeper than 100"),
    Case("json-deep-100000-state-delta", _line(_deep_event("delta", 100_000)), error=r"nested deeper than 100"),
    Case("json-deep-150-event-metadata", _line(_deep_event("metadata", 150)), error=r"nested deeper than 100"),
    # a delta with anything nested is not read by the fast path (parse_delta_json): the depth limit still holds
    Case("json-deep-150-delta-extra-field",
         _line('{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x", "extra": ' + deep_text(150) + "}"),
         error=r"nested deeper than 100"),
    Case("json-deep-150-delta-raw-event",
         _line('{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{","rawEvent":' + deep_text(150) + "}"),
         error=r"nested deeper than 100"),
    Case("json-deep-150-tool-args", _deep_args(150), check=deep_args_ignored("c", 301)),
    Case("json-deep-600-tool-args", _deep_args(600), check=deep_args_ignored("c", 1201)),
    Case("json-deep-100000-tool-args", _deep_args(100_000), check=deep_args_ignored("c", 200_001)),
    Case("json-state-delta-series-nests-deeper", _deeper_and_deeper, check=_bounded_state),
    Case("json-lone-high-surrogate-mid-text", ok_text("a\ud83db"), check=has("m", "a\ufffdb")),
    Case("json-lone-low-surrogate-mid-text", ok_text("a\ude00b"), check=has("m", "a\ufffdb")),
    Case("json-lone-high-surrogate-at-message-end", ok_text("hi ", "\ud83d"),
         check=has_one_of("m", "hi ", "hi \ufffd")),
    Case("json-reversed-surrogate-pair", ok_text("x\ude00\ud83dy"), check=has("m", "x\ufffd\ufffdy")),
    Case("json-lone-surrogate-tool-args",
         run_of(call_start("c"), call_args("c", '{"q": "\ud800"}'), call_end("c")),
         check=args_are("c", {"q": "\ufffd"})),
    Case("json-lone-surrogate-double-escaped-in-tool-args",
         run_of(call_start("c"), call_args("c", '{"q": "\\ud800"}'), call_end("c")),
         check=lambda ctx: assert_utf8(ctx.session.transcript.tool_calls["c"].args)),
    Case("json-lone-surrogate-interrupt-message",
         lambda b: [st(b), fin(b, [interrupt("i1", message="\udc00 approve?")])], check=_surrogate_interrupt),
    Case("json-lone-surrogate-state-key",
         run_of({"type": "STATE_SNAPSHOT", "snapshot": {"\udc00key": "v\ud800"}}), check=_surrogate_state_key),
    Case("json-lone-surrogate-message-id", run_of(*msg("id-\ud800", "x")), check=has("id-\ufffd", "x")),
    Case("json-lone-surrogate-legacy-value", run_of(legacy({"message": "\ud800?", "k\udfff": 1})),
         check=pending_then_resume(kind="legacy")),
    Case("json-lone-surrogate-messages-snapshot",
         lambda b: [st(b), {"type": "MESSAGES_SNAPSHOT", "messages": [*b["messages"], {
             "id": "snap", "role": "assistant", "content": "snap \udbff"}]}, fin(b)], check=has("snap", "snap \ufffd")),
    Case("json-emoji-split-across-text-deltas", ok_text("hi \ud83d", "\ude00"), check=has("m", "hi 😀")),
    Case("json-emoji-split-across-tool-args",
         run_of(call_start("c"), call_args("c", '{"e": "\ud83d'), call_args("c", '\ude00"}'), call_end("c")),
         check=args_are("c", {"e": "😀"})),
    Case("json-emoji-split-across-interleaved-messages",
         run_of(start("a"), start("b"), delta("a", "x\ud83d"), delta("b", "y"), delta("a", "\ude00"), end("a"),
                end("b")),
         check=all_of(has("a", "x😀"), has("b", "y"))),
    Case("json-invalid-utf8-bytes", _event_text(_CONTENT + b'"a\xffb\xc3"}'), check=has("m", "a\ufffdb\ufffd")),
    Case("json-utf8-encoded-surrogate-bytes", _event_text(_CONTENT + b'"a\xed\xa0\xbdb"}'),
         check=_replaced_between("a", "b")),
    Case("json-overlong-utf8", _event_text(_CONTENT + b'"a\xc0\xafb"}'), check=_replaced_between("a", "b")),
    Case("json-declared-iso-8859-1-utf8-body",
         lambda b: resp(frames(st(b), *msg("m", "grüße"), fin(b)),
                        content_type="text/event-stream; charset=iso-8859-1"),
         check=has("m", "grüße")),
    Case("json-declared-utf-16-utf8-body",
         lambda b: resp(frames(st(b), *msg("m", "grüße €"), fin(b)), content_type="text/event-stream; charset=utf-16"),
         check=has("m", "grüße €")),
    Case("json-declared-unknown-charset",
         lambda b: resp(frames(st(b), *msg("m", "grüße"), fin(b)), content_type="text/event-stream; charset=klingon"),
         check=has("m", "grüße")),
    Case("json-latin-1-bytes-in-body", _event_text(_CONTENT + '"grüße"}'.encode("latin-1")),
         check=has("m", "gr\ufffd\ufffde")),
]


# -- ordering --------------------------------------------------------------------------------------------

ORDERING = [
    Case("order-content-before-run-started", lambda b: [delta("m", "early"), st(b), fin(b)],
         error=r"first event must be RUN_STARTED or RUN_ERROR, got TEXT_MESSAGE_CONTENT"),
    Case("order-run-finished-without-run-started", lambda b: [fin(b)], error=r"first event must be RUN_STARTED"),
    Case("order-content-before-message-start", run_of(delta("m", "x"), start("m"), end("m")),
         error=r"TEXT_MESSAGE_CONTENT for m, which is not open"),
    Case("order-message-end-without-start", run_of(end("m")), error=r"TEXT_MESSAGE_END for m, which is not open"),
    Case("order-message-start-twice", run_of(start("m"), start("m"), end("m")), error=r"already open"),
    Case("order-missing-run-finished", lambda b: [st(b), *msg("m", "and then nothing")],
         error=r"closed the stream before RUN_FINISHED"),
    Case("order-truncated-mid-event", raw_of(lambda b: frames(st(b), start("m")) + b'data: {"type": "TEXT_MESS'),
         error=r"closed the stream before RUN_FINISHED"),
    Case("order-run-started-only", lambda b: [st(b)], error=r"before RUN_FINISHED"),
    Case("order-two-run-started", lambda b: [st(b), st(b), fin(b)], error=r"RUN_STARTED while a run is active"),
    Case("order-events-after-run-finished", lambda b: [st(b), fin(b), *msg("late", "zombie")],
         error=r"TEXT_MESSAGE_START after RUN_FINISHED"),
    Case("order-run-error-then-more-events", lambda b: [st(b), run_err("the model exploded"), *msg("m", "x"), fin(b)],
         error=r"^the model exploded$"),
    Case("order-run-error-twice", lambda b: [st(b), run_err("first reason"), run_err("second reason")],
         error=r"^first reason$", check=error_lacks("second")),
    Case("order-run-error-as-first-event", lambda b: [run_err("refused before starting", "NO_CAPACITY")],
         error=r"refused before starting \(NO_CAPACITY\)"),
    Case("order-stream-held-open-after-run-finished",
         lambda b: Stream([st(b), *msg("m", "done"), fin(b), 3.0]), check=has("m", "done"), read_timeout=0.5),
    Case("order-run-error-after-run-finished", lambda b: [st(b), *msg("m", "x"), fin(b), run_err("late failure")],
         error=r"late failure"),
    Case("order-tool-call-args-unknown-id", run_of(call_args("ghost", "{}")),
         error=r"TOOL_CALL_ARGS for ghost, which is not open"),
    Case("order-tool-call-end-twice", run_of(call_start("c1"), call_end("c1"), call_end("c1")),
         error=r"TOOL_CALL_END for c1, which is not open"),
    Case("order-tool-call-start-twice", run_of(call_start("c1"), call_start("c1"), call_end("c1")),
         error=r"TOOL_CALL_START for c1, which is already open"),
    Case("order-step-finished-without-start", run_of({"type": "STEP_FINISHED", "stepName": "plan"}),
         error=r"STEP_FINISHED for plan, which was not started"),
    Case("order-step-started-twice", run_of(*[{"type": "STEP_STARTED", "stepName": "plan"}] * 2),
         error=r"STEP_START for plan, which is already open"),
    Case("order-run-finished-with-open-message", run_of(start("m"), delta("m", "half")),
         error=r"RUN_FINISHED while text message m is still open"),
    Case("order-run-finished-with-open-tool-call", run_of(call_start("c1")),
         error=r"RUN_FINISHED while tool call c1 is still open"),
    Case("order-run-finished-with-open-step", run_of({"type": "STEP_STARTED", "stepName": "plan"}),
         error=r"RUN_FINISHED while step plan is still open"),
    Case("order-text-chunk-without-id", run_of({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}), error=r"needs an id"),
    Case("order-tool-chunk-without-name", run_of({"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "delta": "{}"}),
         error=r"needs a toolCallName"),
    Case("order-chunks-interleaved-with-events",
         run_of({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "chunk"}, {"type": "CUSTOM", "name": "x",
                                                                                    "value": 1},
                {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m2", "delta": "ed"}),
         check=all_of(has("m", "chunk"), has("m2", "ed"))),
    # unknown events are dropped before the order is checked
    Case("order-unknown-events-everywhere",
         lambda b: [{"type": "X_PING"}, st(b), {"type": "X_PING"}, *msg("m", "fine"), {"type": "X_PING"}, fin(b),
                    {"type": "X_PING"}],
         check=has("m", "fine")),
]


# -- ids --------------------------------------------------------------------------------------------

def _reuse_history(kind: str):
    def reply(body):
        user_id, reply_id = history_ids(body)[:2]
        if kind == "text-assistant":
            events = msg(reply_id, " and more")
        elif kind == "text-user":
            events = [start(user_id, "user"), delta(user_id, " (edited by the agent)"), end(user_id)]
        elif kind == "reasoning":
            events = [{"type": "REASONING_MESSAGE_START", "messageId": reply_id, "role": "reasoning"},
                      {"type": "REASONING_MESSAGE_CONTENT", "messageId": reply_id, "delta": "thinking"},
                      {"type": "REASONING_MESSAGE_END", "messageId": reply_id}]
        elif kind == "tool-result":
            events = [tool_result(user_id, "call-x", "overwritten")]
        elif kind == "activity":
            events = [{"type": "ACTIVITY_SNAPSHOT", "messageId": user_id, "activityType": "progress",
                       "content": {"pct": 1}}]
        else:  # a tool call hung under the user's first message, and its result
            events = [call_start("c-under-user", parent=user_id), call_args("c-under-user", "{}"),
                      call_end("c-under-user"), tool_result("t-under-user", "c-under-user", "done")]
        return [st(body), *events, *msg("m", "reply"), fin(body)]
    return reply


def _snapshot_duplicates(body):
    return [st(body), {"type": "MESSAGES_SNAPSHOT", "messages": [
        *body["messages"], {"id": "dup", "role": "assistant", "content": "first"},
        {"id": "dup", "role": "assistant", "content": "second"}]}, fin(body)]


def _no_duplicate_ids(ctx: Ctx) -> None:
    ids = [m.id for m in ctx.messages]
    assert len(ids) == len(set(ids)), ids
    assert ctx.content("dup") == "second"


def _snapshot_repeats_history(body):
    return [st(body), {"type": "MESSAGES_SNAPSHOT", "messages": [*body["messages"], *body["messages"]]},
            *msg("m", "after snapshot"), fin(body)]


def _snapshot_drops_history(body):
    return [st(body), {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "fresh", "role": "assistant", "content": "a fresh start"}]}, fin(body)]


def _history_replaced(ctx: Ctx) -> None:
    # MESSAGES_SNAPSHOT is the agent's authoritative list (AG-UI): what it leaves out is gone
    assert [(m.id, m.content) for m in ctx.messages] == [("fresh", "a fresh start")]


def _thread_kept(ctx: Ctx) -> None:
    assert ctx.session.thread_id == "thread-hostile"  # the next request still names our thread


def _long_id(ctx: Ctx) -> None:
    assert ctx.content("i" * MB) == "long id"


IDS = [
    Case("ids-text-start-reuses-history-assistant-id", _reuse_history("text-assistant"),
         error=r"reuses the id of an earlier (user|assistant|reasoning) message"),
    Case("ids-text-start-reuses-history-user-id", _reuse_history("text-user"),
         error=r"reuses the id of an earlier (user|assistant|reasoning) message"),
    Case("ids-reasoning-start-reuses-history-id", _reuse_history("reasoning"),
         error=r"reuses the id of an earlier (user|assistant|reasoning) message"),
    Case("ids-tool-result-reuses-history-id", _reuse_history("tool-result"),
         error=r"reuses the id of an earlier (user|assistant|reasoning) message"),
    Case("ids-activity-snapshot-reuses-history-id", _reuse_history("activity")),
    Case("ids-tool-call-parent-is-history-message", _reuse_history("tool-under-user"),
         error=r"reuses the id of an earlier (user|assistant|reasoning) message"),
    Case("ids-empty-message-id", ok_text("empty id", message_id=""), check=has("", "empty id")),
    Case("ids-empty-tool-call-id", run_of(call_start(""), call_args("", "{}"), call_end("")),
         check=args_are("", {})),
    Case("ids-empty-run-and-thread-id", lambda b: [{"type": "RUN_STARTED", "threadId": "", "runId": ""},
                                                   *msg("m", "anon"), {"type": "RUN_FINISHED", "threadId": "",
                                                                       "runId": ""}],
         check=has("m", "anon")),
    Case("ids-1mb-message-id", reply_with(lambda b: [st(b), *msg("i" * MB, "long id"), fin(b)]),
         check=_long_id, timeout=30),
    Case("ids-1mb-id-in-an-ordering-error", reply_with(lambda b: [st(b), end("i" * MB), fin(b)]),
         error=r"TEXT_MESSAGE_END for i+…"),
    Case("ids-html-message-id", ok_text("markup id", message_id="<img src=x onerror=alert(1)>"),
         check=has("<img src=x onerror=alert(1)>", "markup id")),
    Case("ids-html-id-in-an-ordering-error", run_of(end("<script>alert(1)</script>")), error=r"which is not open"),
    Case("ids-control-and-bidi-chars-in-an-ordering-error", run_of(end("a\n\x1b[31mred\u202egnp.exe")),
         error=r"TEXT_MESSAGE_END for a .*red.*which is not open"),
    Case("ids-messages-snapshot-duplicate-ids", _snapshot_duplicates, check=_no_duplicate_ids),
    Case("ids-messages-snapshot-repeats-the-history", _snapshot_repeats_history, check=has("m", "after snapshot")),
    Case("ids-messages-snapshot-drops-the-history", _snapshot_drops_history, check=_history_replaced,
         keeps_history=False),
    Case("ids-thread-id-mismatch", lambda b: [st({**b, "threadId": "someone-elses-thread"}), *msg("m", "x"),
                                              fin({**b, "threadId": "yet-another"})], check=_thread_kept),
    Case("ids-run-id-mismatch", lambda b: [st({**b, "runId": "run-a"}), *msg("m", "x"), fin({**b, "runId": "run-b"})],
         check=has("m", "x")),
    Case("ids-tool-result-for-unknown-call", run_of(tool_result("t-orphan", "never-called", "orphan")),
         check=has("t-orphan", "orphan")),
]


# -- interrupts (the hostile run raises them) ----------------------------------------------------------

def _interrupts(*items: dict, extra: list | None = None):
    return lambda b: [st(b), *(extra or []), fin(b, list(items))]


def _dup_ids(ctx: Ctx):
    pending = ctx.session.tracker.pending
    assert pending is not None and pending.ids == ["dup", "dup"]
    return pending_then_resume()(ctx)


def _legacy_kept(value):
    async def check(ctx: Ctx) -> None:
        pending = ctx.session.tracker.pending
        assert pending is not None and pending.kind == "legacy" and pending.raw_value == value  # S1
        await pending_then_resume(kind="legacy")(ctx)
        assert ctx.session.tracker.pending is None
        command = ctx.agent.bodies[-1]["forwardedProps"]["command"]
        assert command["interruptEvent"] == value  # S13: exactly as received
    return check


def _standard_wins(ctx: Ctx):
    pending = ctx.session.tracker.pending
    assert pending is not None and pending.kind == "standard" and pending.ids == ["std"]  # S2
    return pending_then_resume()(ctx)


def _not_too_deep(ctx: Ctx) -> None:
    pending = ctx.session.tracker.pending
    assert pending is not None
    assert not too_deep(pending.wire_event), "a pending interrupt nested deeper than MAX_DEPTH"


def _expiry_garbage(ctx: Ctx):
    pending = ctx.session.tracker.pending
    assert pending is not None and not ctx.session.tracker.is_expired(pending.interrupts[0])  # S11
    return pending_then_resume()(ctx)


def _last_legacy_wins(ctx: Ctx) -> None:
    pending = ctx.session.tracker.pending
    assert pending is not None and pending.raw_value == "third"  # S1


INTERRUPTS = [
    Case("int-outcome-with-empty-list", _interrupts(extra=msg("m", "nothing to ask")),
         error=r"malformed event.*interrupts.*at least 1 item"),
    Case("int-duplicate-interrupt-ids", _interrupts(interrupt("dup"), interrupt("dup", message="again")),
         check=_dup_ids),
    Case("int-1mb-interrupt-message", reply_with(_interrupts(interrupt("big", message="m" * MB))),
         check=pending_then_resume(1, MB)),
    Case("int-garbage-expires-at", _interrupts(interrupt("i1", expiresAt="the day after never")),
         check=_expiry_garbage),
    Case("int-expires-at-not-a-string", _interrupts(interrupt("i1", expiresAt=12345)), error=r"malformed event"),
    Case("int-response-schema-not-an-object", _interrupts(interrupt("i1", responseSchema="yes or no")),
         error=r"malformed event"),
    Case("int-response-schema-a-list", _interrupts(interrupt("i1", responseSchema=[1, 2])), error=r"malformed event"),
    Case("int-unknown-tool-call-id", _interrupts(interrupt("i1", toolCallId="no-such-call")),
         check=pending_then_resume(1)),
    Case("int-html-in-interrupt-fields", _interrupts(interrupt("<b>i1</b>", message="<script>alert(1)</script>",
                                                               reason="<img src=x>")),
         check=pending_then_resume(1)),
    Case("int-empty-interrupt-id", _interrupts(interrupt("")), check=pending_then_resume(1)),
    Case("int-interrupts-not-a-list",
         lambda b: [st(b), {**fin(b), "outcome": {"type": "interrupt", "interrupts": "everything"}}],
         error=r"malformed event"),
    Case("int-outcome-unknown-type", lambda b: [st(b), {**fin(b), "outcome": {"type": "teleport"}}],
         check=nothing_pending),
    Case("int-deep-response-schema",
         _line('{"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "interrupt", '
               '"interrupts": [{"id": "i", "reason": "x", "responseSchema": {"a": ' + deep_text(150) + "}}]}}"),
         error=r"nested deeper than 100"),
    Case("int-legacy-invalid-json-string", run_of(legacy("{not json")), check=_legacy_kept("{not json")),
    Case("int-legacy-1mb-value", reply_with(run_of(legacy("v" * MB))), check=_legacy_kept("v" * MB), timeout=30),
    Case("int-legacy-nan-value", _line('{"type": "CUSTOM", "name": "on_interrupt", "value": {"x": NaN}}'),
         check=pending_then_resume(kind="legacy")),
    Case("int-legacy-string-value-nested-600", run_of(legacy(deep_text(600))), check=_not_too_deep),
    Case("int-legacy-string-value-nested-100000", run_of(legacy(deep_text(100_000)))),
    Case("int-legacy-json-string-with-escaped-lone-surrogate", run_of(legacy('{"message": "\\ud800 approve?"}')),
         check=pending_then_resume(kind="legacy")),
    Case("int-legacy-several-events-last-wins", run_of(legacy("first"), legacy("second"), legacy("third")),
         check=_last_legacy_wins),
    Case("int-both-channels", _interrupts(interrupt("std"), extra=[legacy({"message": "legacy"})]),
         check=_standard_wins),
    Case("int-500-interrupts", reply_with(_interrupts(*(interrupt(f"i{n}") for n in range(500)))),
         check=pending_then_resume(500)),
    Case("int-stream-held-open-after-interrupt",
         lambda b: Stream([st(b), fin(b, [interrupt("i1")]), 3.0]), check=pending_then_resume(1), read_timeout=0.5),
    Case("int-legacy-after-run-finished", lambda b: [st(b), fin(b), legacy("late")],
         error=r"CUSTOM after RUN_FINISHED"),
]


# -- oversized data ----------------------------------------------------------------------------------------

def _huge_event(size: int, *, newline: bool = True, json_event: bool = True):
    def parts(b):
        yield frame(st(b)) + frame(start("m"))
        yield b'data: {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "' if json_event else b"data: "
        piece = b"x" * (64 * 1024)
        for _ in range(size // len(piece)):
            yield piece
        if newline:
            yield (b'"}' if json_event else b"") + b"\n\n" + frames(end("m"), fin(b))
    return streamed(parts)


def _many_data_lines(size: int):
    def parts(b):
        yield frame(st(b))
        line = b"data: " + b"y" * 1000 + b"\n"
        block = line * 64
        for _ in range(size // len(block)):
            yield block
        yield b"\n" + frame(fin(b))
    return streamed(parts)


def _a_long_run(b):
    """68 MB of events in one run (no cap on a run: each thing kept is bounded instead)."""
    event = frame({"type": "CUSTOM", "name": "bulk", "value": "v" * (4 * MB)})
    yield frame(st(b))
    for _ in range(17):
        yield event
    yield frames(start("m"), delta("m", "done"), end("m"), fin(b))


def _a_message_over_the_limit(b):
    yield frames(st(b), start("m"))
    chunk = frame(delta("m", "w" * (4 * MB)))
    for _ in range(MAX_TEXT_CHARS // (4 * MB) + 1):
        yield chunk
    yield frames(end("m"), fin(b))


def _many_deltas(count: int):
    return raw_of(lambda b: frames(st(b), start("m"), *(delta("m", "x") for _ in range(count)), end("m"), fin(b)))


def _one_mb_args(b):
    args = json.dumps({"blob": "a" * MB})
    return [st(b), call_start("c"), call_args("c", args), call_end("c"), fin(b)]


def _big_state(ctx: Ctx) -> None:
    assert len(ctx.session.transcript.state["blob"]) == 5 * MB


def _content_length(message_id: str, length: int):
    def check(ctx: Ctx) -> None:
        assert len(ctx.content(message_id)) == length
    return check


def _big_args(ctx: Ctx) -> None:
    assert len(ctx.session.transcript.tool_calls["c"].args["blob"]) == MB


def _many_calls(ctx: Ctx) -> None:
    assert len(ctx.message("m").tool_call_ids) == 2000


OVERSIZED = [
    Case("big-11mb-event", _huge_event(11 * MB), error=r"larger than \d+ characters", timeout=30),
    Case("big-50mb-event", _huge_event(50 * MB), error=r"larger than \d+ characters", memory=True, timeout=40),
    Case("big-50mb-endless-line-without-newline", _huge_event(50 * MB, newline=False, json_event=False),
         error=r"larger than \d+ characters", memory=True, timeout=40),
    Case("big-50mb-event-of-many-data-lines", _many_data_lines(50 * MB), error=r"larger than \d+ characters",
         memory=True, timeout=40),
    Case("big-run-of-68m-chars-completes", streamed(_a_long_run), check=has("m", "done"), timeout=40),
    Case("big-message-over-the-text-limit", streamed(_a_message_over_the_limit), error=r"longer than [\d,]+ characters",
         timeout=40),
    Case("big-event-just-under-the-cap", _huge_event(MAX_EVENT_CHARS - 256 * 1024),
         check=_content_length("m", MAX_EVENT_CHARS - 256 * 1024), timeout=40),
    Case("big-1mb-run-error-message", reply_with(lambda b: [st(b), run_err("x" * MB)]), error=r"^x{100,}…$"),
    Case("big-1mb-run-error-code", reply_with(lambda b: [st(b), run_err("failed", "C" * MB)]),
         error=r"^failed \(C+…\)$"),
    Case("big-empty-run-error-message", lambda b: [st(b), run_err("")], error=r"without a message"),
    Case("big-blank-run-error-message", lambda b: [st(b), run_err(" \n\t ")], error=r"without a message"),
    Case("big-run-error-message-multiline-with-controls",
         lambda b: [st(b), run_err("line one\nline two\r\n\x1b[31mred\x07\u2028end")],
         error=r"^line one line two \[31mred end$"),
    Case("big-run-error-python-reprs-kept", lambda b: [st(b), run_err("expected <class 'int'>, got <lambda>")],
         error=r"^expected <class 'int'>, got <lambda>$"),
    Case("big-run-error-html-message",
         lambda b: [st(b), run_err("upstream said: <html><title>502</title><script>x()</script></html>")],
         error=r"upstream said"),
    Case("big-run-error-without-message", lambda b: [st(b), {"type": "RUN_ERROR"}], error=r"malformed event"),
    Case("big-1mb-malformed-line", reply_with(lambda b: frame(st(b)) + b"data: {" + b"y" * MB + b"\n\n"),
         error=r"not JSON"),
    Case("big-1mb-tool-args", reply_with(_one_mb_args),
         check=_big_args),
    Case("big-5mb-state-snapshot", reply_with(run_of({"type": "STATE_SNAPSHOT", "snapshot": {"blob": "s" * 5 * MB}})),
         check=_big_state, timeout=30),
    Case("big-50000-small-deltas", _many_deltas(50_000), check=has("m", "x" * 50_000), timeout=40),
    Case("big-1mb-step-name-in-an-ordering-error",
         reply_with(run_of({"type": "STEP_FINISHED", "stepName": "s" * MB})), error=r"STEP_FINISHED for s+…"),
    Case("big-1mb-unknown-event-type-name", reply_with(run_of({"type": "X" * MB}, *msg("m", "fine"))),
         check=has("m", "fine")),
    Case("big-2000-tool-calls",
         reply_with(lambda b: [st(b), start("m"), end("m"), *[e for i in range(2000) for e in (
             call_start(f"c{i}", parent="m"), call_args(f"c{i}", "{}"), call_end(f"c{i}"))], fin(b)]),
         check=_many_calls, timeout=40),
]


# -- HTTP faults ---------------------------------------------------------------------------------------

def _raw_reply(data: bytes, *, close: str = "fin", delay: float = 0.0):
    def handler(conn: socket.socket, body) -> None:
        if delay:
            threading.Event().wait(delay)
        if data:
            conn.sendall(data)
        if close == "rst":
            reset(conn)
        else:
            conn.shutdown(socket.SHUT_RDWR)
    return Raw(handler)


def _raw_events(head: bytes, build, *, close: str = "fin"):
    def handler(conn: socket.socket, body) -> None:
        conn.sendall(head + build(body or {}))
        threading.Event().wait(0.1)
        if close == "rst":
            reset(conn)
        else:
            conn.shutdown(socket.SHUT_RDWR)
    return Raw(handler)


def _mount_redirect(status: int, hops: int = 1, *, to_path: bool = True):
    """A redirect (through ``hops`` mounted redirectors) to a mounted agent answering a good run."""
    def build(loopback):
        target = loopback.mount(ScriptedAgent(default=ok_text("redirected")))
        for _ in range(hops - 1):
            target = loopback.mount(ScriptedAgent(default=resp(status=status, content_type=None, location=target)))
        location = target[len(loopback.base_url):] if to_path else target
        return resp(status=status, content_type=None, location=location)
    return Mounted(build)


def _mount_loop(loopback):
    holder: dict = {}
    holder["url"] = loopback.mount(ScriptedAgent(default=lambda b: resp(status=307, content_type=None,
                                                                        location=holder["url"])))
    return resp(status=307, content_type=None, location=holder["url"])


def _cross_origin(loopback):
    port = loopback.base_url.rsplit(":", 1)[1]
    return resp(status=307, content_type=None,
                location=f"http://mallory:{SECRET_PASSWORD}@localhost:{port}/elsewhere?token={SECRET_TOKEN}")


def _endless(content_type: str, status: int = 200, piece: bytes = b"<p>" + b"z" * 4096 + b"</p>\n"):
    def parts(b):
        for _ in range(100_000):
            yield piece
    return streamed(parts, content_type=content_type, status=status)


_BAD_GZIP = resp(frames({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}), content_encoding="gzip")
_REFUSED_WITH_SECRETS = Refused(f"http://alice:{SECRET_PASSWORD}@127.0.0.1:{{port}}/agent?token={SECRET_TOKEN}")

HTTP = [
    Case("http-500-html-page", resp(HTML_PAGE, 500, "text/html; charset=utf-8"),
         error=r"^the agent answered HTTP 500 Internal Server Error: an HTML page$"),
    Case("http-502-html-page", resp(HTML_PAGE.replace("500 Internal Server Error", "502 Bad Gateway"), 502,
                                    "text/html"),
         error=r"HTTP 502 Bad Gateway: an HTML page"),
    Case("http-500-html-page-as-text-plain", resp("\n  " + HTML_PAGE, 500, "text/plain"), error=r"HTTP 500.*HTML page"),
    Case("http-500-html-page-with-bom-as-text-plain", resp("\ufeff" + HTML_PAGE, 500, "text/plain"),
         error=r"HTTP 500"),
    Case("http-500-text-with-markup", resp("Internal error: <script>alert(1)</script>", 500, "text/plain"),
         error=r"HTTP 500.*Internal error"),
    Case("http-500-json-body", JSONResponse({"detail": "model overloaded"}, status_code=500),
         error=r"HTTP 500 Internal Server Error: .*model overloaded"),
    Case("http-500-empty-body", resp(b"", 500, None), error=r"^the agent answered HTTP 500 Internal Server Error$"),
    Case("http-500-10mb-body", reply_with(lambda b: PlainTextResponse("e" * 10 * MB, status_code=500)),
         error=r"HTTP 500.*e+…$"),
    Case("http-503-endless-html-body", _endless("text/html", 503), error=r"HTTP 503 Service Unavailable: an HTML page"),
    Case("http-500-markup-reason-phrase",
         _raw_reply(b"HTTP/1.1 500 <b>Boom</b>\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
         error=r"HTTP 500"),
    Case("http-500-8kb-reason-phrase",
         _raw_reply(b"HTTP/1.1 500 " + b"r" * 8000 + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
         error=r"HTTP 500 r+…$"),
    Case("http-200-text-html-login-page", resp(LOGIN_PAGE, 200, "text/html; charset=utf-8"),
         error=r"did not answer with an event stream \(content-type 'text/html; charset=utf-8'\): an HTML page"),
    Case("http-200-endless-html", _endless("text/html"), error=r"not answer with an event stream.*an HTML page"),
    Case("http-200-application-json", JSONResponse({"error": "use the /stream endpoint"}),
         error=r"content-type 'application/json'.*use the /stream endpoint"),
    Case("http-200-text-plain-sse-body", lambda b: resp(frames(st(b), fin(b)), content_type="text/plain"),
         error=r"content-type 'text/plain'"),
    Case("http-200-event-stream-holding-html", resp(LOGIN_PAGE + "\n\n"), error=r"closed the stream without any event"),
    Case("http-200-missing-content-type", lambda b: resp(frames(st(b), fin(b)), content_type=None),
         error=r"content-type 'missing'"),
    Case("http-200-content-type-with-parameters",
         lambda b: resp(frames(st(b), *msg("m", "params"), fin(b)),
                        content_type="text/event-stream; charset=utf-8; x=1"),
         check=has("m", "params")),
    Case("http-200-content-type-in-capitals",
         lambda b: resp(frames(st(b), *msg("m", "caps"), fin(b)), content_type="Text/Event-Stream"),
         check=has("m", "caps")),
    Case("http-204-no-content", resp(b"", 204, None), error=r"content-type 'missing'"),
    Case("http-400-json-detail", JSONResponse({"detail": [{"msg": "field required"}]}, status_code=400),
         error=r"HTTP 400 Bad Request: .*field required"),
    Case("http-401-unauthorized", resp("unauthorized", 401, "text/plain", www_authenticate="Bearer"),
         error=r"HTTP 401 Unauthorized"),
    Case("http-403-forbidden", resp("", 403, None), error=r"HTTP 403 Forbidden"),
    Case("http-404-not-found", PlainTextResponse("Not Found", status_code=404), error=r"HTTP 404 Not Found"),
    Case("http-429-too-many-requests", resp("slow down", 429, "text/plain", retry_after="30"),
         error=r"HTTP 429 Too Many Requests: slow down"),
    Case("http-422-validation-error", JSONResponse({"detail": "resume entries missing"}, status_code=422),
         error=r"HTTP 422"),
    Case("http-307-same-origin", _mount_redirect(307), check=has("m", "redirected")),
    Case("http-308-same-origin", _mount_redirect(308), check=has("m", "redirected")),
    Case("http-307-same-origin-absolute-url", _mount_redirect(307, to_path=False), check=has("m", "redirected")),
    Case("http-307-two-hops", _mount_redirect(307, hops=2), check=has("m", "redirected")),
    Case("http-302-found", _mount_redirect(302),
         error=r"HTTP 302 Found: a redirect to http://127\.0\.0\.1:\d+/agent-\d+, not followed"),
    Case("http-301-moved", _mount_redirect(301), error=r"HTTP 301 Moved Permanently: a redirect to .* not followed"),
    Case("http-303-see-other", _mount_redirect(303), error=r"HTTP 303 See Other: a redirect to .* not followed"),
    Case("http-307-cross-origin-with-credentials", Mounted(_cross_origin),
         error=r"a redirect to http://localhost:\d+/elsewhere\?…, not followed",
         check=error_lacks(SECRET_PASSWORD, SECRET_TOKEN, "mallory")),
    Case("http-307-without-location", resp(status=307, content_type=None), error=r"redirect without a Location"),
    Case("http-307-invalid-location", resp(status=307, content_type=None, location="http://[::1"),
         error=r"Invalid URL in location header"),
    Case("http-redirect-loop", Mounted(_mount_loop), error=r"more than 3 redirects"),
    Case("http-bad-gzip-body", _BAD_GZIP, error=r"HTTP error|decompress"),
    Case("http-connection-reset-before-headers", _raw_reply(b"", close="rst"), error=r"connection|dropped"),
    Case("http-connection-closed-before-headers", _raw_reply(b""), error=r"connection|dropped|disconnected"),
    Case("http-connection-reset-mid-stream",
         _raw_events(SSE_HEAD_CHUNKED, lambda b: chunk(frames(st(b), start("m"), delta("m", "half"))), close="rst"),
         error=r"dropped mid-stream"),
    Case("http-connection-closed-mid-chunk",
         _raw_events(SSE_HEAD_CHUNKED, lambda b: chunk(frames(st(b)))[:-5]), error=r"dropped mid-stream"),
    Case("http-close-without-body-chunked", _raw_reply(SSE_HEAD_CHUNKED), error=r"dropped mid-stream"),
    Case("http-close-without-body-until-close", _raw_reply(SSE_HEAD_UNTIL_CLOSE),
         error=r"closed the stream without any event"),
    Case("http-short-content-length",
         _raw_reply(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 5000\r\n\r\n"
                    + frames({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})),
         error=r"dropped mid-stream"),
    Case("http-bad-chunk-size", _raw_reply(SSE_HEAD_CHUNKED + b"zz\r\nhello\r\n"),
         error=r"^the agent's answer is not valid HTTP: .*chunk size"),
    Case("http-garbage-status-line", _raw_reply(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"),
         error=r"^the agent's answer is not valid HTTP: "),
    Case("http-huge-header", _raw_reply(b"HTTP/1.1 200 OK\r\nX-Junk: " + b"j" * 200_000 + b"\r\n\r\n"),
         error=r"^the agent's answer is not valid HTTP: "),
    Case("http-100-continue-then-200",
         _raw_events(b"HTTP/1.1 100 Continue\r\n\r\n" + SSE_HEAD_CHUNKED,
                     lambda b: chunk(frames(st(b), *msg("m", "continued"), fin(b))) + b"0\r\n\r\n"),
         check=has("m", "continued")),
    Case("http-slow-headers", SlowHeaders(3.0, resp(b"")), error=r"timed out waiting for the agent", read_timeout=0.3),
    Case("http-slow-body-mid-stream",
         lambda b: Stream([st(b), *msg("m", "x"), 3.0, fin(b)]), error=r"timed out waiting for the agent",
         read_timeout=0.3),
    Case("http-connection-refused", Refused(), error=r"cannot reach the agent at http://127\.0\.0\.1:\d+/agent"),
    Case("http-connection-refused-url-with-credentials", _REFUSED_WITH_SECRETS,
         error=r"cannot reach the agent at http://127\.0\.0\.1:\d+/agent\?…",
         check=error_lacks(SECRET_PASSWORD, SECRET_TOKEN, "alice")),
]


# -- resume path ----------------------------------------------------------------------------------------

def _resume(name: str, reply, error: str | None, before_start: bool = True, interrupts: int = 1, **kw) -> Case:
    return Case(f"resume-{name}", reply, error=error, phase="resume", before_start=before_start,
                interrupts=interrupts, **kw)


def _new_interrupt_then_error(b):
    return [st(b), fin(b, [interrupt("int-new")]), run_err("changed my mind")]


RESUME = [
    _resume("http-500-before-start", PlainTextResponse("kaputt", status_code=500), r"HTTP 500.*kaputt"),
    _resume("http-500-html-page", resp(HTML_PAGE, 500, "text/html"), r"HTTP 500 Internal Server Error: an HTML page"),
    _resume("http-404", PlainTextResponse("gone", status_code=404), r"HTTP 404"),
    _resume("http-302", _mount_redirect(302), r"redirect to .* not followed"),
    _resume("http-307-same-origin", _mount_redirect(307), None),
    _resume("connection-refused", _REFUSED_WITH_SECRETS, r"cannot reach the agent",
            check=error_lacks(SECRET_PASSWORD, SECRET_TOKEN)),
    _resume("connection-reset-before-headers", _raw_reply(b"", close="rst"), r"connection|dropped"),
    _resume("read-timeout-before-headers", SlowHeaders(3.0, resp(b"")), r"timed out", read_timeout=0.3),
    _resume("html-login-page-200", resp(LOGIN_PAGE, 200, "text/html"), r"not answer with an event stream.*HTML page"),
    _resume("empty-body", b"", r"without any event"),
    _resume("only-comments", b": ping\n\n" * 10, r"without any event"),
    _resume("run-error-first", lambda b: [run_err("interrupt already answered", "STALE")], r"already answered"),
    _resume("content-before-run-started", lambda b: [delta("m", "x"), st(b), fin(b)], r"first event must be"),
    _resume("malformed-json-first", raw_of(lambda b: b"data: {oops\n\n"), r"not JSON"),
    _resume("huge-event-first", reply_with(lambda b: b"data: " + b"h" * (11 * MB) + b"\n\n"), r"larger than",
            timeout=30),
    _resume("deep-nesting-first", raw_of(lambda b: f"data: {_deep_event('snapshot', 600)}\n\n"), r"nested deeper"),
    _resume("run-error-invalid-payload-after-start",
            lambda b: [st(b), run_err("the answer does not match the schema", "INVALID_PAYLOAD")],
            r"does not match the schema \(INVALID_PAYLOAD\)", before_start=False),
    _resume("truncated-after-start", lambda b: [st(b), *msg("m-partial", "deleting")], r"before RUN_FINISHED",
            before_start=False),
    # a FIN, not an RST: an RST may discard RUN_STARTED before the client has read it
    _resume("connection-dropped-after-start",
            _raw_events(SSE_HEAD_CHUNKED, lambda b: chunk(frames(st(b), start("m"))) + b"40\r\ndata: {"),
            r"dropped mid-stream", before_start=False),
    _resume("malformed-json-after-start", raw_of(lambda b: frame(st(b)) + b"data: {oops\n\n"), r"not JSON",
            before_start=False),
    _resume("huge-event-after-start", reply_with(lambda b: frame(st(b)) + b"data: " + b"h" * (11 * MB) + b"\n\n"),
            r"larger than", before_start=False, timeout=30),
    _resume("deep-nesting-after-start", _line(_deep_event("delta", 600)), r"nested deeper", before_start=False),
    _resume("lone-surrogates", lambda b: [st(b), tool_result("tool-0", "call-0", "ok \ud800"),
                                          *msg("m-sur", "done \udfff"), fin(b)], None,
            check=all_of(has("m-sur", "done \ufffd"), has("tool-0", "ok \ufffd"))),
    _resume("lone-surrogate-in-run-error", lambda b: [st(b), run_err("bad \ud800 answer")],
            r"^bad \ufffd answer$", before_start=False),
    _resume("two-interrupts-http-500", PlainTextResponse("down", status_code=500), r"HTTP 500", interrupts=2),
    _resume("two-interrupts-run-error-after-start", lambda b: [st(b), run_err("nope", "INVALID_PAYLOAD")],
            r"nope \(INVALID_PAYLOAD\)", before_start=False, interrupts=2),
    _resume("new-interrupt-then-run-error", _new_interrupt_then_error, r"changed my mind", before_start=False),
    _resume("events-after-run-finished", lambda b: [st(b), fin(b), *msg("late", "zombie")], r"after RUN_FINISHED",
            before_start=False),
    _resume("two-run-started", lambda b: [st(b), st(b), fin(b)], r"RUN_STARTED while a run is active",
            before_start=False),
    _resume("slow-body-after-start", lambda b: Stream([st(b), 3.0, fin(b)]), r"timed out",
            before_start=False, read_timeout=0.3),
]


CASES = [*FRAMING, *JSON_CASES, *ORDERING, *IDS, *INTERRUPTS, *OVERSIZED, *HTTP, *RESUME]


def test_the_corpus_is_large_and_uniquely_named():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert len(CASES) >= 130
    assert sum(case.phase == "resume" for case in CASES) >= 20


@pytest.mark.parametrize("case", params(CASES))
async def test_hostile_agent(case: Case, loopback):
    await run_case(case, loopback)
