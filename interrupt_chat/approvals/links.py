"""Decision links: ``<public base>/decide/<token>`` answers one interrupt from any browser, once.

A token is ``<payload>.<signature>``, both unpadded base64url: the payload is JSON ``{"t": thread
id, "i": interrupt id, "r": the run that raised it, "h": a keyed hash of the owner key, "e": expiry
(Unix seconds)}``, the signature its HMAC-SHA256 with the server secret (``INTERRUPT_CHAT_SECRET``,
else one generated once and kept in the thread database). Only the canonical spelling of a token
parses (one link, one string), and a use is keyed on what the payload says, not on its spelling.
A link expires with its interrupt's ``expiresAt``, else after ``INTERRUPT_CHAT_LINK_HOURS`` (24).
Each works once (a use is a row in the database); the answer itself is claimed like every other
(docs/decisions/0016). No link is made for an interrupt that asks for a secret (S23): that is
typed in the app. See docs/decisions/0019.

A person's identity key never leaves the server (a browser's anonymous key is as good as its
session): outside it, :func:`public_person` names them, and a link carries only an HMAC of the
key under the server secret, which nobody without the secret can invert or test guesses against.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import reflex as rx

from ..agui.interrupts import holds_secret
from ..tab import server_secret
from ..tab.server_secret import ANONYMOUS_PREFIX, SECRET_ENV, owner_hash, public_person, ready

if TYPE_CHECKING:
    from ..agui import AgentSession

__all__ = ["ANONYMOUS_PREFIX", "DECIDE_PATH", "LINK_HOURS_ENV", "PUBLIC_URL_ENV", "SECRET_ENV", "Link", "make",
           "parse", "public_person", "ready", "url_for"]

log = logging.getLogger(__name__)

PUBLIC_URL_ENV = "INTERRUPT_CHAT_PUBLIC_URL"
LINK_HOURS_ENV = "INTERRUPT_CHAT_LINK_HOURS"
DECIDE_PATH = "/decide/"
TOKEN_CHARS = 2_000  # a longer "token" is not one of ours
_B64URL = re.compile(r"[A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Link:
    """What a valid token says."""

    thread_id: str
    interrupt_id: str
    run_id: str
    owner_hash: str
    expires: float  # Unix seconds
    person: str = ""  # the recipient it was made for (people: a mail's or a Slack message's); "" for the owner

    @property
    def expired(self) -> bool:
        """Past its expiry."""
        return time.time() >= self.expires

    @property
    def use_id(self) -> str:
        """The link's id in the table of used links: what it says, however it was spelled."""
        said = json.dumps([self.thread_id, self.interrupt_id, self.run_id, self.owner_hash, int(self.expires),
                           *([self.person] if self.person else [])])
        return hashlib.sha256(said.encode()).hexdigest()[:32]


def make(owner_key: str, thread_id: str, interrupt_id: str, run_id: str, expires: float, person: str = "") -> str:
    """A signed token for one interrupt of one thread (``person``: the recipient who decides by it, people)."""
    fields = {"t": thread_id, "i": interrupt_id, "r": run_id, "h": owner_hash(owner_key), "e": int(expires)}
    payload = json.dumps({**fields, "p": person} if person else fields, separators=(",", ":")).encode()
    body = _b64(payload)
    return f"{body}.{_b64(_sign(body))}"


def parse(token: str) -> Link | None:
    """The link a token names, if it is spelled as :func:`make` spells it and signed (expired or not); else None."""
    if not isinstance(token, str) or len(token) > TOKEN_CHARS or token.count(".") != 1:
        return None
    body, signature = token.split(".")
    try:
        if not hmac.compare_digest(_unb64(signature), _sign(body)):
            return None
        raw = json.loads(_unb64(body))
        fields = raw["t"], raw["i"], raw["r"], raw["h"]
        person = raw.get("p", "")
        if not all(isinstance(f, str) for f in (*fields, person)) or type(raw["e"]) is not int:
            return None
        return Link(*fields, float(raw["e"]), person)
    except (ValueError, KeyError, TypeError):
        return None


def url_for(owner_key: str, session: AgentSession, interrupt_id: str, person: str = "") -> str:
    """The decision link of one open interrupt, or "" (a secret to type, a legacy set, no interrupt).

    ``person``: the recipient it is for (people): deciding by it records them as the actor.
    """
    pending = session.tracker.pending
    interrupt = next((i for i in pending.interrupts if i.id == interrupt_id), None) if pending else None
    if pending is None or interrupt is None or holds_secret(interrupt.response_schema):
        return ""
    hours = _hours()
    expires = time.time() + hours * 3600
    if interrupt.expires_at:
        from ..agui import parse_expiry

        at = parse_expiry(interrupt.expires_at)
        if at is not None:
            expires = min(expires, at.timestamp())
    return public_base() + DECIDE_PATH + make(owner_key, session.thread_id, interrupt_id, pending.run_id or "",
                                              expires, person)


def public_base() -> str:
    """Where people open the app: ``INTERRUPT_CHAT_PUBLIC_URL``, else Reflex's ``deploy_url``."""
    base = os.environ.get(PUBLIC_URL_ENV) or rx.config.get_config().deploy_url or "http://localhost:3000"
    return base.rstrip("/")


def _hours() -> float:
    try:
        return max(0.0, float(os.environ.get(LINK_HOURS_ENV) or 24))
    except ValueError:
        return 24.0


def _sign(body: str) -> bytes:
    return hmac.new(server_secret.secret(), body.encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """Strict: the unpadded base64url alphabet only, and only the one spelling :func:`_b64` gives."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:  # unused low bits set: another spelling of the same bytes
        raise ValueError("not the canonical spelling")
    return data
