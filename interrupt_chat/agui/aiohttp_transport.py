"""httpx's API on aiohttp's HTTP/1.1 client: the wire under :mod:`~interrupt_chat.agui.transport`.

An agent's answer arrives as thousands of small SSE writes, one network read each when the agent
is paced (an LLM is). httpx's own stack (httpcore, h11, anyio) spends about 200 µs of CPU per read:
a cancel scope per read, an epoll re-registration per read, a pure-Python HTTP parser. aiohttp
parses HTTP in C (llhttp) and keeps the socket registered, so the same read costs about a third of
that (``benchmarks/read_path.py`` measures both in one run). Everything above the wire stays
httpx: the request, redirects, timeouts, decoding, httpx-sse's framing and httpx's error types,
which this module maps aiohttp's errors to, by phase.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import aiohttp
import httpx

__all__ = ["AiohttpTransport", "InvalidHTTP"]


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

    async def aclose(self) -> None:
        # close, not release: a stream stopped half-way must not go back to a pool
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
    """An ``httpx`` transport that sends each request with one ``aiohttp.ClientSession``.

    Args:
        ssl_context: the TLS settings for ``https://`` agents (built once per process by the caller).
    """

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        """No session until the first request (it must be made on the running loop)."""
        self._ssl_context = ssl_context
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            # no pool limit (httpx's pool limits are not enforced here; one run is one connection),
            # no cookies, no decompression (httpx decodes), no headers beyond what httpx sets
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self._ssl_context, limit=0),
                cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False, trust_env=False)
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; the response's body streams from the socket."""
        timeout = request.extensions.get("timeout", {})
        with _mapped(request, connecting=True):
            # httpx already turned a URL's user:password into the Authorization header
            url = str(request.url.copy_with(username=None, password=None))
            response = await self._client().request(
                request.method, url, headers=list(request.headers.multi_items()),
                data=await request.aread() or None, allow_redirects=False, compress=False,
                timeout=aiohttp.ClientTimeout(sock_connect=timeout.get("connect"), sock_read=timeout.get("read"),
                                              connect=timeout.get("pool")),
                server_hostname=request.extensions.get("sni_hostname"))
        extensions: dict[str, object] = {"http_version": f"HTTP/{response.version.major}.{response.version.minor}"
                                         .encode() if response.version else b"HTTP/1.1"}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode("latin-1", "replace")
        return httpx.Response(status_code=response.status, headers=list(response.raw_headers),
                              stream=_Body(response, request, timeout.get("read")), request=request,
                              extensions=extensions)

    async def aclose(self) -> None:
        """Close the session and its connections.

        A later request opens a new session, as an httpx transport serves requests again after
        ``aclose()``.
        """
        session, self._session = self._session, None
        if session is not None:
            await session.close()
