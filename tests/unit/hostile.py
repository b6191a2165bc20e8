"""Hostile producers for ``test_hostile_agent.py``: the case model, wire builders and the runner.

A :class:`Case` names one hostile reply (or server behaviour) and what the client must make of
it. :func:`run_case` plays it against the real protocol core (``AgentSession`` ->
``AgentClient`` -> httpx) over real loopback HTTP:

1. a first good run ("hello" -> a reply) builds the history; a resume-phase case then runs a
   turn that ends with a standard interrupt and resolves it (``session.tracker.resolve``);
2. the hostile run (``send`` or ``submit``), time bounded; no exception may escape it;
3. the verdict: a short, plain, one-line error matching the case, or no error at all; the
   history before the hostile run unchanged; for a resume, S15's pending set, answers and seal;
4. the case's own check (it may run more turns);
5. recovery: for a failed resume a fresh resolve + submit that clears the pending set, then a
   plain good run whose request is clean JSON, UTF-8 all through, with unique message ids.

The hostile reply (``Case.reply``) is one of:

- what :class:`~tests.unit.agents.ScriptedAgent` answers with (events, raw bytes, a Starlette
  response, a :class:`~tests.unit.agents.Stream`, or a function of the request body giving one);
- :class:`Raw`: a :class:`~tests.unit.agents.RawServer` handler ``(conn, body) -> None`` writing
  exact bytes (drops, resets, broken HTTP);
- :class:`Refused`: a URL where nothing listens;
- :class:`Mounted`: a function of the ``loopback`` fixture giving the reply (redirect targets).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import json
import re
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import psutil
import pytest
from ag_ui.core import BaseEvent

from interrupt_chat.agui import AgentClient, AgentSession
from interrupt_chat.agui.sanitize import MAX_ERROR_CHARS
from tests.unit.agents import RawServer, Recorded, ScriptedAgent, free_port, tool_call, tool_result

EVENT_STREAM = "text/event-stream"
HELLO, HELLO_REPLY, AFTER, AFTER_REPLY = "hello", "hi there", "one more thing", "after the storm"
MB = 1024 * 1024
MEMORY_LIMIT = 50 * MB

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
SCHEMA = {"type": "object", "properties": {"approved": {"type": "boolean"}}}


# -- wire builders ---------------------------------------------------------------------------------

def frame(event: dict | str, newline: str = "\n") -> bytes:
    """One SSE event: a dict as ``data: <json>``, a str as the data line's text."""
    data = event if isinstance(event, str) else json.dumps(event)
    return f"data: {data}{newline}{newline}".encode("utf-8", "surrogatepass")


def frames(*events: dict | str | bytes, newline: str = "\n") -> bytes:
    """Several SSE events; bytes are written verbatim."""
    return b"".join(e if isinstance(e, bytes) else frame(e, newline) for e in events)


def st(body: dict | None, **extra: Any) -> dict:
    """RUN_STARTED echoing the request's thread and run ids."""
    body = body or {}
    return {"type": "RUN_STARTED", "threadId": body.get("threadId", "t1"), "runId": body.get("runId", "r1"), **extra}


def fin(body: dict | None, interrupts: list[dict] | None = None, **extra: Any) -> dict:
    """RUN_FINISHED echoing the ids; with ``interrupts`` the standard interrupt outcome."""
    body = body or {}
    event = {"type": "RUN_FINISHED", "threadId": body.get("threadId", "t1"), "runId": body.get("runId", "r1"),
             **extra}
    if interrupts is not None:
        event["outcome"] = {"type": "interrupt", "interrupts": interrupts}
    return event


def start(message_id: str, role: str = "assistant") -> dict:
    return {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": role}


def delta(message_id: str, text: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text}


def end(message_id: str) -> dict:
    return {"type": "TEXT_MESSAGE_END", "messageId": message_id}


def msg(message_id: str, *deltas: str) -> list[dict]:
    """A whole text message: start, one content event per delta, end."""
    return [start(message_id), *(delta(message_id, d) for d in deltas), end(message_id)]


def call_start(call_id: str, name: str = "lookup", parent: str | None = None) -> dict:
    event = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
    if parent:
        event["parentMessageId"] = parent
    return event


def call_args(call_id: str, text: str) -> dict:
    return {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": text}


def call_end(call_id: str) -> dict:
    return {"type": "TOOL_CALL_END", "toolCallId": call_id}


def run_err(message: str = "the model exploded", code: str | None = None) -> dict:
    event = {"type": "RUN_ERROR", "message": message}
    if code is not None:
        event["code"] = code
    return event


def interrupt(id_: str, **extra: Any) -> dict:
    return {"id": id_, "reason": "tool_call", "message": "Delete the files?", "responseSchema": SCHEMA, **extra}


def legacy(value: Any) -> dict:
    return {"type": "CUSTOM", "name": "on_interrupt", "value": value}


def deep_text(depth: int, leaf: str = "1") -> str:
    """JSON text nesting ``depth`` arrays (built as text: deep enough to break any recursion)."""
    return "[" * depth + leaf + "]" * depth


def run_of(*items: dict) -> Callable[[dict], list[dict]]:
    """A reply: RUN_STARTED, ``items``, RUN_FINISHED (ids echoed from the request)."""
    return lambda body: [st(body), *items, fin(body)]


def raw_of(build: Callable[[dict], bytes | str]) -> Callable[[dict], bytes]:
    """A reply written verbatim as the text/event-stream body, built from the request body."""
    def reply(body: dict) -> bytes:
        data = build(body or {})
        return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return reply


def interrupt_run(body: dict, count: int) -> list[dict]:
    """The turn a resume-phase case answers: a message, ``count`` tool calls, one interrupt per call."""
    events = [st(body), *msg("m-ask", "I need your approval.")]
    for i in range(count):
        events += tool_call(f"call-{i}", "delete_files", {"count": i + 1}, parent="m-ask")
    return [*events, fin(body, [interrupt(f"int-{i}", toolCallId=f"call-{i}") for i in range(count)])]


def resumed_run(body: dict, count: int) -> list[dict]:
    """A good answer to a resume: every tool call's result, a closing message."""
    return [st(body), *(tool_result(f"tool-{i}", f"call-{i}", "deleted") for i in range(count)),
            *msg("m-resumed", "All done."), fin(body)]


def echo(reply: str) -> Callable[[dict], list[dict]]:
    return lambda body: [st(body), *msg(f"{body['runId']}-m", reply), fin(body)]


# -- server behaviours -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Raw:
    """A bare TCP server for the hostile request: ``handler(conn, body)`` writes exact bytes."""

    handler: Callable[[socket.socket, dict | None], None]


@dataclass(frozen=True)
class Refused:
    """Nothing listens at this URL (``{port}`` is a free port)."""

    template: str = "http://127.0.0.1:{port}/agent"


@dataclass(frozen=True)
class Mounted:
    """The reply is built from the ``loopback`` fixture (e.g. a redirect to another mounted agent)."""

    build: Callable[[Any], Any]


class _RawServer(RawServer):
    """:class:`RawServer` that stops at once (its accept loop otherwise polls every 0.2 s)."""

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        super().__exit__(*exc)


def request_body(raw: bytes) -> dict | None:
    try:
        return json.loads(raw.partition(b"\r\n\r\n")[2])
    except ValueError:
        return None


# -- the case model -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One hostile producer.

    Attributes:
        name: the pytest id, ``<class>-<what>``.
        reply: the hostile reply or server behaviour (see the module doc).
        error: a regex the session's error must match; None when the input is acceptable.
        check: an extra check ``check(ctx)`` (may be async, may run more turns).
        phase: ``send`` (the hostile reply answers a new message) or ``resume`` (it answers the
            resume request of an interrupted turn).
        before_start: resume cases that fail: whether the failure comes before RUN_STARTED (S15).
        interrupts: resume cases: how many interrupts the interrupted turn raises.
        read_timeout: the client's read timeout for the hostile run.
        timeout: seconds the whole case may take.
        memory: measure the hostile run: tracemalloc peak and RSS growth under 50 MB.
        keeps_history: False only where the agent is entitled to rewrite the history.
        bug: a core bug this case shows (the case is then a strict xfail).
    """

    name: str
    reply: Any
    error: str | None = None
    check: Callable[[Ctx], Any] | None = None
    phase: Literal["send", "resume"] = "send"
    before_start: bool = True
    interrupts: int = 1
    read_timeout: float = 10.0
    timeout: float = 20.0
    memory: bool = False
    keeps_history: bool = True
    bug: str | None = None


def params(cases: Iterable[Case]) -> list[Any]:
    """The cases as pytest params named after the case; a known bug makes a strict xfail."""
    out = []
    for case in cases:
        marks = [pytest.mark.xfail(strict=True, reason=f"BUG: {case.bug}")] if case.bug else []
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


@dataclass
class Ctx:
    """What a case's check can see and do."""

    case: Case
    session: AgentSession
    agent: ScriptedAgent
    loopback: Any
    history: list[tuple[str, str, str]] = field(default_factory=list)
    events: list[BaseEvent] = field(default_factory=list)
    interrupt_ids: list[str] = field(default_factory=list)
    interrupt_run_id: str | None = None
    answers: dict[str, Any] = field(default_factory=dict)
    hostile_request: Recorded | None = None

    @property
    def messages(self) -> list:
        return self.session.transcript.messages

    def message(self, message_id: str):
        found = self.session.transcript.message(message_id)
        assert found is not None, f"no message {message_id!r} in {[m.id for m in self.messages]}"
        return found

    def content(self, message_id: str) -> str:
        return self.message(message_id).content

    async def run(self, stream) -> list[BaseEvent]:
        """Iterate a run to its end; any exception escaping the core fails the case."""
        return await drain(stream)

    async def run_next(self, reply: Any, text: str = "and now?") -> list[BaseEvent]:
        """Send one more message answered by ``reply``; it must succeed."""
        self.agent.then(reply)
        events = await drain(self.session.send(text))
        assert self.session.error is None, self.session.error
        return events


async def drain(stream) -> list[BaseEvent]:
    events = []
    try:
        async for event in stream:
            events.append(event)
    except Exception as exc:  # noqa: BLE001 - the point: nothing may escape the session
        pytest.fail(f"an exception escaped the session: {type(exc).__name__}: {str(exc)[:300]}")
    return events


# -- verdicts ----------------------------------------------------------------------------------------

def assert_readable(error: str | None, pattern: str) -> None:
    """A short, plain, one-line error that says what ``pattern`` says.

    ``<…>`` from the agent stays as written (issue 26: "expected <class 'int'>"): the page draws it as text.
    """
    assert error, "the run failed silently: no error"
    assert len(error) <= MAX_ERROR_CHARS, f"{len(error)} characters: {error[:200]!r}…"
    assert not _CONTROL.search(error), f"control characters in {error!r}"
    assert not _LONE_SURROGATE.search(error), f"a lone surrogate in {error!r}"
    assert re.search(pattern, error, re.IGNORECASE | re.DOTALL), f"{error!r} does not match {pattern!r}"


def assert_utf8(value: Any) -> None:
    """``value`` (JSON data) holds no string, key included, that cannot be encoded as UTF-8.

    Walks the value (each distinct string once) instead of serialising it: a hostile state can
    hold one big string many times over.
    """
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if id(item) not in seen:
                seen.add(id(item))
                item.encode("utf-8")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def assert_clean_request(request: Recorded) -> dict:
    """A request the agent can read: UTF-8 JSON whose messages are UTF-8 and have unique ids."""
    request.raw.decode("utf-8")
    body = json.loads(request.raw, parse_constant=_not_json)  # strict JSON: no NaN / Infinity tokens
    assert isinstance(body, dict) and isinstance(body.get("messages"), list), body
    json.dumps(body["messages"]).encode("utf-8")
    assert_utf8(body)
    ids = [m["id"] for m in body["messages"]]
    assert len(ids) == len(set(ids)), f"message ids sent twice: {sorted(i for i in ids if ids.count(i) > 1)}"
    return body


def _not_json(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def view(session: AgentSession) -> list[tuple[str, str, str]]:
    return [(m.id, m.role, m.content) for m in session.transcript.messages]


def resolve_all(session: AgentSession, ids: list[str]):
    """Approve every open interrupt (answers kept by S15 may already cover some)."""
    decision = None
    for interrupt_id in ids:
        decision = session.tracker.resolve({"approved": True}, interrupt_id=interrupt_id)
        if decision.kind == "resume":
            return decision
    raise AssertionError(f"no resume decision after answering {ids}: {decision}")


class _MemoryWatch:
    """tracemalloc peak and sampled RSS growth of the process while the hostile run streams."""

    def __init__(self) -> None:
        self._process = psutil.Process()
        self._stop = threading.Event()
        self.rss_start = self.rss_peak = 0
        self._thread = threading.Thread(target=self._sample, daemon=True, name="rss-sampler")

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.rss_peak = max(self.rss_peak, self._process.memory_info().rss)
            time.sleep(0.002)

    def __enter__(self) -> _MemoryWatch:
        gc.collect()
        self.rss_start = self.rss_peak = self._process.memory_info().rss
        tracemalloc.start()
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(2)
        self.traced_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        self.rss_peak = max(self.rss_peak, self._process.memory_info().rss)


# -- the runner --------------------------------------------------------------------------------------

async def run_case(case: Case, loopback: Any) -> None:
    """Play ``case`` (steps 1-5 of the module doc), all of it within ``case.timeout`` seconds."""
    await asyncio.wait_for(_play(case, loopback), case.timeout)


async def _play(case: Case, loopback: Any) -> None:
    agent = ScriptedAgent(echo(HELLO_REPLY), default=echo(AFTER_REPLY))
    url = loopback.mount(agent)
    # The runs around the hostile one share one httpx transport (an SSL context costs ~25 ms per
    # client); the hostile run itself goes through a default AgentClient, as in production.
    client = AgentClient(url, connect_timeout=5, transport=httpx.AsyncHTTPTransport())
    session = AgentSession(client, thread_id="thread-hostile")
    ctx = Ctx(case, session, agent, loopback)

    # 1. the history: a good first run (and, to resume, an interrupted turn)
    await ctx.run(session.send(HELLO, message_id="u-hello"))
    assert session.error is None and view(session)[0] == ("u-hello", "user", HELLO)
    if case.phase == "resume":
        agent.then(lambda body: interrupt_run(body, case.interrupts))
        await ctx.run(session.send("delete my files", message_id="u-delete"))
        pending = session.tracker.pending
        assert session.error is None and pending is not None and len(pending.ids) == case.interrupts
        ctx.interrupt_ids, ctx.interrupt_run_id = pending.ids, pending.run_id
        decision = resolve_all(session, ctx.interrupt_ids)
        ctx.answers = {k: v.model_dump() for k, v in session.tracker.answers.items()}
        assert session.tracker.sealed  # S10
        hostile = session.submit(decision)
    else:
        hostile = session.send("hostile turn", message_id="u-hostile")
    ctx.history = view(session)
    if case.phase == "send":
        ctx.history = ctx.history[:-1]  # the hostile turn's own user message is not history yet
    requests_before = len(agent.requests)

    # 2. the hostile run
    reply, raw_server, hostile_url = case.reply, None, url
    if isinstance(reply, Mounted):
        reply = reply.build(loopback)
    if isinstance(reply, Raw):
        handler = reply.handler
        raw_server = _RawServer(lambda conn: handler(conn, request_body(raw_server.requests[-1])))
        hostile_url = raw_server.url
    elif isinstance(reply, Refused):
        hostile_url = reply.template.format(port=free_port())
    else:
        agent.then(reply)
    session.client = AgentClient(hostile_url, connect_timeout=5, read_timeout=case.read_timeout)
    try:
        if raw_server is not None:
            raw_server.__enter__()
        if case.memory:
            with _MemoryWatch() as watch:
                ctx.events = await ctx.run(hostile)
            assert watch.traced_peak < MEMORY_LIMIT, f"tracemalloc peak {watch.traced_peak / MB:.1f} MB"
            growth = watch.rss_peak - watch.rss_start
            assert growth < MEMORY_LIMIT, f"RSS grew by {growth / MB:.1f} MB"
        else:
            ctx.events = await ctx.run(hostile)
    finally:
        if raw_server is not None:
            raw_server.__exit__(None, None, None)
        session.client = client
    if len(agent.requests) > requests_before:
        ctx.hostile_request = agent.requests[requests_before]
    assert not session.running

    # 3. the verdict
    if case.error is not None:
        assert_readable(session.error, case.error)
        assert session.transcript.status == "error", session.transcript.status
        assert session.transcript.error == session.error
    else:
        assert session.error is None, f"acceptable input failed the run: {session.error}"
    if case.keeps_history:
        assert view(session)[:len(ctx.history)] == ctx.history, "the hostile run rewrote the history"
    assert_utf8([list(v) for v in view(session)])
    assert_utf8(session.transcript.state)
    if case.phase == "resume" and case.error is not None:
        tracker = session.tracker
        assert tracker.pending is not None, "S15: the interrupts are still owed"
        assert tracker.pending.ids == ctx.interrupt_ids  # S15
        assert tracker.pending.run_id == ctx.interrupt_run_id  # S15: the next parentRunId
        assert not tracker.sealed  # S10, S15: the person can answer again
        if case.before_start:
            assert {k: v.model_dump() for k, v in tracker.answers.items()} == ctx.answers  # S15
        else:
            assert tracker.answers == {}  # S15
    elif case.phase == "resume":
        assert session.tracker.pending is None and session.transcript.status == "finished"

    # 4. the case's own check
    if case.check is not None:
        outcome = case.check(ctx)
        if inspect.isawaitable(outcome):
            await outcome

    # 5. recovery
    if case.phase == "resume" and case.error is not None:
        decision = resolve_all(session, ctx.interrupt_ids)
        agent.then(lambda body: resumed_run(body, case.interrupts))
        await ctx.run(session.submit(decision))
        assert session.error is None, session.error
        assert session.tracker.pending is None
        body = assert_clean_request(agent.requests[-1])
        assert body["parentRunId"] == ctx.interrupt_run_id  # S12
        assert [entry["interruptId"] for entry in body["resume"]] == ctx.interrupt_ids  # S7
        assert ctx.content("m-resumed") == "All done."
    count = len(agent.requests)
    await ctx.run(session.send(AFTER, message_id="u-after"))
    assert session.error is None, f"the next run failed: {session.error}"
    assert session.transcript.status == "finished"
    assert len(agent.requests) == count + 1
    body = assert_clean_request(agent.requests[-1])
    assert body["threadId"] == "thread-hostile"
    sent = [(m["id"], m["role"], m.get("content")) for m in body["messages"]]
    assert sent[-1] == ("u-after", "user", AFTER)
    if case.keeps_history:
        assert sent[0] == ("u-hello", "user", HELLO)
    last = session.transcript.messages[-1]
    assert (last.role, last.content) == ("assistant", AFTER_REPLY)
