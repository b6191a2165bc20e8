"""Decision links: ``<public base>/decide/<token>`` answers one interrupt from any browser, once.

A token is ``<payload>.<signature>``, both base64url: the payload is JSON ``{"t": thread id, "i":
interrupt id, "r": the run that raised it, "h": a hash of the owner key, "e": expiry (Unix
seconds)}``, the signature its HMAC-SHA256 with the link secret (``INTERRUPT_CHAT_SECRET``, else
one generated once and kept in the thread database). The owner key itself never appears in a
link (the default owner is a browser's cookie). A link expires with its interrupt's
``expiresAt``, else after ``INTERRUPT_CHAT_LINK_HOURS`` (24). Each works once (a use is a row in
the database); the answer itself is claimed like every other (docs/decisions/0016). No link is
made for an interrupt that asks for a secret (S23): that is typed in the app. See
docs/decisions/0019.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import reflex as rx

from .agui.interrupts import is_secret_schema
from .store import secrets as stored_secrets
from .store.types import ThreadDBError

if TYPE_CHECKING:
    from .agui import AgentSession
    from .threads_db import ThreadDB

__all__ = ["DECIDE_PATH", "LINK_HOURS_ENV", "PUBLIC_URL_ENV", "SECRET_ENV", "Link", "make", "parse", "ready",
           "token_id", "url_for"]

log = logging.getLogger(__name__)

SECRET_ENV = "INTERRUPT_CHAT_SECRET"
PUBLIC_URL_ENV = "INTERRUPT_CHAT_PUBLIC_URL"
LINK_HOURS_ENV = "INTERRUPT_CHAT_LINK_HOURS"
DECIDE_PATH = "/decide/"
TOKEN_CHARS = 2_000  # a longer "token" is not one of ours


@dataclass(frozen=True)
class Link:
    """What a valid token says."""

    thread_id: str
    interrupt_id: str
    run_id: str
    owner_hash: str
    expires: float  # Unix seconds

    @property
    def expired(self) -> bool:
        """Past its expiry."""
        return time.time() >= self.expires


def owner_hash(owner_key: str) -> str:
    """What a link says of its owner: a hash, never the key."""
    return hashlib.sha256(owner_key.encode()).hexdigest()[:32]


def make(owner_key: str, thread_id: str, interrupt_id: str, run_id: str, expires: float) -> str:
    """A signed token for one interrupt of one thread."""
    payload = json.dumps({"t": thread_id, "i": interrupt_id, "r": run_id, "h": owner_hash(owner_key),
                          "e": int(expires)}, separators=(",", ":")).encode()
    body = _b64(payload)
    return f"{body}.{_b64(_sign(body))}"


def parse(token: str) -> Link | None:
    """The link a token names, if its signature holds (expired or not); None for anything else."""
    if not isinstance(token, str) or len(token) > TOKEN_CHARS or token.count(".") != 1:
        return None
    body, signature = token.split(".")
    try:
        if not hmac.compare_digest(_unb64(signature), _sign(body)):
            return None
        raw = json.loads(_unb64(body))
        return Link(str(raw["t"]), str(raw["i"]), str(raw.get("r") or ""), str(raw["h"]), float(raw["e"]))
    except (ValueError, KeyError, TypeError):
        return None


def token_id(token: str) -> str:
    """A token's id in the table of used links."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


def url_for(owner_key: str, session: AgentSession, interrupt_id: str) -> str:
    """The decision link of one open interrupt, or "" (a secret to type, a legacy set, no interrupt)."""
    pending = session.tracker.pending
    interrupt = next((i for i in pending.interrupts if i.id == interrupt_id), None) if pending else None
    if pending is None or interrupt is None or _asks_for_secret(interrupt.response_schema):
        return ""
    hours = _hours()
    expires = time.time() + hours * 3600
    if interrupt.expires_at:
        from .agui import parse_expiry

        at = parse_expiry(interrupt.expires_at)
        if at is not None:
            expires = min(expires, at.timestamp())
    return public_base() + DECIDE_PATH + make(owner_key, session.thread_id, interrupt_id, pending.run_id or "",
                                              expires)


def public_base() -> str:
    """Where people open the app: ``INTERRUPT_CHAT_PUBLIC_URL``, else Reflex's ``deploy_url``."""
    base = os.environ.get(PUBLIC_URL_ENV) or rx.config.get_config().deploy_url or "http://localhost:3000"
    return base.rstrip("/")


def _asks_for_secret(schema: Any) -> bool:
    """A masked field anywhere in the schema (S23)."""
    if not isinstance(schema, dict):
        return False
    if is_secret_schema(schema):
        return True
    nested = [*(schema.get("properties") or {}).values(), schema.get("items"), schema.get("additionalProperties")]
    return any(_asks_for_secret(part) for part in nested if isinstance(part, dict))


def _hours() -> float:
    try:
        return max(0.0, float(os.environ.get(LINK_HOURS_ENV) or 24))
    except ValueError:
        return 24.0


_process_secret = secrets.token_hex(32)  # without a database and without INTERRUPT_CHAT_SECRET: this process's


def _secret() -> bytes:
    configured = os.environ.get(SECRET_ENV)
    if configured:
        return configured.encode()
    from .persistence import database

    db = database()
    return (_stored(db) if db is not None else _process_secret).encode()


_cache: dict[str, str] = {}


async def ready() -> None:
    """Read the stored link secret off the event loop once (later links are signed from memory)."""
    from .persistence import database, db_call

    db = database()
    if os.environ.get(SECRET_ENV) or db is None or db.url in _cache:
        return
    try:
        _cache[db.url] = await db_call(stored_secrets.secret, db, "link")
    except ThreadDBError:
        return


def _stored(db: ThreadDB) -> str:
    if db.url not in _cache:
        try:
            _cache[db.url] = stored_secrets.secret(db, "link")
        except ThreadDBError:  # the database is down: links made now fail later (their signature is checked)
            log.warning("decision links: the link secret could not be read from the thread database")
            return _process_secret
    return _cache[db.url]


def _sign(body: str) -> bytes:
    return hmac.new(_secret(), body.encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
