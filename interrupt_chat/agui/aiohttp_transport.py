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
    return str(inner) if inner is not None and str(inner) else str(exc) or type(exc).__name__


class _Body(httpx.AsyncByteStream):
    """The response body, chunk by chunk as the socket delivered it (no re-buffering)."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped(self._request, connecting=False):
            async for chunk in self._response.content.iter_any():
                yield chunk

    async def aclose(self) -> None:
        # close, not release: a stream stopped half-way must not go back to a pool
        self._response.close()


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
                              stream=_Body(response, request), request=request, extensions=extensions)

    async def aclose(self) -> None:
        """Close the session and its connections.

        A later request opens a new session, as an httpx transport serves requests again after
        ``aclose()``.
        """
        session, self._session = self._session, None
        if session is not None:
            await session.close()
