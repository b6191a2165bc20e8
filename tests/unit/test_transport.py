"""HTTP POST + SSE transport (interrupt_chat.agui.transport), protocol doc sections 6-7.

In-process cases use ``httpx.ASGITransport`` (it buffers the whole body, so it cannot show
timeouts, drops or cancellation); those run over a real loopback socket (``loopback`` fixture,
:class:`RawServer`). Every failure case checks the typed error *and* that the same
``AgentClient`` then completes a normal run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading

import httpx
import pytest
from ag_ui.core import (
    EventType,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    UserMessage,
)
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from interrupt_chat.agui import (
    AgentClient,
    AgentConnectionError,
    AgentError,
    AgentHTTPError,
    AgentSession,
    AgentStreamError,
    AgentTimeoutError,
    RunCancelled,
)
from interrupt_chat.agui.aiohttp_transport import AiohttpTransport
from interrupt_chat.agui.transport import MAX_BATCH_EVENTS
from tests.unit.agents import (
    SSE_HEAD_CHUNKED,
    SSE_HEAD_UNTIL_CLOSE,
    RawServer,
    ScriptedAgent,
    Stream,
    bound_socket,
    chunk,
    echo_run,
    finished,
    free_port,
    good_chunked_reply,
    reset,
    serve_in_thread,
    simple_run,
    sse,
    started,
    text,
)

TRANSPORT_LOG = "interrupt_chat.agui.transport"
EVENTS_LOG = "interrupt_chat.agui.events"


def make_input(run_id: str = "r1", **extra) -> RunAgentInput:
    return RunAgentInput(thread_id="t1", run_id=run_id, protocol_version="1.0", state={}, messages=[],
                         tools=[], context=[], forwarded_props={}, **extra)


def in_process(agent: ScriptedAgent, **kwargs) -> AgentClient:
    return AgentClient("http://agent.test/run", transport=httpx.ASGITransport(app=agent), **kwargs)


async def collect(client: AgentClient, run_id: str = "r1") -> list:
    return [event async for event in client.run(make_input(run_id))]


async def _drain(events) -> list:
    return [event async for event in events]


async def collect_until_error(client: AgentClient, run_id: str = "r1") -> tuple[list, AgentError]:
    events = []
    with pytest.raises(AgentError) as info:
        async for event in client.run(make_input(run_id)):
            events.append(event)
    return events, info.value


async def assert_usable(client: AgentClient, run_id: str = "r-ok") -> None:
    """The same client completes a normal run after the failure."""
    events = await collect(client, run_id)
    assert events[0].type == EventType.RUN_STARTED
    assert events[-1].type == EventType.RUN_FINISHED
    assert events[-1].run_id == run_id


def types(events) -> list[str]:
    return [e.type.value for e in events]


# -- request ------------------------------------------------------------------------------------

async def test_request_is_json_post_accepting_event_stream():
    agent = ScriptedAgent()
    client = in_process(agent, headers={"Authorization": "Bearer xyz"})
    await collect(client)
    (request,) = agent.requests
    assert request.method == "POST"
    assert request.path == "/run"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["authorization"] == "Bearer xyz"


async def test_request_body_is_run_agent_input_by_alias():
    agent = ScriptedAgent()
    client = in_process(agent)
    run_input = RunAgentInput(thread_id="t9", run_id="r9", parent_run_id="r8", protocol_version="1.0",
                              state={"n": 1, "keep": None}, messages=[UserMessage(id="u1", content="hi")],
                              tools=[], context=[], forwarded_props={"x": {"y": None}})
    [e async for e in client.run(run_input)]
    body = agent.bodies[0]
    assert body["threadId"] == "t9"
    assert body["runId"] == "r9"
    assert body["parentRunId"] == "r8"
    assert body["protocolVersion"] == "1.0"
    assert body["messages"] == [{"id": "u1", "role": "user", "content": "hi"}]
    # always sent, even empty (0.1.x producers require them); nulls inside values are kept
    assert body["state"] == {"n": 1, "keep": None}
    assert body["tools"] == [] and body["context"] == []
    assert body["forwardedProps"] == {"x": {"y": None}}
    assert "resume" not in body  # None fields are omitted
    assert not any("_" in key for key in body)  # camelCase only


async def test_request_body_state_tools_context_forwarded_props_present_when_empty():
    agent = ScriptedAgent()
    await collect(in_process(agent))
    body = agent.bodies[0]
    for key, empty in (("state", {}), ("tools", []), ("context", []), ("forwardedProps", {})):
        assert body[key] == empty, key
    assert "parentRunId" not in body


async def test_request_body_fills_state_tools_context_forwarded_props_left_unset():
    """Doc section 4: always send them; producers on ag-ui-protocol 0.1.x reject input without them."""
    agent = ScriptedAgent()
    [e async for e in in_process(agent).run(RunAgentInput(thread_id="t1", run_id="r1", messages=[]))]
    body = agent.bodies[0]
    assert (body["state"], body["tools"], body["context"], body["forwardedProps"]) == ({}, [], [], {})


async def test_request_body_resume_entries_by_alias():
    from ag_ui.core import ResumeEntry

    agent = ScriptedAgent()
    client = in_process(agent)
    run_input = make_input(resume=[ResumeEntry(interrupt_id="i1", status="resolved", payload={"approved": True}),
                                   ResumeEntry(interrupt_id="i2", status="cancelled")])
    [e async for e in client.run(run_input)]
    assert agent.bodies[0]["resume"] == [
        {"interruptId": "i1", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "i2", "status": "cancelled"},
    ]


async def test_plain_dict_input_is_sent_as_is():
    agent = ScriptedAgent()
    client = in_process(agent)
    body = {"threadId": "t1", "runId": "r1", "messages": [], "custom": 1}
    [e async for e in client.run(body)]
    assert agent.bodies[0] == body


async def test_a_dict_input_json_cannot_hold_fails_the_run_and_the_client_goes_on():
    # a run input model never holds NaN on the wire (pydantic writes it as null); a plain dict
    # is sent as it is, so its NaN is refused with the reason, not as a bare ValueError
    agent = ScriptedAgent()
    client = in_process(agent)
    with pytest.raises(AgentError, match="cannot be sent as JSON: Out of range float"):
        [e async for e in client.run({"threadId": "t1", "runId": "r1", "messages": [], "state": {"x": float("nan")}})]
    assert agent.bodies == []  # nothing went out
    [e async for e in client.run({"threadId": "t1", "runId": "r2", "messages": []})]
    assert agent.bodies[0]["runId"] == "r2"


# -- a normal stream ----------------------------------------------------------------------------

async def test_events_are_typed_ag_ui_models():
    client = in_process(ScriptedAgent(simple_run("r1", reply="hi there")))
    events = await collect(client)
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                             "RUN_FINISHED"]
    assert isinstance(events[0], RunStartedEvent)
    assert isinstance(events[2], TextMessageContentEvent) and events[2].delta == "hi there"
    assert isinstance(events[-1], RunFinishedEvent)


async def test_run_started_flag():
    client = in_process(ScriptedAgent())
    run = client.run(make_input())
    assert run.started is False
    [e async for e in run]
    assert run.started is True


# -- HTTP errors ----------------------------------------------------------------------------------

async def test_http_500_gives_status_and_body_excerpt():
    agent = ScriptedAgent(PlainTextResponse("Internal Server Error: database is down", status_code=500))
    client = in_process(agent)
    events, error = await collect_until_error(client)
    assert isinstance(error, AgentHTTPError)
    assert events == []
    assert error.status == 500
    assert "database is down" in error.body
    assert "HTTP 500" in str(error) and "database is down" in str(error)
    assert error.started is False
    await assert_usable(client)


async def test_http_422_validation_error():
    detail = {"detail": [{"loc": ["body", "threadId"], "msg": "Field required", "type": "missing"}]}
    client = in_process(ScriptedAgent(JSONResponse(detail, status_code=422)))
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentHTTPError)
    assert error.status == 422
    assert "Field required" in error.body
    await assert_usable(client)


async def test_http_error_body_excerpt_is_bounded_and_single_line():
    body = ("line one\n\n   line two\t" + "x" * 50_000).encode()
    client = in_process(ScriptedAgent(Response(body, status_code=503, media_type="text/plain")))
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentHTTPError) and error.status == 503
    assert error.body.startswith("line one line two x")
    assert len(error.body) <= 300
    assert "\n" not in str(error)


async def test_http_error_with_empty_body():
    client = in_process(ScriptedAgent(Response(b"", status_code=404)))
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentHTTPError) and error.status == 404
    assert error.body == ""
    assert str(error) == "the agent answered HTTP 404 Not Found"  # status and its reason


# -- not an event stream -------------------------------------------------------------------------

async def test_json_200_is_a_stream_error_naming_the_content_type():
    client = in_process(ScriptedAgent(JSONResponse({"result": "not a stream"})))
    events, error = await collect_until_error(client)
    assert isinstance(error, AgentStreamError)
    assert events == []
    assert "content-type" in str(error) and "application/json" in str(error)
    assert "not a stream" in str(error)  # body excerpt
    await assert_usable(client)


async def test_missing_content_type_is_a_stream_error():
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": sse(*simple_run())})

    agent = ScriptedAgent(lambda body: _RawAsgi(app))
    client = in_process(agent)
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentStreamError)
    assert "missing" in str(error)
    await assert_usable(client)


class _RawAsgi(Response):
    """A Response wrapping a bare ASGI callable (to send exactly the headers given)."""

    def __init__(self, app) -> None:
        self._app = app

    async def __call__(self, scope, receive, send) -> None:
        await self._app(scope, receive, send)


@pytest.mark.loopback
async def test_endless_non_sse_stream_fails_fast_without_reading_it_all(loopback):
    """A misconfigured URL streaming NDJSON forever must not hang the run or fill memory."""
    closed = threading.Event()

    async def ndjson():
        try:
            for i in range(10_000):
                yield json.dumps({"n": i, "pad": "x" * 100}).encode() + b"\n"
                await asyncio.sleep(0.01)
        finally:
            closed.set()

    agent = ScriptedAgent(StreamingResponse(ndjson(), media_type="application/x-ndjson"))
    client = AgentClient(loopback.mount(agent), read_timeout=5)
    _, error = await asyncio.wait_for(collect_until_error(client), 3)
    assert isinstance(error, AgentStreamError)
    assert "application/x-ndjson" in str(error)
    assert '{"n": 0' in str(error)
    assert await asyncio.to_thread(closed.wait, 5), "the server kept streaming after the client gave up"
    await assert_usable(client)


# -- hostile data lines ---------------------------------------------------------------------------

async def test_malformed_json_data_line_is_a_stream_error_with_excerpt():
    body = sse(started(), "data: {not json at all\n\n", finished())
    client = in_process(ScriptedAgent(body))
    events, error = await collect_until_error(client)
    assert isinstance(error, AgentStreamError)
    assert types(events) == ["RUN_STARTED"]  # what came before is delivered
    assert error.started is True
    assert "not JSON" in str(error) and "{not json at all" in str(error)
    await assert_usable(client)


async def test_huge_malformed_line_error_message_stays_short():
    body = sse(started(), "data: {" + "y" * 2_000_000 + "\n\n")
    client = in_process(ScriptedAgent(body))
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentStreamError)
    assert len(str(error)) < 1000
    await assert_usable(client)


async def test_huge_valid_line_is_delivered_intact():
    delta = "z" * 1_000_000 + "é"
    body = sse(started(), {"type": "TEXT_MESSAGE_START", "messageId": "m"},
               {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": delta},
               {"type": "TEXT_MESSAGE_END", "messageId": "m"}, finished())
    events = await collect(in_process(ScriptedAgent(body)))
    assert events[2].delta == delta
    assert events[-1].type == EventType.RUN_FINISHED


async def test_event_larger_than_the_cap_is_a_stream_error():
    """As @ag-ui/client (MAX_BUFFER_SIZE, 10 MB): one event may not grow without bound."""
    from interrupt_chat.agui.transport import MAX_EVENT_CHARS

    body = sse(started()) + b"data: " + b"x" * (MAX_EVENT_CHARS + 10) + b"\n\n" + sse(finished())
    client = in_process(ScriptedAgent(body))
    events, error = await collect_until_error(client)
    assert isinstance(error, AgentStreamError)
    assert "larger than" in str(error)
    assert types(events) == ["RUN_STARTED"]
    await assert_usable(client)


async def test_many_data_lines_count_towards_the_cap():
    from interrupt_chat.agui.transport import MAX_EVENT_CHARS

    line = b"data: " + b"y" * 1000 + b"\n"
    body = sse(started()) + line * (MAX_EVENT_CHARS // 1000 + 10) + b"\n"
    _, error = await collect_until_error(in_process(ScriptedAgent(body)))
    assert isinstance(error, AgentStreamError) and "larger than" in str(error)


@pytest.mark.loopback
async def test_endless_line_ends_the_run_and_the_connection(loopback):
    closed = threading.Event()

    async def endless():
        try:
            yield sse(started())
            yield b"data: "
            for _ in range(100_000):
                yield b"z" * 65536
                await asyncio.sleep(0)
        finally:
            closed.set()

    client = AgentClient(loopback.mount(ScriptedAgent(StreamingResponse(endless(), media_type="text/event-stream"))))
    events, error = await asyncio.wait_for(collect_until_error(client), 20)
    assert isinstance(error, AgentStreamError) and types(events) == ["RUN_STARTED"]
    assert await asyncio.to_thread(closed.wait, 5)


async def test_last_event_without_a_blank_line_is_discarded():
    """The SSE spec (and httpx-sse): at the end of the body, an unfinished event is discarded."""
    body = sse(started()) + b"data: " + json.dumps(finished()).encode()
    events = await collect(in_process(ScriptedAgent(body)))
    assert types(events) == ["RUN_STARTED"]


async def test_truncated_stream_fails_the_run_with_a_clear_error():
    body = sse(started()) + b'data: {"type": "RUN_FINI'
    session = AgentSession(in_process(ScriptedAgent(body)))
    [event async for event in session.send("hi")]
    assert session.error and "RUN_FINISHED" in session.error  # the verifier: the run never finished
    assert session.transcript.status == "error"


@pytest.mark.parametrize("payload", ["[1, 2]", '"RUN_STARTED"', "42", "null", "true"])
async def test_data_that_is_json_but_not_an_object(payload):
    client = in_process(ScriptedAgent(sse(started(), f"data: {payload}\n\n", finished())))
    events, error = await collect_until_error(client)
    assert isinstance(error, AgentStreamError)
    assert "JSON object" in str(error)
    assert types(events) == ["RUN_STARTED"]
    await assert_usable(client)


async def test_known_type_with_invalid_fields_is_a_stream_error():
    bad = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "outcome": {"type": "interrupt", "interrupts": []}}
    client = in_process(ScriptedAgent(sse(started(), bad)))
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentStreamError)
    assert "RUN_FINISHED" in str(error) and "interrupts" in str(error)
    await assert_usable(client)


async def test_unknown_event_type_is_skipped_with_warning(caplog):
    body = sse(started(), {"type": "FANCY_NEW_THING", "x": 1}, {"type": "THINKING_START"}, {"no": "type"},
               *text("m1", "still here"), finished())
    with caplog.at_level(logging.WARNING, logger=EVENTS_LOG):
        events = await collect(in_process(ScriptedAgent(body)))
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                             "RUN_FINISHED"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("FANCY_NEW_THING" in w for w in warnings)
    assert any("THINKING_START" in w for w in warnings)  # removed in 1.0


async def test_unknown_outcome_type_is_stripped_and_read_as_success(caplog):
    event = {**finished(), "outcome": {"type": "suspended", "interruptIds": ["a"]}}
    with caplog.at_level(logging.WARNING, logger=EVENTS_LOG):
        events = await collect(in_process(ScriptedAgent(sse(started(), event))))
    assert isinstance(events[-1], RunFinishedEvent)
    assert events[-1].outcome is None
    assert any("suspended" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


async def test_known_outcomes_are_kept():
    interrupt = {"id": "i1", "reason": "confirmation", "message": "ok?"}
    body = sse(started("r1"), finished("r1", interrupts=[interrupt]), started("r2"),
               {**finished("r2"), "outcome": {"type": "cancelled"}})
    events = await collect(in_process(ScriptedAgent(body)))
    assert events[1].outcome.type == "interrupt"
    assert events[1].outcome.interrupts[0].id == "i1"
    assert events[3].outcome.type == "cancelled"


async def test_comment_event_id_and_retry_lines_are_ignored():
    body = (b": ping\n\n"
            b": ping - 2026-11-30 12:00:00\n\n"
            b"event: message\nid: 1\nretry: 3000\n" + sse(started()) +
            b"id: 2\n\n"  # an id-only event has no data
            b"event: ping\ndata:\n\n"  # empty data
            b":comment without space\n" + sse(*text("m1", "hi")) +
            b"retry: nonsense\nunknownfield: whatever\n" + sse(finished()))
    events = await collect(in_process(ScriptedAgent(body)))
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                             "RUN_FINISHED"]


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"], ids=["crlf", "cr", "lf"])
async def test_line_endings(newline):
    body = sse(*simple_run(reply="x"), newline=newline) + f": ping{newline}{newline}".encode()
    events = await collect(in_process(ScriptedAgent(body)))
    assert types(events)[0] == "RUN_STARTED" and types(events)[-1] == "RUN_FINISHED"
    assert events[2].delta == "x"


async def test_mixed_line_endings_in_one_stream():
    body = (sse(started(), newline="\r\n") + sse({"type": "TEXT_MESSAGE_START", "messageId": "m"}, newline="\r")
            + sse({"type": "TEXT_MESSAGE_END", "messageId": "m"}) + sse(finished(), newline="\r\n"))
    events = await collect(in_process(ScriptedAgent(body)))
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END", "RUN_FINISHED"]


async def test_multi_line_data_is_joined():
    lines = json.dumps(started(), indent=2).splitlines()
    multi = "".join(f"data: {line}\n" for line in lines) + "\n"
    content = '{"type": "TEXT_MESSAGE_CONTENT",\ndata: "messageId": "m",\ndata: "delta": "two\\nlines"}'
    body = (multi.encode() + sse({"type": "TEXT_MESSAGE_START", "messageId": "m"})
            + f"data: {content}\n\n".encode() + sse({"type": "TEXT_MESSAGE_END", "messageId": "m"}, finished()))
    events = await collect(in_process(ScriptedAgent(body)))
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                             "RUN_FINISHED"]
    assert events[0].run_id == "r1"
    assert events[2].delta == "two\nlines"


async def test_data_without_space_after_colon():
    body = b"data:" + json.dumps(started()).encode() + b"\n\n" + sse(finished())
    events = await collect(in_process(ScriptedAgent(body)))
    assert types(events) == ["RUN_STARTED", "RUN_FINISHED"]


class _Chunked:
    """What the transport reads of a response: the text chunks."""

    def __init__(self, chunks: tuple[str, ...]) -> None:
        self.chunks = chunks

    async def aiter_text(self):
        for piece in self.chunks:
            yield piece


async def _frames(*chunks: str) -> list[str]:
    from interrupt_chat.agui.transport import _Bounded, _Frames

    frames, found = _Frames(), []
    async for piece in _Bounded(_Chunked(chunks)).aiter_text():  # type: ignore[arg-type]
        found += [data for data in frames.feed(piece) if data]
    return found + [data for data in frames.flush() if data]


async def test_sse_framing_is_independent_of_chunk_boundaries():
    body = ("data: a\r\n\r\n: ping\r\rdata: b1\ndata:b2\n\nevent: x\rid: 7\rdata: c\r\r"
            "retry: 5\r\ndata\r\ndata: d\r\n\r\ndata: e")
    expected = ["a", "b1\nb2", "c", "\nd"]  # "e" never ends: discarded
    assert await _frames(body) == expected
    for i in range(len(body) + 1):
        assert await _frames(body[:i], body[i:]) == expected, i
        for j in range(i, len(body) + 1, 5):
            assert await _frames(body[:i], body[i:j], body[j:]) == expected, (i, j)
    assert await _frames(*body) == expected  # one character at a time


# -- queueing -------------------------------------------------------------------------------------

async def test_error_after_many_events_keeps_every_event_in_order():
    """A slow consumer must still see every event before the error (nothing dropped for the verdict)."""
    deltas = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": str(i)} for i in range(400)]
    body = sse(started(), {"type": "TEXT_MESSAGE_START", "messageId": "m"}, *deltas) + b"data: {oops\n\n"
    run = in_process(ScriptedAgent(body)).run(make_input())
    events = []
    with pytest.raises(AgentStreamError):
        async for event in run:
            events.append(event)
            # a consumer slower than the reader: the queue is full when the bad line is read
            await asyncio.sleep(0.3 if len(events) == 1 else 0)
    assert types(events[:2]) == ["RUN_STARTED", "TEXT_MESSAGE_START"]
    assert [e.delta for e in events[2:]] == [str(i) for i in range(400)]


async def test_end_of_stream_after_many_events_keeps_every_event():
    deltas = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": str(i)} for i in range(400)]
    body = sse(started(), {"type": "TEXT_MESSAGE_START", "messageId": "m"}, *deltas,
               {"type": "TEXT_MESSAGE_END", "messageId": "m"}, finished())
    run = in_process(ScriptedAgent(body)).run(make_input())
    events = []
    async for event in run:
        events.append(event)
        await asyncio.sleep(0.3 if len(events) == 1 else 0)
    assert len(events) == 404 and events[-1].type == EventType.RUN_FINISHED


# -- over a real socket ---------------------------------------------------------------------------

@pytest.mark.loopback
async def test_loopback_normal_run_and_request(loopback):
    agent = ScriptedAgent()
    client = AgentClient(loopback.mount(agent))
    events = await collect(client, "r7")
    assert events[0].run_id == "r7" and events[-1].type == EventType.RUN_FINISHED
    assert agent.requests[0].headers["content-type"] == "application/json"
    assert agent.requests[0].headers["accept"] == "text/event-stream"
    assert agent.bodies[0]["protocolVersion"] == "1.0"


@pytest.mark.loopback
async def test_a_transport_the_app_passes_serves_every_run_and_runs_at_once(loopback):
    """The caller owns its transport: no run closes it, not even while another run still reads."""
    slow_reply = Stream([started("slow"), 0.5, finished("slow")])  # still streaming while another run ends
    agent = ScriptedAgent(echo_run, echo_run, slow_reply, echo_run)
    wire = AiohttpTransport(httpx.create_ssl_context())
    client = AgentClient(loopback.mount(agent), transport=wire)
    for run_id in ("r1", "r2"):
        events = await collect(client, run_id)
        assert events[0].run_id == run_id and events[-1].type == EventType.RUN_FINISHED
    slow = aiter(client.run(make_input("slow")))
    first = await anext(slow)  # the slow run is open, mid-stream
    assert (await collect(client, "fast"))[-1].type == EventType.RUN_FINISHED  # a run ends meanwhile
    rest = await asyncio.wait_for(_drain(slow), 10)  # closing the transport under it left it hanging
    assert first.type == EventType.RUN_STARTED and rest[-1].type == EventType.RUN_FINISHED
    await wire.aclose()


@pytest.mark.loopback
async def test_agent_down_gives_connection_error_then_recovers():
    port = free_port()
    client = AgentClient(f"http://127.0.0.1:{port}/run", connect_timeout=2)
    events, error = await collect_until_error(client)
    assert isinstance(error, AgentConnectionError)
    assert events == [] and error.started is False
    assert f"127.0.0.1:{port}" in str(error)
    with serve_in_thread(ScriptedAgent(), bound_socket(port)):
        await assert_usable(client)


@pytest.mark.loopback
async def test_loopback_http_500_then_recovers(loopback):
    client = AgentClient(loopback.mount(ScriptedAgent(PlainTextResponse("kaputt", status_code=500))))
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentHTTPError) and error.status == 500 and error.body == "kaputt"
    await assert_usable(client)


@pytest.mark.loopback
async def test_loopback_sse_split_across_tcp_reads():
    """Frames, lines and a multi-byte UTF-8 character split over many small TCP writes."""
    payload = sse(started(), {"type": "TEXT_MESSAGE_START", "messageId": "m"},
                  {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "grüße €"}, newline="\r\n")
    payload += sse({"type": "TEXT_MESSAGE_END", "messageId": "m"}, finished(), newline="\r")

    def trickle(conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.sendall(SSE_HEAD_CHUNKED)
        for i in range(0, len(payload), 7):
            conn.sendall(chunk(payload[i:i + 7]))
            threading.Event().wait(0.001)
        conn.sendall(b"0\r\n\r\n")

    with RawServer(trickle) as server:
        events = await collect(AgentClient(server.url))
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                             "RUN_FINISHED"]
    assert events[2].delta == "grüße €"


def burst_then_end(burst: int) -> tuple[list[dict], object]:
    """A reply that writes ``burst`` deltas in one write, pauses, then ends the message and the run."""
    head = [started(), {"type": "TEXT_MESSAGE_START", "messageId": "m"},
            *[{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{i} "} for i in range(burst)]]
    tail = [{"type": "TEXT_MESSAGE_END", "messageId": "m"}, finished()]

    def reply(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD_CHUNKED + chunk(sse(*head)))
        threading.Event().wait(0.2)
        conn.sendall(chunk(sse(*tail)) + b"0\r\n\r\n")

    return head + tail, reply


@pytest.mark.loopback
async def test_batches_hold_what_was_read_together():
    """``AgentRun.batches()``: the events in order, grouped by what was already read (a burst is few batches)."""
    sent, reply = burst_then_end(200)
    with RawServer(reply) as server:
        batches = [batch async for batch in AgentClient(server.url).run(make_input()).batches()]
    events = [event for batch in batches for event in batch]
    assert [e.model_dump(by_alias=True, exclude_none=True, mode="json") for e in events] == sent
    assert all(batches) and len(batches) < 20  # 202 events came in one write, then 2 after a pause
    assert max(map(len, batches)) <= MAX_BATCH_EVENTS  # a burst comes in pieces: the reader yields between them
    assert batches[-1][-1].type == EventType.RUN_FINISHED


@pytest.mark.loopback
async def test_batches_end_with_the_failure_after_the_events_before_it():
    def drop(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD_CHUNKED + chunk(sse(started(), *text("m1", "partial")[:2])))
        conn.shutdown(socket.SHUT_RDWR)

    with RawServer(drop) as server:
        run, got = AgentClient(server.url).run(make_input()), []
        with pytest.raises(AgentConnectionError) as info:
            async for batch in run.batches():
                got += batch
    assert types(got) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
    assert info.value.started is True


@pytest.mark.loopback
async def test_drop_mid_stream_incomplete_chunked_body():
    def drop(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD_CHUNKED + chunk(sse(started(), *text("m1", "partial")[:2])))
        conn.shutdown(socket.SHUT_RDWR)

    with RawServer(drop, good_chunked_reply(*simple_run("r-ok"))) as server:
        client = AgentClient(server.url)
        events, error = await collect_until_error(client)
        assert isinstance(error, AgentConnectionError)
        assert "dropped" in str(error)
        assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
        assert error.started is True
        await assert_usable(client)


@pytest.mark.loopback
async def test_drop_mid_stream_connection_reset():
    def rst(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD_CHUNKED + chunk(sse(started())))
        threading.Event().wait(0.1)
        reset(conn)

    with RawServer(rst, good_chunked_reply(*simple_run("r-ok"))) as server:
        client = AgentClient(server.url)
        events, error = await collect_until_error(client)
        assert isinstance(error, AgentConnectionError)
        assert types(events) == ["RUN_STARTED"]
        await assert_usable(client)


@pytest.mark.loopback
async def test_stream_closed_without_framing_ends_the_event_sequence():
    """No Content-Length, no chunking: the close is the end of the body. The transport cannot tell
    a drop from the end; the events simply stop (the session catches the unfinished run)."""
    def until_close(conn: socket.socket) -> None:
        conn.sendall(SSE_HEAD_UNTIL_CLOSE + sse(started(), *text("m1", "cut")))

    with RawServer(until_close) as server:
        events = await collect(AgentClient(server.url))
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


@pytest.mark.loopback
async def test_drop_mid_stream_when_agent_generator_raises(loopback):
    stream = Stream([started(), *text("m1", "hi"), RuntimeError("agent crashed")])
    client = AgentClient(loopback.mount(ScriptedAgent(stream)))
    events, error = await collect_until_error(client)
    assert isinstance(error, AgentConnectionError)
    assert types(events) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    await assert_usable(client)


@pytest.mark.loopback
async def test_slow_agent_hits_read_timeout(loopback):
    stream = Stream([started(), 3.0, finished()])
    client = AgentClient(loopback.mount(ScriptedAgent(stream)), read_timeout=0.3)
    events, error = await asyncio.wait_for(collect_until_error(client), 3)
    assert isinstance(error, AgentTimeoutError)
    assert "timed out waiting for the agent" in str(error)
    assert types(events) == ["RUN_STARTED"] and error.started is True
    assert await asyncio.to_thread(stream.disconnected.wait, 5), "the server never saw the client leave"
    await assert_usable(client)


@pytest.mark.loopback
async def test_read_timeout_after_many_reads_is_the_transports_own_check(loopback):
    """After the head, aiohttp's per-read timer is off and the body's idle check takes over: a stall
    after several paced reads still fails within 1 to 1½ read timeouts of the last byte."""
    stream = Stream([started(), 0.05, *text("m1", "a"), 0.05, *text("m2", "b"), 0.05, *text("m3", "c"), 3.0,
                     finished()])
    client = AgentClient(loopback.mount(ScriptedAgent(stream)), read_timeout=0.4)
    loop = asyncio.get_running_loop()
    last = 0.0
    events: list = []

    async def read() -> None:
        nonlocal last
        async for event in client.run(make_input()):
            events.append(event)
            last = loop.time()

    with pytest.raises(AgentTimeoutError, match="timed out waiting for the agent"):
        await asyncio.wait_for(read(), 3)
    waited = loop.time() - last
    assert types(events)[-1] == "TEXT_MESSAGE_END" and len(events) == 10
    assert 0.35 <= waited < 1.2, waited
    await assert_usable(client)


@pytest.mark.loopback
async def test_a_busy_consumer_is_not_a_read_timeout(loopback):
    """Time the reader spends elsewhere does not count: the agent wrote more events at once than the
    run queues, the consumer stops for three read timeouts after the first, and the run still ends."""
    deltas = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"x{i} "} for i in range(100)]
    stream = Stream([started(), {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}, *deltas,
                     {"type": "TEXT_MESSAGE_END", "messageId": "m1"}, finished()])
    client = AgentClient(loopback.mount(ScriptedAgent(stream)), read_timeout=0.2)
    events = []
    async for event in client.run(make_input()):
        events.append(event)
        if len(events) == 1:
            await asyncio.sleep(0.6)
    assert len(events) == 104 and types(events)[-1] == "RUN_FINISHED"


@pytest.mark.loopback
async def test_read_pause_reads_a_paced_stream_in_bigger_pieces_and_is_not_read_timeout(loopback):
    """``read_pause`` (a busy worker's): the client waits after each read, so the events the agent
    wrote meanwhile come in one read, as one batch. The pause is longer than the read timeout and
    still no timeout: the reader was not waiting for the agent."""
    deltas = []
    for i in range(12):
        deltas += [0.03, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"d{i} "}]
    stream = Stream([started(), {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}, *deltas,
                     {"type": "TEXT_MESSAGE_END", "messageId": "m1"}, finished()])
    pauses: list[float] = []

    def pause() -> float:
        pauses.append(0.15)
        return 0.15

    client = AgentClient(loopback.mount(ScriptedAgent(stream)), read_timeout=0.1, read_pause=pause)
    batches = [batch async for batch in client.run(make_input()).batches()]
    events = [event for batch in batches for event in batch]
    assert types(events)[-1] == "RUN_FINISHED" and len(events) == 16
    assert "".join(e.delta for e in events if e.type == "TEXT_MESSAGE_CONTENT") == "".join(f"d{i} " for i in range(12))
    assert len(batches) <= 6 < len(events)  # 12 deltas written 30 ms apart, read every 150 ms
    assert len(batches) - 1 <= len(pauses) <= len(batches)  # once per read; none once the run's end is read


@pytest.mark.loopback
async def test_read_at_holds_the_next_read_until_then_and_gets_what_was_written_meanwhile(loopback):
    """``AgentRun.read_at`` (a busy consumer's next tick): the next read does not start before it, so
    the deltas written meanwhile come as one batch; once it has passed, the client's pause (none) rules."""
    deltas = []
    for i in range(10):
        deltas += [0.03, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"d{i} "}]
    stream = Stream([started(), {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}, *deltas,
                     {"type": "TEXT_MESSAGE_END", "messageId": "m1"}, finished()])
    run = AgentClient(loopback.mount(ScriptedAgent(stream))).run(make_input())
    loop = asyncio.get_running_loop()
    batches: list[tuple[float, list]] = []
    async for batch in run.batches():
        batches.append((loop.time(), batch))
        if len(batches) == 1:
            run.read_at = loop.time() + 0.2  # the deltas, 30 ms apart, are written meanwhile
    events = [event for _, batch in batches for event in batch]
    assert types(events)[-1] == "RUN_FINISHED" and len(events) == 14
    assert batches[1][0] - batches[0][0] >= 0.19
    assert len(batches[1][1]) >= 4  # at least four deltas' worth in the read made at that time


@pytest.mark.loopback
async def test_a_held_read_ends_when_the_run_does(loopback):
    """A read held for a busy consumer's tick (``read_at``) is not kept when the agent ends its run meanwhile:
    the body's end wakes it (the ``RUN_FINISHED`` that asks a person is read at once, decision 0030)."""
    stream = Stream([started(), {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
                     {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hi"}, 0.05,
                     {"type": "TEXT_MESSAGE_END", "messageId": "m1"}, finished()])
    run = AgentClient(loopback.mount(ScriptedAgent(stream))).run(make_input())
    loop = asyncio.get_running_loop()
    events, ended_at, tick = [], 0.0, 0.0
    async for batch in run.batches():
        events += batch
        ended_at = loop.time()
        if not tick:
            tick = run.read_at = loop.time() + 30.0  # a tick far away
    assert types(events)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert ended_at < tick - 25  # read as the body ended, not at the tick


@pytest.mark.loopback
async def test_slow_first_byte_hits_read_timeout(loopback):
    stream = Stream([2.0, *simple_run()])
    client = AgentClient(loopback.mount(ScriptedAgent(stream)), read_timeout=0.3)
    _, error = await asyncio.wait_for(collect_until_error(client), 3)
    assert isinstance(error, AgentTimeoutError)
    assert error.started is False
    await assert_usable(client)


def ticking_stream(ticks: int = 200, every: float = 0.05) -> Stream:
    items: list = [started(), {"type": "TEXT_MESSAGE_START", "messageId": "m"}]
    for i in range(ticks):
        items += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"{i} "}, every]
    return Stream([*items, {"type": "TEXT_MESSAGE_END", "messageId": "m"}, finished()])


@pytest.mark.loopback
async def test_cancel_mid_stream_from_another_task(loopback):
    stream = ticking_stream()
    client = AgentClient(loopback.mount(ScriptedAgent(stream)))
    run = client.run(make_input())
    seen: list = []

    async def consume():
        async for event in run:
            seen.append(event)

    task = asyncio.create_task(consume())
    while len(seen) < 4:
        await asyncio.sleep(0.01)
    run.cancel()
    with pytest.raises(RunCancelled) as info:
        await asyncio.wait_for(task, 1.5)
    assert info.value.started is True
    assert run.cancelled is True
    assert await asyncio.to_thread(stream.disconnected.wait, 5), "the agent kept streaming after cancel"
    assert stream.sent < 100
    await assert_usable(client)


@pytest.mark.loopback
async def test_cancel_stops_delivery_of_already_buffered_events(loopback):
    """After cancel() the next step raises, even when events are already read."""
    burst = Stream([started(), {"type": "TEXT_MESSAGE_START", "messageId": "m"},
                    *[{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"} for _ in range(100)], 3.0,
                    {"type": "TEXT_MESSAGE_END", "messageId": "m"}, finished()])
    client = AgentClient(loopback.mount(ScriptedAgent(burst)))
    run = client.run(make_input())
    iterator = aiter(run)
    first = await anext(iterator)
    assert first.type == EventType.RUN_STARTED
    second = await anext(iterator)  # more of the burst may be read already
    assert second.type == EventType.TEXT_MESSAGE_START
    run.cancel()
    with pytest.raises(RunCancelled):
        await anext(iterator)
    assert await asyncio.to_thread(burst.disconnected.wait, 5)


@pytest.mark.loopback
async def test_cancel_while_waiting_for_first_byte(loopback):
    stream = Stream([2.0, *simple_run()])
    client = AgentClient(loopback.mount(ScriptedAgent(stream)))
    run = client.run(make_input())
    task = asyncio.create_task(anext(aiter(run)))
    await asyncio.sleep(0.2)
    run.cancel()
    with pytest.raises(RunCancelled) as info:
        await asyncio.wait_for(task, 1)
    assert info.value.started is False


class _Swallowing(httpx.AsyncBaseTransport):
    """A real HTTP transport that swallows the first cancellation while it connects, as httpcore's can."""

    def __init__(self) -> None:
        self.inner, self.swallowed = httpx.AsyncHTTPTransport(), 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            await asyncio.sleep(0.5)
        except asyncio.CancelledError:
            self.swallowed += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.loopback
async def test_cancel_still_stops_a_run_whose_http_client_swallowed_it(loopback):
    stream = Stream([3.0, *simple_run()])
    transport = _Swallowing()
    run = AgentClient(loopback.mount(ScriptedAgent(stream)), transport=transport).run(make_input())
    task = asyncio.create_task(anext(aiter(run)))
    await asyncio.sleep(0.1)
    run.cancel()
    with pytest.raises(RunCancelled):
        await asyncio.wait_for(task, 2)  # made again while the run still waits, long before the agent's 3 s
    assert transport.swallowed == 1
    assert task.cancelling() == 0  # the stop's cancellations were undone: none leaks into the consumer
    await transport.aclose()


async def test_cancel_before_iterating_sends_nothing():
    agent = ScriptedAgent()
    run = in_process(agent).run(make_input())
    run.cancel()
    with pytest.raises(RunCancelled):
        [e async for e in run]
    await asyncio.sleep(0.05)
    assert agent.requests == []


async def test_cancel_is_idempotent_and_a_no_op_after_the_end():
    run = in_process(ScriptedAgent()).run(make_input())
    events = [e async for e in run]
    run.cancel()
    run.cancel()
    assert events[-1].type == EventType.RUN_FINISHED


@pytest.mark.loopback
async def test_breaking_out_of_the_loop_closes_the_response(loopback):
    stream = ticking_stream()
    client = AgentClient(loopback.mount(ScriptedAgent(stream)))
    run = client.run(make_input())
    iterator = aiter(run)
    async for event in iterator:
        if event.type == EventType.TEXT_MESSAGE_CONTENT:
            break
    await iterator.aclose()
    assert await asyncio.to_thread(stream.disconnected.wait, 5)


@pytest.mark.loopback
async def test_explicit_http_transport_is_reusable_across_runs(loopback):
    url = loopback.mount(ScriptedAgent(PlainTextResponse("no", status_code=500)))
    client = AgentClient(url, transport=httpx.AsyncHTTPTransport())
    _, error = await collect_until_error(client)
    assert isinstance(error, AgentHTTPError)
    await assert_usable(client, "r2")
    await assert_usable(client, "r3")
