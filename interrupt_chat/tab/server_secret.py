"""The server secret, and what is keyed by it: how a person is named outside the server.

``INTERRUPT_CHAT_SECRET``, else a secret kept in the thread database (one for every worker), else
one made by this process. Decision links (:mod:`interrupt_chat.approvals.links`) are signed with
it; notifications and ``on_feedback`` name an anonymous person by an HMAC under it, never by key.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from typing import TYPE_CHECKING, Any

import reflex as rx

from ..store import secrets as stored_secrets
from ..store.types import ThreadDBError
from .persistence import database, db_call

if TYPE_CHECKING:
    from ..store.threads_db import ThreadDB

__all__ = ["ANONYMOUS_PREFIX", "SECRET_ENV", "keyed", "owner_hash", "public_person", "ready", "secret"]

log = logging.getLogger(__name__)

SECRET_ENV = "INTERRUPT_CHAT_SECRET"
ANONYMOUS_PREFIX = "anon-"  # public_person of a visitor without the app's login


def keyed(purpose: str, text: str) -> str:
    """An HMAC-SHA256 of ``text`` under a key derived from the server secret for ``purpose`` (32 hex chars)."""
    key = hmac.new(secret(), f"interrupt_chat {purpose}".encode(), hashlib.sha256).digest()
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()[:32]


def owner_hash(owner_key: str) -> str:
    """What a link says of its owner: an HMAC of the key under the server secret, never the key."""
    return keyed("link owner", owner_key)


def public_person(owner_key: str, chat_cls: Any = None) -> str:
    """How a person is named outside the server (notifications, webhooks, ``on_feedback``): never their key.

    A chat with ``owner=fn`` names people by the app's own user id (the owner part of the key),
    unless it has the form of a browser identity (22 URL-safe characters: what ``ic.ANONYMOUS`` gives);
    an anonymous visitor, whose key is their browser's secret, is ``anon-`` and an HMAC of it
    under the server secret: stable while the secret is, and useless for signing in.

    Args:
        owner_key: ``<owner>|<chat state's full name>``.
        chat_cls: the chat's state class (else found from the key's chat name).
    """
    if not owner_key:
        return ""
    owner, _, chat = owner_key.rpartition("|") if "|" in owner_key else (owner_key, "", "")
    if chat_cls is None and chat:
        try:
            chat_cls = rx.State.get_class_substate(chat)
        except ValueError:
            chat_cls = None
    if chat_cls is not None and getattr(chat_cls, "owner_fn", None) is not None and not _browser_like(owner):
        return owner
    return ANONYMOUS_PREFIX + keyed("person", owner)


def _browser_like(owner: str) -> bool:
    """An id of the form of a browser's anonymous identity (``owner=fn`` gave ``ic.ANONYMOUS``): never shown."""
    return len(owner) == BROWSER_ID_CHARS and all(c.isascii() and (c.isalnum() or c in "-_") for c in owner)


BROWSER_ID_CHARS = 22  # a browser identity: 128 random bits, URL-safe base64 (tab/identity.issue)
_process_secret = secrets.token_hex(32)  # without a database and without INTERRUPT_CHAT_SECRET: this process's


def secret() -> bytes:
    """The server secret: ``INTERRUPT_CHAT_SECRET``, else the one kept in the thread database, else this process's."""
    configured = os.environ.get(SECRET_ENV)
    if configured:
        return configured.encode()
    db = database()
    return (_stored(db) if db is not None else _process_secret).encode()


_cache: dict[str, str] = {}


async def ready() -> None:
    """Read the stored link secret off the event loop once (later links are signed from memory)."""
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
