"""httpx's API on aiohttp's HTTP/1.1 client: the wire under :mod:`~interrupt_chat.agui.transport`.

An agent's answer arrives as thousands of small SSE writes, one network read each when the agent
is paced (an LLM is). httpx's own stack (httpcore, h11, anyio) spends about 200 µs of CPU per read:
a cancel scope per read, an epoll re-registration per read, a pure-Python HTTP parser. aiohttp
parses HTTP in C (llhttp) and keeps the socket registered, so the same read costs about a third of
that (``benchmarks/read_path.py`` measures both in one run). Everything above the wire stays
httpx: the request, redirects, timeouts, decoding, httpx-sse's framing and httpx's error types,
which this module maps aiohttp's errors to, by phase.

Connections are kept alive: :func:`shared_transport` is one pool per event loop (a worker's), so a
run reuses an idle connection to its agent instead of connecting again (under load a connection
takes several turns of a lagging loop: a person's resume waited a third of a second for it). A body
read to its end gives its connection back to the pool; one stopped, cut or failed closes it. A
request that a reused connection fails before any answer is sent again on another: the agent had
closed that idle connection (see :data:`REUSE_RETRIES`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
import threading
import types
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import aiohttp
import httpx

__all__ = ["HOLD", "KEEPALIVE", "REUSE_RETRIES", "AiohttpTransport", "InvalidHTTP", "shared_transport"]

#: Seconds an idle connection stays in the pool. Below the 5 s after which uvicorn, hypercorn and
#: Node close an idle connection: the pool drops it first, rather than racing the agent's close.
KEEPALIVE = 4.0
#: How many times a request is sent again when a reused connection fails it before any answer (the
#: agent closed it while idle, its close still on the way). As browsers do, even for a POST: the agent
#: did not start on a request it closed the connection under.
REUSE_RETRIES = 2
#: The response extension holding the body's wait between reads (``await hold(seconds)``): it ends
#: early when the body ends, so a run's end is not kept for the reader's tick (``AgentRun.read_at``).
HOLD = "interrupt_chat.hold"

_shared: dict[tuple[asyncio.AbstractEventLoop, ssl.SSLContext], AiohttpTransport] = {}
_inherited: list[AiohttpTransport] = []  # a forked child's copies of its parent's pools: never used, never closed
_lock = threading.Lock()


class InvalidHTTP(httpx.RemoteProtocolError):
    """The agent's bytes are not HTTP/1.x (its status line, headers or body framing).

    aiohttp's parser reads a response head and the body bytes that came with it in one go, so
    whether the head was fine cannot be told apart: this error says what broke, not when.
    """


@contextmanager
def _mapped(request: httpx.Request, *, connecting: bool) -> Iterator[None]:
    """Re-raise aiohttp's errors as the httpx error of the same meaning (the aiohttp one as the cause)."""
    try:
        yield
    except aiohttp.ConnectionTimeoutError as exc:
        raise httpx.ConnectTimeout(str(exc) or "connect timeout", request=request) from exc
    except (aiohttp.SocketTimeoutError, aiohttp.ServerTimeoutError, TimeoutError) as exc:
        if connecting and not isinstance(exc, aiohttp.SocketTimeoutError):
            raise httpx.ConnectTimeout(str(exc) or "connect timeout", request=request) from exc
        raise httpx.ReadTimeout(str(exc) or "read timeout", request=request) from exc
    except aiohttp.ClientConnectorError as exc:  # refused, unreachable, DNS, TLS handshake
        raise httpx.ConnectError(str(exc.os_error) or str(exc), request=request) from exc
    except aiohttp.ClientResponseError as exc:  # what the parser rejected
        raise InvalidHTTP(exc.message or str(exc), request=request) from exc
    except aiohttp.ServerDisconnectedError as exc:
        raise httpx.RemoteProtocolError("the server closed the connection without a complete response",
                                        request=request) from exc
    except aiohttp.ClientPayloadError as exc:  # a body cut short (chunked encoding or Content-Length)
        raise httpx.RemoteProtocolError(_cause(exc), request=request) from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    # aiohttp's parser errors read "400, message: ..." (a status of its own, never the agent's): the message only
    message = getattr(inner, "message", None)
    if isinstance(message, str) and message:
        return message
    return str(inner) if inner is not None and str(inner) else str(exc) or type(exc).__name__


class _Body(httpx.AsyncByteStream):
    """The response body, chunk by chunk as the socket delivered it (no re-buffering)."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request, read_timeout: float | None) -> None:
        self._response = response
        self._request = request
        self._idle = _IdleTimeout(response, read_timeout) if read_timeout else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        content, idle = self._response.content, self._idle
        try:
            with _mapped(self._request, connecting=False):
                while True:
                    if idle is not None:
                        idle.waiting = True
                    chunk = await content.readany()
                    if idle is not None:
                        idle.waiting = False
                    if not chunk:
                        return
                    yield chunk
        finally:
            if idle is not None:
                idle.stop()

    async def hold(self, seconds: float) -> None:
        """Wait ``seconds`` before the next read, or less: until the body ends (a run's end is read at once).

        A busy consumer reads on its own tick (``AgentRun.read_at``); an agent that ends its run
        meanwhile (the ``RUN_FINISHED`` that asks a person) ends its response body too, and
        that is not kept waiting for the tick.
        """
        content = self._response.content
        if content.is_eof() or content.exception() is not None:
            return
        try:
            async with asyncio.timeout(seconds):
                await content.wait_eof()
        except Exception:  # noqa: BLE001 - the time is up (TimeoutError), or the body failed: the read tells
            return

    async def aclose(self) -> None:
        # close, not release: a stream stopped half-way must not go back to the pool (one read to its
        # end went back as it ended: aiohttp releases the connection at the body's last byte)
        if self._idle is not None:
            self._idle.stop()
        self._response.close()


class _IdleTimeout:
    """The body's read timeout (httpx's ``read``), checked a few times per period instead of re-armed per read.

    aiohttp re-arms its ``sock_read`` timer on every network read: a timer handle and two heap
    operations per event of a paced agent, about 4 % of a busy worker's CPU. This one looks a few
    times per period at whether bytes arrived (``StreamReader.total_bytes``) while the reader
    waited; it fails the stream as aiohttp's would, with ``SocketTimeoutError``, 1 to 1½ periods after
    the last byte. Time the reader spends elsewhere (the consumer busy, the body buffered) does
    not count, as aiohttp stops its timer while reading is paused for the buffer.
    """

    CHECKS = 4  # checks per period

    def __init__(self, response: aiohttp.ClientResponse, timeout: float) -> None:
        connection = response.connection
        if connection is not None and connection.protocol is not None:
            connection.protocol.read_timeout = None  # aiohttp's per-read timer: this one takes over
        self.waiting = False
        self._content = response.content
        self._timeout = timeout
        self._loop = asyncio.get_running_loop()
        self._seen = self._content.total_bytes
        self._since = self._loop.time()
        self._handle: asyncio.TimerHandle | None = self._loop.call_later(timeout / self.CHECKS, self._check)

    def _check(self) -> None:
        now, seen = self._loop.time(), self._content.total_bytes
        if seen != self._seen or not self.waiting:
            self._seen, self._since = seen, now
        elif now - self._since >= self._timeout:
            self._handle = None
            self._content.set_exception(aiohttp.SocketTimeoutError("Timeout on reading data from socket"))
            return
        self._handle = self._loop.call_later(self._timeout / self.CHECKS, self._check)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An ``httpx`` transport that sends each request with one ``aiohttp.ClientSession``, its connections kept alive.

    Args:
        ssl_context: the TLS settings for ``https://`` agents (built once per process by the caller).
        shared: the loop's pool (:func:`shared_transport`): ``aclose()`` leaves it open, it closes
            as its loop shuts down.
    """

    def __init__(self, ssl_context: ssl.SSLContext, *, shared: bool = False) -> None:
        """No session until the first request (it must be made on the running loop)."""
        self._ssl_context = ssl_context
        self._shared = shared
        self._session: aiohttp.ClientSession | None = None
        self._lifetime: AsyncIterator[None] | None = None

    async def _open(self) -> aiohttp.ClientSession:
        # no limit on connections, in all or per agent (one run is one connection: 500 runs at once
        # must not queue), no cookies, no decompression (httpx decodes), no headers beyond httpx's
        tracing = aiohttp.TraceConfig()
        tracing.on_connection_reuseconn.append(_reused)
        session = self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=self._ssl_context, limit=0, limit_per_host=0,
                                           keepalive_timeout=KEEPALIVE),
            cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False, trust_env=False, trace_configs=[tracing])
        if self._shared:
            self._lifetime = _closes_with_loop(self)
            await anext(self._lifetime)
        return session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; the response's body streams from the socket."""
        timeout = request.extensions.get("timeout", {})
        session = self._session or await self._open()
        with _mapped(request, connecting=True):
            response = await _send(session, request, await request.aread() or None, aiohttp.ClientTimeout(
                sock_connect=timeout.get("connect"), sock_read=timeout.get("read"), connect=timeout.get("pool")))
        _ack_promptly(response)
        extensions: dict[str, object] = {"http_version": f"HTTP/{response.version.major}.{response.version.minor}"
                                         .encode() if response.version else b"HTTP/1.1"}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode("latin-1", "replace")
        body = _Body(response, request, timeout.get("read"))
        extensions[HOLD] = body.hold
        return httpx.Response(status_code=response.status, headers=list(response.raw_headers), stream=body,
                              request=request, extensions=extensions)

    async def aclose(self) -> None:
        """Close the session and its connections (the loop's shared pool: nothing, it closes with its loop).

        A later request opens a new session, as an httpx transport serves requests again after
        ``aclose()``.
        """
        if not self._shared:
            await self._close()

    async def _close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


async def _send(session: aiohttp.ClientSession, request: httpx.Request, body: bytes | None,
                timeout: aiohttp.ClientTimeout) -> aiohttp.ClientResponse:
    """``request`` sent on ``session``: again on another connection when a reused one fails it unanswered."""
    url = str(request.url.copy_with(username=None, password=None))  # httpx made them the Authorization header
    retries = REUSE_RETRIES
    while True:
        reuse = types.SimpleNamespace(reused=False)  # set by _reused: aiohttp took a pooled connection
        try:
            return await session.request(
                request.method, url, headers=list(request.headers.multi_items()), data=body,
                allow_redirects=False, compress=False, timeout=timeout, trace_request_ctx=reuse,
                server_hostname=request.extensions.get("sni_hostname"))
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientConnectionResetError) as exc:
            if not reuse.reused or isinstance(exc, aiohttp.ClientConnectorError) or not retries:
                raise
            retries -= 1


def _ack_promptly(response: aiohttp.ClientResponse) -> None:
    """Have Linux acknowledge the rest of the response as it is read, not up to 40 ms later (``TCP_QUICKACK``).

    A kept-alive connection that sent its request soon after reading the last answer is in Linux's
    interactive mode: it delays acknowledgements, hoping to send them with data. An agent whose sockets
    use Nagle's algorithm (uvicorn binds them so with ``--workers`` or ``--reload``) holds each small
    write until the one before is acknowledged: each run's answer came 40 ms late. A new connection
    acknowledges promptly at first: this was not seen before the pool.
    """
    connection = response.connection  # None: the whole answer is in already
    if connection is None or connection.transport is None or not hasattr(socket, "TCP_QUICKACK"):
        return
    sock = connection.transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


async def _reused(_session: aiohttp.ClientSession, context: types.SimpleNamespace, _params: object) -> None:
    context.trace_request_ctx.reused = True


def shared_transport(ssl_context: ssl.SSLContext) -> AiohttpTransport:
    """The running loop's transport: one pool of kept-alive connections per loop, made on first use.

    Runs borrow it, so a run reuses the connection an earlier run left idle. A new loop (a new
    worker, a forked child, a test's) gets a pool of its own; the pool closes as its loop shuts down.
    """
    key = (asyncio.get_running_loop(), ssl_context)
    transport = _shared.get(key)
    if transport is None:
        with _lock:
            for old in [old for old in _shared if old[0].is_closed()]:  # closed without shutting down: left to GC
                del _shared[old]
            transport = _shared.setdefault(key, AiohttpTransport(ssl_context, shared=True))
    return transport


async def _closes_with_loop(transport: AiohttpTransport) -> AsyncIterator[None]:
    """Waits at its ``yield`` for the loop to shut down, then closes ``transport``'s connections.

    The loop closes its async generators as it ends (``asyncio.run``, uvicorn, pytest's loops): the
    one hook asyncio has for a loop's end.
    """
    pid = os.getpid()
    try:
        yield
    finally:
        if os.getpid() == pid:  # a forked child leaves its parent's connections alone
            with _lock:
                for key in [key for key, value in _shared.items() if value is transport]:
                    del _shared[key]
            await transport._close()


def _forget() -> None:
    global _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    _inherited.extend(_shared.values())  # kept: closing them would close the parent's (a TLS close is sent)
    _shared.clear()


os.register_at_fork(after_in_child=_forget)
