"""HTTP POST + SSE transport: one ``RunAgentInput`` in, typed ``ag_ui.core`` events out.

``httpx`` does the HTTP (on aiohttp's wire, its connections kept alive: :mod:`.aiohttp_transport`) and
``httpx-sse`` frames the SSE body, exactly to the SSE standard (CR/LF/CRLF, multi-line ``data:``, comments such as
sse-starlette's ``: ping``); this module adds a size cap per event (:class:`_Bounded`), the AG-UI
rules, and turns every failure into an :class:`~interrupt_chat.agui.errors.AgentError` subclass
with a message a person can act on (the ``httpx`` error kept as its cause).

A run is read in its consumer's task (no reader task between them: one turn of the event loop
less per read on a busy worker); :meth:`AgentRun.cancel` works from any task (a stop button's
handler): it interrupts the consumer's wait, which closes the HTTP response.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import json
import logging
import re
import ssl
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
from ag_ui.core import BaseEvent, RunAgentInput
from httpx_sse import aconnect_sse
from httpx_sse._decoders import SSELineDecoder  # httpx-sse's line splitter, driven per read

from .aiohttp_transport import HOLD, InvalidHTTP, shared_transport
from .errors import (
    AgentConfigurationError,
    AgentConnectionError,
    AgentError,
    AgentHTTPError,
    AgentStreamError,
    AgentTimeoutError,
    MalformedEvent,
    RunCancelled,
)
from .events import RUN_ENDS, parse_delta_json, parse_event, parse_snapshot_json
from .request_body import MessageJson, encode
from .sanitize import MAX_DEPTH, SurrogateRepair, display_url, redact, short_text, too_deep

__all__ = [
    "BROKEN",
    "UNREACHABLE",
    "UNREACHABLE_TIMEOUT",
    "AgentClient",
    "AgentConfigurationError",
    "AgentConnectionError",
    "AgentError",
    "AgentHTTPError",
    "AgentRun",
    "AgentStreamError",
    "AgentTimeoutError",
    "RunCancelled",
]

#: How a failure to reach the agent at all begins (what an app shows people instead: no URL, no cause).
UNREACHABLE = "cannot reach the agent"
UNREACHABLE_TIMEOUT = "timed out connecting to the agent"
#: How a connection that broke while the agent answered begins (people get a sentence; the log keeps the rest).
BROKEN = ("the connection to the agent dropped", "the agent's answer is not valid HTTP",
          "HTTP error talking to the agent", "unexpected error while reading the stream")

log = logging.getLogger(__name__)

BODY_EXCERPT = 200
EVENT_STREAM = "text/event-stream"
MAX_EVENT_CHARS = 10 * 1024 * 1024  # one SSE event, as @ag-ui/client's MAX_BUFFER_SIZE
MAX_REDIRECTS = 3  # same-origin 307/308 only
# A compressed answer is inflated at most this many bytes at a time, so what the client holds stays
# within about twice the largest event (the event being framed, and one piece): a few hundred kB
# of gzip that inflates to gigabytes fails at MAX_EVENT_CHARS without ever being inflated whole.
INFLATE_PIECE = 64 * 1024
ACCEPT_ENCODING = "gzip, deflate"  # what the client asks for: the encodings it inflates piece by piece
# The most events in one batch: a burst read at once reaches the consumer in pieces of this many,
# so a batch's work stays small (64 events: about 1 ms). Batches of 64 join a burst's deltas as
# well as 256 did (stream_throughput).
MAX_BATCH_EVENTS = 64
INTERRUPT_AGAIN = 0.25  # seconds: a stop the HTTP client swallowed is made again this often



@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The default TLS settings of httpx, built once: they cost ~40 ms of CPU to build, per run otherwise."""
    return httpx.create_ssl_context()


class AgentClient:
    """Runs an AG-UI agent over HTTP + SSE.

    Args:
        url: the agent's endpoint (POST).
        connect_timeout: seconds to establish the connection.
        read_timeout: seconds to wait for the next bytes of the stream.
        headers: extra request headers (e.g. authorization).
        transport: an ``httpx`` transport, e.g. ``httpx.ASGITransport(app)`` for an in-process agent.
            The caller owns it: runs, several at once included, use it and never close it.
        read_pause: called after each read of a run's stream: seconds to wait before the next read
            (0: at once). A busy server reads its streams in bigger pieces this way: the events
            wait in the socket's buffer and come as one batch. Time paused is not read timeout.
    """

    def __init__(self, url: str, *, connect_timeout: float = 10.0, read_timeout: float = 120.0,
                 headers: dict[str, str] | None = None, transport: httpx.AsyncBaseTransport | None = None,
                 read_pause: Callable[[], float] | None = None) -> None:
        """Configure the client; nothing connects until a run is iterated."""
        self.url = url
        self.read_pause = read_pause
        self.timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=connect_timeout,
                                     pool=connect_timeout)
        self.headers = dict(headers or {})
        self.transport = transport

    def run(self, run_input: RunAgentInput | dict[str, Any], *, message_json: MessageJson | None = None) -> AgentRun:
        """Start a run; iterate the result for its events.

        ``message_json``: the JSON text of a history message when the caller keeps it
        (:meth:`~.transcript.Transcript.message_json`); the body is the same, written faster.
        """
        return AgentRun(self, run_input, message_json)


class AgentRun:
    """The events of one run, as an async iterator. Raises :class:`AgentError` on failure."""

    def __init__(self, client: AgentClient, run_input: RunAgentInput | dict[str, Any],
                 message_json: MessageJson | None = None) -> None:
        """Prepare the run; the request is written and sent when iteration starts."""
        self._client = client
        self._input = run_input
        self._message_json = message_json
        self._source: AsyncGenerator[list[BaseEvent], None] | None = None
        self._reader: asyncio.Task[Any] | None = None  # the consumer's task while it waits for the stream
        self._interrupts = 0  # cancellations of that wait made by cancel(): ours to undo
        self.cancelled = False
        self.started = False  # True once the first event arrived
        #: The event loop's time before which the next read does not start (0: the client's
        #: ``read_pause`` decides). A consumer that shows the run on a tick sets it to its next tick,
        #: so the read comes just before it, with everything written meanwhile.
        self.read_at = 0.0
        self._ended = False  # the run's end was read: what is left of the stream is read at once

    def __aiter__(self) -> AsyncIterator[BaseEvent]:
        """The run's events; the first iteration sends the request."""
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[BaseEvent]:
        async with contextlib.aclosing(self.batches()) as batches:
            async for batch in batches:
                for event in batch:
                    if self.cancelled:  # stopped while a batch was being taken: the rest is not shown
                        raise self._stopped()
                    yield event

    async def batches(self) -> AsyncGenerator[list[BaseEvent], None]:
        """The run's events in batches: each holds the events of one network read (at most ``MAX_BATCH_EVENTS``).

        An agent that writes faster than the consumer takes leaves many events behind each read;
        a batch lets the consumer apply them together (:func:`~interrupt_chat.agui.coalesce.coalesce`).
        The stream is read in the consumer's own task, so a read's events reach it in the same
        turn of the event loop. A failure is raised after the events read before it.
        """
        if self._source is None:
            self._source = self._events()
        try:
            while True:
                if self.cancelled:  # stop now, even when events are already read
                    raise self._stopped()
                batch = await self._next_batch(self._source)
                if batch is None:
                    return
                self.started = True
                yield batch
        finally:
            await self.aclose()

    async def _next_batch(self, source: AsyncGenerator[list[BaseEvent], None]) -> list[BaseEvent] | None:
        """The next batch, or None at the end; a wait that :meth:`cancel` interrupts raises :class:`RunCancelled`."""
        task = asyncio.current_task()
        self._reader = task
        try:
            return await anext(source)
        except StopAsyncIteration:
            return None
        except asyncio.CancelledError:
            if not self._interrupts or task is None:
                raise  # the consumer's task was cancelled (or timed out): not a stop
            raise self._stopped() from None
        except AgentError as exc:
            exc.started = self.started
            raise
        except Exception as exc:
            log.exception("unexpected error while reading the agent's stream")
            raise AgentStreamError(f"unexpected error while reading the stream: {exc}") from exc
        finally:
            self._reader = None
            while self._interrupts and task is not None:  # delivered, or swallowed by the HTTP client: undone
                self._interrupts -= 1
                task.uncancel()

    def _stopped(self) -> RunCancelled:
        stopped = RunCancelled("the run was stopped")
        stopped.started = self.started
        return stopped

    def cancel(self) -> None:
        """Stop the run now, from any task: iteration raises :class:`RunCancelled`, and the HTTP response closes.

        A consumer waiting for the stream is woken at once (its wait is cancelled); one busy with
        the last batch stops before its next event.
        """
        if self.cancelled:
            return
        self.cancelled = True
        self._interrupt()

    def _interrupt(self) -> None:
        """Cancel the consumer's wait for the stream, again a little later while it still waits.

        An HTTP client may swallow a cancellation that lands while it connects (httpcore's can) and
        go on waiting; the consumer must still stop.
        """
        reader = self._reader
        if reader is not None and not reader.done():  # set only while that task is suspended in a read
            self._interrupts += 1
            reader.cancel()
            reader.get_loop().call_later(INTERRUPT_AGAIN, self._interrupt)

    async def aclose(self) -> None:
        """Stop reading: close the stream, and with it the HTTP response (safe to call twice)."""
        if self._source is not None:
            with contextlib.suppress(Exception):  # a failure was already raised to the consumer
                await self._source.aclose()

    async def _events(self) -> AsyncGenerator[list[BaseEvent], None]:
        client = self._client
        if not client.url:
            raise AgentConfigurationError("no agent URL is configured")
        headers = {"Accept": EVENT_STREAM, "Accept-Encoding": ACCEPT_ENCODING, "Content-Type": "application/json",
                   **client.headers}
        url, answered, status = client.url, False, 0  # display_url(url) on failure only (it parses the URL)
        try:
            body = _body(self._input, self._message_json)
            wire = _Borrowed(client.transport) if client.transport else shared_transport(_ssl_context())
            async with httpx.AsyncClient(timeout=client.timeout, transport=wire) as http:
                for _ in range(MAX_REDIRECTS + 1):
                    async with aconnect_sse(http, "POST", url, content=body, headers=headers) as source:
                        answered, status = True, source.response.status_code
                        target = _redirect(source.response)
                        if target is None:
                            await _check_stream(source.response)
                            async for batch in self._read(source.response):
                                yield batch
                            return
                    url = target
                raise AgentHTTPError(status, f"more than {MAX_REDIRECTS} redirects")
        except httpx.TimeoutException as exc:
            phase = "connecting to" if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)) else "waiting for"
            shown = display_url(client.url)
            raise AgentTimeoutError(f"timed out {phase} the agent at {shown}"
                                    if phase == "waiting for" else f"{UNREACHABLE_TIMEOUT} at {shown}") from exc
        except httpx.ConnectError as exc:
            reason = redact(str(exc) or "connection refused", client.url)
            raise AgentConnectionError(f"{UNREACHABLE} at {display_url(client.url)}: {reason}") from exc
        except InvalidHTTP as exc:
            reason = short_text(redact(str(exc) or type(exc).__name__, client.url), 120)
            raise AgentConnectionError(f"the agent's answer is not valid HTTP: {reason}") from exc
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            reason = short_text(redact(str(exc) or type(exc).__name__, client.url), 120)
            where = "mid-stream" if answered else "before it answered"
            raise AgentConnectionError(f"the connection to the agent dropped {where}: {reason}") from exc
        except httpx.HTTPError as exc:
            reason = redact(str(exc) or type(exc).__name__, client.url)
            raise AgentConnectionError(f"HTTP error talking to the agent: {reason}") from exc

    def _pause(self) -> float:
        """Seconds to wait before the next read: until ``read_at`` if it is ahead, else the client's pause."""
        if self._ended:
            return 0.0
        wait = self.read_at - asyncio.get_running_loop().time()
        if wait > 0:
            return wait
        return self._client.read_pause() if self._client.read_pause is not None else 0.0

    async def _read(self, response: httpx.Response) -> AsyncIterator[list[BaseEvent]]:
        """The stream's events, a network read's together: SSE is always UTF-8, sizes are bounded."""
        response.encoding = "utf-8"
        repair = SurrogateRepair()  # no cap on a whole run: what is kept is bounded (transcript.MAX_TEXT_CHARS)
        frames = _Frames()
        async for text in _Bounded(_Inflated(response), self._pause, response.extensions.get(HOLD)).aiter_text():
            batch: list[BaseEvent] = []
            try:
                for data in frames.feed(text):
                    _take(data, repair, batch)
                    if len(batch) >= MAX_BATCH_EVENTS:  # a burst: the consumer gets it piece by piece
                        yield batch
                        batch = []
            except AgentError:
                if batch:  # a failure comes after the events read before it
                    yield batch
                raise
            if batch:
                self._ended = self._ended or batch[-1].type in RUN_ENDS
                yield batch
        batch = []
        for data in frames.flush():
            _take(data, repair, batch)
        if batch:
            yield batch


class _Frames:
    """The data of each SSE event, fed one network read at a time.

    httpx-sse's line splitter (CR/LF/CRLF), then the standard's field rules for the one field an AG-UI
    client reads: ``data`` lines are joined with line feeds and dispatched at a blank line; ``event``,
    ``id``, ``retry``, unknown fields and comments carry nothing here. One list per read, without a
    generator per line or an object per event: on a busy worker those cost more than the framing.
    """

    def __init__(self) -> None:
        self._lines = SSELineDecoder()
        self._data: list[str] = []  # the data lines of the event being read

    def feed(self, text: str) -> list[str]:
        """The data of the events that ``text`` completes."""
        return self._dispatch(self._lines.decode(text))

    def flush(self) -> list[str]:
        """At the end of the stream: the last line, if it had no line break (an event still needs its blank line)."""
        return self._dispatch(self._lines.flush())

    def _dispatch(self, lines: list[str]) -> list[str]:
        out, data = [], self._data
        for line in lines:
            if not line:  # the blank line ends an event
                if data:
                    out.append("\n".join(data))
                    data.clear()
            elif line.startswith("data"):
                field, _, value = line.partition(":")
                if field == "data":
                    data.append(value[1:] if value.startswith(" ") else value)
        return out


class _Borrowed(httpx.AsyncBaseTransport):
    """The caller's transport, lent to one run.

    ``httpx.AsyncClient`` closes its transport when it exits; closing the caller's would cut off the
    other runs using it at that moment.
    """

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        """Leave it open: it is the caller's."""


def _redirect(response: httpx.Response) -> str | None:
    """The target of a redirect to follow (a same-origin 307/308, which keeps the POST), else None.

    Raises:
        AgentHTTPError: any other redirect: the agent URL should name the final address.
    """
    if response.status_code not in (301, 302, 303, 307, 308):
        return None
    location = response.headers.get("location")
    try:
        target = response.url.join(location) if location else None
    except (httpx.InvalidURL, ValueError, TypeError):
        raise AgentHTTPError(response.status_code, "a redirect to an invalid Location") from None
    if target is not None and response.status_code in (307, 308) and target.scheme == response.url.scheme \
            and target.host == response.url.host and target.port == response.url.port:
        return str(target)
    where = f"to {display_url(str(target))}" if target is not None else "without a Location"
    raise AgentHTTPError(response.status_code, f"a redirect {where}, not followed: set the agent URL to the final"
                                               " address")


async def _check_stream(response: httpx.Response) -> None:
    """Raise unless the response is a 2xx event stream; the error says what came instead."""
    if response.status_code >= 400:
        raise AgentHTTPError(response.status_code, await _excerpt(response),
                             reason=short_text(response.reason_phrase, 60) if response.reason_phrase else None)
    content_type = response.headers.get("content-type", "")
    if EVENT_STREAM not in content_type.lower():
        excerpt = await _excerpt(response)
        shown_type = short_text(content_type, 80) or "missing"
        raise AgentStreamError(
            f"the agent did not answer with an event stream (content-type {shown_type!r})"
            + (f": {excerpt}" if excerpt else ""))


class _Bounded:
    """The response's text as it arrives (``aiter_text``), with a size limit.

    This fails the run when one event outgrows :data:`MAX_EVENT_CHARS` (as ``@ag-ui/client`` caps
    its buffer), so an agent writing an endless line cannot exhaust memory, drops a leading byte
    order mark (the SSE standard ignores it), and waits between network reads as the client asks.
    Read through :class:`_Inflated`, a decompression bomb fails at the same limit.
    """

    def __init__(self, response: httpx.Response | _Inflated, pause: Callable[[], float] | None = None,
                 hold: Callable[[float], Awaitable[None]] | None = None) -> None:
        self._response = response
        self._pause = pause
        self._hold = hold or asyncio.sleep  # the wire's own wait, if it has one: it ends when the body does

    async def aiter_text(self) -> AsyncIterator[str]:
        since_blank_line, tail, first = 0, "", True
        async for text in self._response.aiter_text():
            more = isinstance(text, _MoreOfTheRead)
            if first and text:
                text, first = text.removeprefix("\ufeff"), False
            window = tail + text
            cut = max(window.rfind("\n\n"), window.rfind("\r\r"), window.rfind("\r\n\r\n"))
            since_blank_line = len(window) - cut if cut >= 0 else since_blank_line + len(text)
            if since_blank_line > MAX_EVENT_CHARS:
                raise _too_large()
            tail = window[-3:]
            yield text
            if not more and self._pause is not None and (wait := self._pause()) > 0:
                await self._hold(wait)  # what arrives meanwhile is read as one piece


class _MoreOfTheRead(str):
    """A piece of text that the same network read goes on with (no pause after it)."""

    __slots__ = ()


class _Inflated:
    """The response's text, its ``Content-Encoding`` undone a bounded piece at a time (:class:`_Inflater`).

    httpx's own decoders inflate each network read whole: one read of a gzip bomb could become
    hundreds of megabytes before any size check sees it. Here a read's text comes in pieces of at
    most :data:`INFLATE_PIECE` bytes, each checked by :class:`_Bounded` before the next is
    inflated; all but a read's last are :class:`_MoreOfTheRead`.
    """

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    async def aiter_text(self) -> AsyncIterator[str]:
        inflater = _Inflater(self._response.headers.get("content-encoding", ""))
        utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")  # SSE is always UTF-8
        async for raw in self._response.aiter_raw():
            held = ""
            for piece in inflater.feed(raw):  # lazily: one piece inflated at a time
                text = utf8.decode(piece)
                if text:
                    if held:
                        yield _MoreOfTheRead(held)
                    held = text
            if held:
                yield held
        inflater.finish()
        if text := utf8.decode(b"", final=True):  # a character cut off at the very end
            yield text


class _Inflater:
    """A body's ``Content-Encoding`` undone at most :data:`INFLATE_PIECE` bytes at a time.

    gzip and deflate (zlib-wrapped, or raw as some servers send it); identity passes through.

    Raises:
        AgentStreamError: an encoding this client does not read, or a body that does not inflate.
    """

    def __init__(self, encoding: str) -> None:
        codings = [c for c in (part.strip().lower() for part in encoding.split(",")) if c and c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise AgentStreamError(f"the agent's answer uses a content-encoding this client does not read "
                                   f"({short_text(encoding, 60)!r}); it asks for {ACCEPT_ENCODING}")
        self._coding = codings[0] if codings else ""
        self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS if self._coding in ("gzip", "x-gzip") else zlib.MAX_WBITS)
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The inflated pieces of one network read, each at most ``INFLATE_PIECE`` bytes."""
        if not self._coding:
            yield data
            return
        while data and not self._zlib.eof:
            try:
                out = self._zlib.decompress(data, INFLATE_PIECE)
            except zlib.error as exc:
                if self._coding == "deflate" and not self._started:  # raw deflate, without the zlib wrapper
                    self._zlib, self._started = zlib.decompressobj(-zlib.MAX_WBITS), True
                    continue
                raise AgentStreamError(f"the agent's compressed answer does not inflate ({self._coding}: {exc})"
                                       ) from None
            self._started = True
            data = self._zlib.unconsumed_tail
            if out:
                yield out

    def finish(self) -> None:
        """At the end of the body: a compressed one must have ended too."""
        if self._coding and self._started and not self._zlib.eof:
            raise AgentStreamError(f"the agent's compressed answer ends before its {self._coding} stream does")


def _body(run_input: RunAgentInput | dict[str, Any], cached: MessageJson | None) -> bytes:
    """The request body; a value JSON cannot hold (NaN in a dict input) fails the run with its name."""
    try:
        return encode(run_input, cached)
    except ValueError as exc:
        raise AgentError(f"the run's input cannot be sent as JSON: {exc}") from None


def _take(data: str, repair: SurrogateRepair, batch: list[BaseEvent]) -> None:
    """Add the AG-UI event of a complete SSE event's data to ``batch``; empty data carries nothing."""
    if not data:
        return
    if len(data) > MAX_EVENT_CHARS:
        raise _too_large()
    event = _decode(data, repair)
    if event is not None:
        batch.append(event)


def _too_large() -> AgentStreamError:
    return AgentStreamError(f"an event from the agent is larger than {MAX_EVENT_CHARS} characters")


def _decode(data: str, repair: SurrogateRepair) -> BaseEvent | None:
    if not repair.needed(data):  # the common case first: a plain delta, read straight from its JSON text
        event = parse_delta_json(data) or parse_snapshot_json(data)
        if event is not None:
            return event
    try:
        obj = json.loads(data)
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        raise AgentStreamError(f"malformed data line from the agent (not JSON): {short_text(data, 120)!r}") from None
    if too_deep(obj):
        raise _too_deep()
    if repair.needed(data):
        obj = repair.repair(obj)
        if obj is None:
            return None
    try:
        return parse_event(obj)
    except MalformedEvent as exc:
        raise AgentStreamError(f"malformed event from the agent: {short_text(exc)}") from None


def _too_deep() -> AgentStreamError:
    return AgentStreamError(f"an event from the agent is nested deeper than {MAX_DEPTH} levels")


async def _excerpt(response: httpx.Response) -> str:
    """A short, plain-text excerpt of an error body; markup (an HTML error or login page) is not shown."""
    raw = b""
    try:  # read only what the excerpt needs: the body may be huge, never end, or be a decompression bomb
        inflater = _Inflater(response.headers.get("content-encoding", ""))
        async for data in response.aiter_raw():
            for piece in inflater.feed(data):
                raw += piece
                if len(raw) >= BODY_EXCERPT * 4:
                    break
            if len(raw) >= BODY_EXCERPT * 4:
                break
    except (httpx.HTTPError, AgentStreamError):
        return ""
    text = raw[: BODY_EXCERPT * 4].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if "html" in response.headers.get("content-type", "").lower() or re.match(r"<[!a-zA-Z?]", text):
        return "an HTML page"
    return short_text(text, BODY_EXCERPT)
