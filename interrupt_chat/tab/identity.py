"""Who a tab is: an anonymous browser identity that page scripts never see, bound to the tab's own socket.

Without ``Chat(owner=fn)``, a person is a browser profile. The backend issues the identity in an
``HttpOnly``, ``SameSite=Lax`` cookie (``Secure`` on https) on the socket's own handshake, and reads
it only there:

* A socket gets an identity only when its handshake's ``Origin`` is the app's own (its
  ``deploy_url``, its ``api_url``, the backend's own host, or ``INTERRUPT_CHAT_ALLOWED_ORIGINS``).
  A page on a sibling origin or port that opens a socket to the backend gets none, even though the
  browser attaches the cookie (SameSite does not tell ports apart), and Reflex sees none of its
  cookies (it echoes the handshake's headers to the page in ``router.headers``).
* The identity cookie is taken out of the handshake's headers before Reflex reads them, so it never
  reaches ``router.headers.cookie``, which Reflex sends back to the page in every state.
* Two values of the cookie (one planted by a sibling host or a longer path) name nobody; the value
  is issued anew. On https the cookie is ``__Host-interrupt_chat_id``, which no other host or path
  can set.
* The identity of a socket lives in this process, keyed by the Socket.IO session id, from the
  connect to the disconnect. A state asks for it with the session id of the event it is
  processing (:func:`person_of`); a state whose socket is unknown here keeps the person it served,
  or has none, and waits for its real one: nothing is ever minted for it.

The cookie's value is ``v1.<person>.<issued>.<mac>``: a random 128-bit person id, when this value was
issued, and an HMAC-SHA256 of both with the server's identity secret (``INTERRUPT_CHAT_SECRET``,
else one kept in the thread database, else this process's). It is re-issued with a fresh date on a
connect a day after its issue, and refused 180 days after its issue (``MAX_AGE``): a value copied
out of a browser that is not used again stops working then (one that keeps being used renews
itself, like the browser's own). The person id is what the database keys an anonymous person's
threads by; it is not enough to forge a cookie.

A browser that still carries the readable cookie of earlier versions (``interrupt_chat_owner``) gets
a new identity. Its threads move to it once only where the app opts in with
``INTERRUPT_CHAT_ADOPT_LEGACY_IDS=1`` (the old id was readable by page scripts and sent in
notifications, so whoever saw it could claim them); the old cookie is then deleted.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import logging
import os
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["ALLOWED_ORIGINS_ENV", "COOKIE", "LEGACY_COOKIE", "MAX_AGE", "bind", "install", "legacy_of",
           "origin_allowed", "person_of", "unbind"]

log = logging.getLogger(__name__)

COOKIE = "interrupt_chat_id"
SECURE_COOKIE = "__Host-interrupt_chat_id"  # on https: no sibling host or path can set it (the __Host- prefix)
LEGACY_COOKIE = "interrupt_chat_owner"  # earlier versions: a 64-bit id that page scripts could read
ADOPT_LEGACY_ENV = "INTERRUPT_CHAT_ADOPT_LEGACY_IDS"  # "1": a browser's old readable id hands its threads over
ALLOWED_ORIGINS_ENV = "INTERRUPT_CHAT_ALLOWED_ORIGINS"  # more origins of the app's own pages, comma-separated
SECRET_ENV = "INTERRUPT_CHAT_SECRET"
MAX_AGE = 180 * 24 * 3600  # seconds a cookie value is accepted after its issue
REISSUE_AFTER = 24 * 3600  # a connect this long after the issue gets a fresh value
_SCOPE_KEY = "interrupt_chat.person"  # the handshake's identity, as the ASGI wrapper found it
_LEGACY_KEY = "interrupt_chat.legacy"
_ISSUED_KEY = "interrupt_chat.issued"  # a value was issued on this handshake (its accept may not carry it)
ISSUE_QUERY = "interrupt_chat_identity"  # GET <event url>/?interrupt_chat_identity=<tab token>: the cookie by HTTP
TICKET_SECONDS = 120.0  # how long a socket's new identity waits for its page to fetch the cookie

Scope = MutableMapping[str, Any]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_by_sid: dict[str, str] = {}  # Socket.IO session id -> person id ("" for a socket without one)
_legacy_by_sid: dict[str, str] = {}  # session id -> the pre-identity cookie it came with, until adopted


# -- the identity of a state ------------------------------------------------------------------------

def person_of(state: Any) -> str | None:
    """The person id of the socket whose event ``state`` is processing.

    "" when that socket has no identity (another origin, no secret); None when this process does
    not know the socket: a task working on a tab whose socket closed, or lives on another worker.
    Such a task keeps the owner its state already served; it never gets a new one.
    """
    try:
        sid = state.router.session.session_id
    except AttributeError:
        return None
    return _by_sid.get(sid) if isinstance(sid, str) and sid else None


def legacy_of(state: Any) -> str:
    """The pre-identity owner id the tab's browser still had when its socket connected (else "")."""
    try:
        sid = state.router.session.session_id
    except AttributeError:
        return ""
    return _legacy_by_sid.get(sid, "") if isinstance(sid, str) else ""


def bind(sid: str, person: str, legacy: str = "") -> None:
    """Give socket ``sid`` its person (what a connect does; tests call it for states without a socket)."""
    _by_sid[sid] = person
    if legacy:
        _legacy_by_sid[sid] = legacy


def unbind(sid: str) -> None:
    """The socket closed: its identity is gone with it."""
    _by_sid.pop(sid, None)
    _legacy_by_sid.pop(sid, None)


# -- the cookie --------------------------------------------------------------------------------------

_secret_lock = threading.Lock()
_secret_value: bytes | None = None
_process_secret = secrets.token_bytes(32)


def _load_secret() -> bytes:
    """The identity secret (once): configured, else kept in the thread database, else this process's."""
    global _secret_value
    with _secret_lock:
        if _secret_value is not None:
            return _secret_value
        configured = os.environ.get(SECRET_ENV)
        if configured:
            _secret_value = hashlib.sha256(b"identity|" + configured.encode()).digest()
            return _secret_value
        from ..store import secrets as stored_secrets
        from ..store.types import ThreadDBError
        from .persistence import database

        db = database()
        if db is None:
            log.info("identity: no thread database and no %s: browser identities last while this process runs",
                     SECRET_ENV)
            _secret_value = _process_secret
            return _secret_value
        try:
            _secret_value = bytes.fromhex(stored_secrets.secret(db, "identity"))
        except ThreadDBError:
            log.warning("identity: the thread database is down; this connection's identity is not checked "
                        "(it gets none) until it is back")
            return b""
        return _secret_value


def _mac(secret: bytes, body: str) -> str:
    digest = hmac.new(secret, body.encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue(secret: bytes, person: str | None = None, now: float | None = None) -> str:
    """A cookie value for ``person`` (a new random one when None), issued ``now``."""
    person = person or base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()
    body = f"v1.{person}.{int(now if now is not None else time.time())}"
    return f"{body}.{_mac(secret, body)}"


def verify(secret: bytes, value: str, now: float | None = None) -> tuple[str, float] | None:
    """The person and issue time of a cookie value whose MAC holds and that is not too old; else None."""
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != "v1" or len(parts[1]) != 22 or not parts[2].isdigit() or len(value) > 100:
        return None
    body = ".".join(parts[:3])
    if not secret or not hmac.compare_digest(parts[3], _mac(secret, body)):
        return None
    issued = float(parts[2])
    age = (now if now is not None else time.time()) - issued
    return (parts[1], issued) if -300 <= age <= MAX_AGE else None


def set_cookie_header(value: str, secure: bool, max_age: int = MAX_AGE, name: str = COOKIE) -> bytes:
    """The ``Set-Cookie`` header of the identity cookie: HttpOnly, SameSite=Lax, Secure on https."""
    attrs = [f"{name}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Lax"]
    if secure:
        attrs.append("Secure")
    return "; ".join(attrs).encode("latin-1")


# -- the handshake -------------------------------------------------------------------------------------

def _origin_of(url: str) -> str:
    try:
        parts = urlsplit(url)
        port_number = parts.port
    except ValueError:  # a port that is no number: no origin of ours
        return ""
    if not parts.scheme or not parts.hostname:
        return ""
    default = {"http": 80, "https": 443}.get(parts.scheme)
    port = f":{port_number}" if port_number and port_number != default else ""
    host = parts.hostname.lower()
    host = "loopback" if host in _LOOPBACK else host  # one server's port, whichever loopback name it is opened by
    return f"{parts.scheme.lower()}://{host}{port}"


_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def _own_origins(scope: Scope, headers: dict[str, str]) -> set[str]:
    """The origins of the app's own pages: its deploy and API URLs, this backend's host, the listed ones."""
    own: set[str] = set()
    try:
        import reflex as rx

        config = rx.config.get_config()
        own |= {_origin_of(config.deploy_url or ""), _origin_of(config.api_url or "")}
    except Exception:  # noqa: BLE001 - no Reflex config (a bare ASGI test): the host and the list still count
        pass
    host = headers.get("host", "")
    if host:
        secure = scope.get("scheme") in ("https", "wss") or headers.get("x-forwarded-proto") == "https"
        own.add(_origin_of(f"{'https' if secure else 'http'}://{host}"))
    for listed in os.environ.get(ALLOWED_ORIGINS_ENV, "").split(","):
        own.add(_origin_of(listed.strip()))
    own.discard("")
    return own


def origin_allowed(scope: Scope, headers: dict[str, str]) -> bool:
    """Whether the handshake comes from one of the app's own pages (a browser always sends ``Origin``)."""
    origin = headers.get("origin", "")
    return bool(origin) and _origin_of(origin) in _own_origins(scope, headers)


def request_allowed(scope: Scope, headers: dict[str, str]) -> bool:
    """Whether a plain HTTP request comes from one of the app's own pages.

    A browser names the origin of a cross-origin request; of a same-origin ``GET`` it sends none (a
    single-port deploy, ``reflex run --env prod``), but says ``Sec-Fetch-Site: same-origin``, which no
    page script can set. Without either (an old browser), the ``Referer``'s origin must be the app's.
    """
    if headers.get("origin"):
        return origin_allowed(scope, headers)
    if headers.get("sec-fetch-site") == "same-origin":
        return True
    referer = headers.get("referer", "")
    return bool(referer) and _origin_of(referer) in _own_origins(scope, headers)


def _split(raw_headers: list[tuple[bytes, bytes]]) -> tuple[dict[str, str], list[tuple[bytes, bytes]], list[str],
                                                     dict[str, list[str]]]:
    """The handshake's headers by name, its headers without cookies, its other cookies, and the identity ones."""
    named: dict[str, str] = {}
    kept: list[tuple[bytes, bytes]] = []
    others: list[str] = []
    ours: dict[str, list[str]] = {}
    for name, value in raw_headers:
        lower = name.lower()
        text = value.decode("latin-1")
        if lower == b"cookie":
            for part in text.split(";"):
                key, _, val = part.strip().partition("=")
                if key in (COOKIE, SECURE_COOKIE, LEGACY_COOKIE):
                    ours.setdefault(key, []).append(val.strip().strip('"'))
                elif part.strip():
                    others.append(part.strip())
            continue
        named.setdefault(lower.decode("latin-1"), text)
        kept.append((name, value))
    return named, kept, others, ours


def _one(values: list[str] | None) -> str:
    """A cookie's value when exactly one came: two (one planted by a sibling host or path) name nobody."""
    return values[0] if values and len(values) == 1 else ""


async def admit(scope: Scope, send: Send) -> tuple[Scope, Send]:
    """The handshake as Reflex may see it (no identity cookie), and a ``send`` that issues the cookie.

    The identity found (or made) is left in the scope for the connect (``_SCOPE_KEY``): "" for a
    socket that gets none, absent when it cannot be told now (the secret is unavailable).
    """
    named, kept, others, ours = _split(list(scope.get("headers") or []))
    if not origin_allowed(scope, named):
        # Reflex echoes the handshake's headers to the page (router.headers): another origin's page
        # must not read the app's cookies through it, the login's included
        scope = {**scope, "headers": kept, _SCOPE_KEY: ""}
        if ours or others:
            log.warning("identity: a socket from origin %r gets no identity and no cookies (not the app's own)",
                        named.get("origin", "")[:200])
        return scope, send
    scope = {**scope, "headers": [*kept, (b"cookie", "; ".join(others).encode("latin-1"))] if others else kept}
    secret = await asyncio.to_thread(_load_secret) if _secret_value is None else _secret_value
    if not secret:  # the database holds the secret and is down: unknown for now, never a wrong one
        return scope, send
    secure = scope.get("scheme") in ("https", "wss") or named.get("x-forwarded-proto") == "https"
    name = SECURE_COOKIE if secure else COOKIE
    found = verify(secret, _one(ours.get(name)))
    person, fresh = (found[0], time.time() - found[1] > REISSUE_AFTER) if found else (None, True)
    value = issue(secret, person) if fresh else ""
    scope[_SCOPE_KEY] = person or verify(secret, value)[0]  # type: ignore[index]  # a value just issued holds
    scope[_ISSUED_KEY] = bool(value)
    legacy = _one(ours.get(LEGACY_COOKIE)) if os.environ.get(ADOPT_LEGACY_ENV) == "1" else ""
    if legacy and found is None and _plausible_legacy(legacy):
        scope[_LEGACY_KEY] = legacy
    else:
        legacy = ""
    if not value and not legacy:
        return scope, send
    extra = [(b"set-cookie", set_cookie_header(value, secure, name=name))] if value else []
    if legacy:  # the readable cookie of earlier versions: gone (its threads are adopted on the first load)
        extra.append((b"set-cookie", set_cookie_header("", secure, max_age=0, name=LEGACY_COOKIE)))

    async def issuing(message: MutableMapping[str, Any]) -> None:
        nonlocal extra
        if extra and message.get("type") in ("websocket.accept", "http.response.start"):
            message = {**message, "headers": [*(message.get("headers") or []), *extra]}
            extra = []
        await send(message)

    return scope, issuing


# -- the cookie by HTTP: servers that drop a WebSocket accept's headers (Granian) -------------------------------
#
# The page asks ``GET <event url>/?interrupt_chat_identity=<its tab token>`` once it has loaded
# (``components/identity_cookie.py``). A socket that was issued a new value leaves a ticket under its
# tab's token, in Redis where the workers share one (any worker may answer the page), else in this
# process; the answer sets the cookie for that socket's person, once, and only for the app's own
# origins. A request that already carries a valid cookie gets a fresh one a day after its issue.

_tickets: dict[str, tuple[str, float]] = {}  # tab token -> (person, expiry), without Redis


def _ticket_key(token: str) -> str:
    return "interrupt_chat:identity-ticket:" + hashlib.sha256(token.encode()).hexdigest()


async def _hold_ticket(token: str, person: str) -> None:
    from ..workers.runs import shared_redis

    try:
        redis = await shared_redis()
        if redis is not None:
            await redis.set(_ticket_key(token), person, ex=int(TICKET_SECONDS))
            return
    except Exception:  # Redis down: this process may still answer the page
        log.warning("identity: the ticket for a new identity could not be kept in Redis", exc_info=True)
    now = time.monotonic()
    for stale in [k for k, (_, until) in _tickets.items() if until < now]:
        _tickets.pop(stale, None)
    if len(_tickets) < 100_000:
        _tickets[token] = (person, now + TICKET_SECONDS)


async def _take_ticket(token: str) -> str:
    from ..workers.runs import shared_redis

    found = _tickets.pop(token, None)
    if found is not None and found[1] >= time.monotonic():
        return found[0]
    try:
        redis = await shared_redis()
        if redis is not None:
            value = await redis.getdel(_ticket_key(token))
            return value.decode() if isinstance(value, bytes) else str(value or "")
    except Exception:  # Redis down: the page asks again
        log.warning("identity: the ticket for a new identity could not be read from Redis", exc_info=True)
    return ""


async def serve_cookie(scope: Scope, send: Send) -> None:
    """Answer the page's request for its identity cookie (204 with ``Set-Cookie``, else 204, 403 or 404)."""
    named, _, _, ours = _split(list(scope.get("headers") or []))
    # closed after the answer: the page keeps no idle connection to the backend beside its socket
    status, headers = 204, [(b"cache-control", b"no-store"), (b"connection", b"close")]
    if not request_allowed(scope, named):
        status = 403
    else:
        secret = await asyncio.to_thread(_load_secret) if _secret_value is None else _secret_value
        secure = scope.get("scheme") in ("https", "wss") or named.get("x-forwarded-proto") == "https"
        name = SECURE_COOKIE if secure else COOKIE
        found = verify(secret, _one(ours.get(name))) if secret else None
        token = (parse_qs((scope.get("query_string") or b"").decode("latin-1")).get(ISSUE_QUERY) or [""])[0][:200]
        person = found[0] if found else await _take_ticket(token) if token and secret else ""
        if not secret or not person:
            status = 404  # not yet (the socket's connect comes first): the page asks again
        elif not found or time.time() - found[1] > REISSUE_AFTER:
            headers.append((b"set-cookie", set_cookie_header(issue(secret, person), secure, name=name)))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _plausible_legacy(value: str) -> bool:
    return 0 < len(value) <= 64 and all(c.isalnum() or c in "-_" for c in value)


# -- installing it into Reflex ---------------------------------------------------------------------------

_installed = False


def install() -> None:
    """Put the identity on Reflex's socket: once per process, before the first connection.

    Reflex 0.10 mounts its Socket.IO ASGI app itself and offers no hook on the handshake, so the
    class's ``__call__`` is wrapped (the cookie, the Origin check), and the event namespace's
    connect and disconnect (the session id's identity). Both are pinned by ``requirements.txt``.
    """
    global _installed
    if _installed:
        return
    import socketio
    from reflex.app import EventNamespace

    asgi_call = socketio.ASGIApp.__call__
    on_connect = EventNamespace.on_connect
    on_disconnect = EventNamespace.on_disconnect

    async def call(self: Any, scope: Scope, receive: Any, send: Send) -> None:
        if scope.get("type") == "http" and ISSUE_QUERY.encode() in (scope.get("query_string") or b""):
            await serve_cookie(scope, send)
            return
        if scope.get("type") in ("websocket", "http"):
            scope, send = await admit(scope, send)
        await asgi_call(self, scope, receive, send)

    async def connect(self: Any, sid: str, environ: dict, auth: Any = None) -> Any:
        scope = environ.get("asgi.scope") or {}
        if _SCOPE_KEY in scope:  # else unknown (no secret yet): such a tab keeps whom it served, gets nobody new
            bind(sid, str(scope[_SCOPE_KEY] or ""), str(scope.get(_LEGACY_KEY) or ""))
            token = (parse_qs(environ.get("QUERY_STRING", "")).get("token") or [""])[0]
            if scope.get(_ISSUED_KEY) and scope[_SCOPE_KEY] and token:
                await _hold_ticket(token, str(scope[_SCOPE_KEY]))
        try:
            return await on_connect(self, sid, environ, auth)
        except BaseException:
            unbind(sid)
            raise

    def disconnect(self: Any, sid: str) -> Any:
        try:
            return on_disconnect(self, sid)
        finally:
            unbind(sid)

    socketio.ASGIApp.__call__ = call
    EventNamespace.on_connect = connect  # type: ignore[method-assign]
    EventNamespace.on_disconnect = disconnect  # type: ignore[method-assign]
    _installed = True
