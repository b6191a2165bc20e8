"""Server-side notifications: a request that waits, was decided, or expired reaches the app and a webhook.

Two receivers, either or both:

- ``ic.Chat(notify=fn)``: ``fn(notification)`` (sync or async), called in the backend;
- ``INTERRUPT_CHAT_WEBHOOK_URL``: a signed ``POST`` of the notification as JSON. Each request
  carries ``X-Interrupt-Chat-Timestamp`` (Unix seconds) and ``X-Interrupt-Chat-Signature:
  sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with INTERRUPT_CHAT_WEBHOOK_SECRET>`` (see
  :func:`verify`). Without a secret nothing is posted (and that is logged once).

Events: ``pending`` (an interrupt or a frontend-tool call waits for the person), ``decided`` (it
was answered), ``expired``; with people (``Chat(people=...)``) also ``assigned`` (a request waits for
its ``assignees``), ``reminder`` and ``escalated``. A notification (:func:`notification`) names the request and never
carries an answer's payload, a masked value, a header, a secret or the person's identity key: its
``owner`` is the app's user id for a chat with ``owner=fn``, else ``anon-`` and an opaque HMAC of
the key (:func:`interrupt_chat.approvals.links.public_person`). Its ``id`` is stable, for the
receiver's de-duplication: delivery is at least once. Notifications go through an outbox in the
thread database (:mod:`interrupt_chat.store.outbox`; in memory without one), delivered in the
background by whichever worker claims them, retried with exponential backoff
(:data:`MAX_ATTEMPTS`), and given up with a log line. Nothing here blocks or fails a run.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import logging
import os
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
import reflex as rx

from ..agui.sanitize import redact
from ..model.requests import about
from ..store import outbox
from ..store.threads_db import ThreadDBError
from ..workers import runs

__all__ = ["EVENTS", "MAX_ATTEMPTS", "SIGNATURE_HEADER", "TIMESTAMP_HEADER", "WEBHOOK_SECRET_ENV", "WEBHOOK_URL_ENV",
           "emit", "notification", "queue", "requests_of", "sign", "verify"]

if TYPE_CHECKING:
    from ..agui import AgentSession

log = logging.getLogger(__name__)

WEBHOOK_URL_ENV = "INTERRUPT_CHAT_WEBHOOK_URL"
WEBHOOK_SECRET_ENV = "INTERRUPT_CHAT_WEBHOOK_SECRET"
SIGNATURE_HEADER = "X-Interrupt-Chat-Signature"
TIMESTAMP_HEADER = "X-Interrupt-Chat-Timestamp"
EVENTS = ("pending", "decided", "expired", "assigned", "reminder", "escalated")  # the last three: people
MAX_ATTEMPTS = 6  # 1 + 5 retries, 2, 4, 8, 16, 32 s apart
BACKOFF_SECONDS = 2.0
POST_TIMEOUT = 10.0
MESSAGE_CHARS = 500


def _backoff(attempts: int) -> float:
    """Seconds before the next try after ``attempts`` failed ones: 2, 4, 8, 16, 32."""
    return BACKOFF_SECONDS * 2 ** (attempts - 1)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header's value: ``sha256=`` and the hex HMAC-SHA256 of ``<timestamp>.<body>``."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify(secret: str, timestamp: str, body: bytes, signature: str, *, tolerance: float = 300.0,
           now: float | None = None) -> bool:
    """A receiver's check: the signature matches and the timestamp is within ``tolerance`` seconds of now."""
    try:
        age = abs((time.time() if now is None else now) - float(timestamp))
    except ValueError:
        return False
    return age <= tolerance and hmac.compare_digest(sign(secret, timestamp, body), signature)


def notification(event: str, owner_key: str, thread_id: str, *, run_id: str = "", interrupt_id: str = "",
                 reason: str = "", message: str = "", tool: str = "", tool_call_id: str = "",
                 expires_at: str = "", decide_url: str = "", assignees: Sequence[str] | None = None) -> dict[str, Any]:
    """One notification's body (only these fields: never a payload, a masked value, a header or a secret).

    ``assignees`` (``assigned``, ``reminder``, ``escalated``): the person ids and ``role:<name>`` it waits for.

    ``owner`` is :func:`~interrupt_chat.approvals.links.public_person` of ``owner_key``, never the key itself (an
    anonymous visitor's key is their browser's secret); the ``id`` hashes only what the body shows.
    """
    from .links import public_person  # links read the database's secret

    if event not in EVENTS:
        raise ValueError(f"unknown notification event {event!r}")
    request, person = interrupt_id or tool_call_id, public_person(owner_key)
    stable = hashlib.sha256(json.dumps([event, person, _chat_of(owner_key), thread_id, run_id, request,
                                        *([assignees] if assignees is not None else [])]).encode()).hexdigest()[:32]
    extra = {"assignees": list(assignees)} if assignees is not None else {}
    return {**extra, "id": stable, "event": event, "owner": person, "thread_id": thread_id,
            "interrupt_id": interrupt_id, "tool_call_id": tool_call_id, "reason": reason,
            "message": message[:MESSAGE_CHARS], "tool": tool, "expires_at": expires_at,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"), "decide_url": decide_url}


def decisions(owner_key: str, audits: Iterable[Any]) -> list[dict[str, Any]]:
    """One ``decided`` (or ``expired``) notification per recorded decision (``audits.Audit``)."""
    return [notification("expired" if a.action == "expired" else "decided", owner_key, a.thread_id,
                         run_id=a.run_id or "", interrupt_id=a.interrupt_id, reason=a.reason or "", **a.about)
            for a in audits]


def requests_of(event: str, owner_key: str, session: AgentSession) -> list[dict[str, Any]]:
    """One notification per open request of a thread: its set's unanswered interrupts, its waiting tool calls."""
    from ..model.views import tool_rows
    from .links import url_for  # links read the database's secret

    items: list[dict[str, Any]] = []
    pending, thread_id = session.tracker.pending, session.thread_id
    if pending is not None and not session.tracker.sealed:
        run_id = pending.run_id or ""
        if pending.kind == "legacy":
            value = pending.raw_value
            message = value if isinstance(value, str) else (value or {}).get("message", "") if isinstance(
                value, dict) else ""
            items.append(notification(event, owner_key, thread_id, run_id=run_id, message=str(message or "")))
        for interrupt in pending.interrupts:
            if interrupt.id in session.tracker.answers:
                continue
            items.append(notification(
                event, owner_key, thread_id, run_id=run_id, interrupt_id=interrupt.id, reason=interrupt.reason or "",
                **about(session, interrupt.id), expires_at=str(interrupt.expires_at or ""),
                decide_url=url_for(owner_key, session, interrupt.id) if event == "pending" else ""))
    items += [notification(event, owner_key, thread_id, tool=row.name, tool_call_id=row.id)
              for row in tool_rows(session)]
    return items


def wanted(owner_key: str) -> bool:
    """Whether anyone receives this owner's chat's notifications (its ``notify`` function, or the webhook)."""
    return bool(os.environ.get(WEBHOOK_URL_ENV)) or _notify_fn(_chat_of(owner_key)) is not None


async def emit(owner_key: str, items: Iterable[dict[str, Any]]) -> None:
    """Queue notifications of ``owner_key``'s chat for delivery (a no-op when nobody receives them)."""
    items = list(items)
    if not items or not owner_key or not wanted(owner_key):
        return
    await queue(_chat_of(owner_key), items)


async def queue(chat: str, items: Iterable[dict[str, Any]]) -> None:
    """Queue items of ``chat`` (notifications, or mail and Slack: ``body["channel"]``), each once by its ``id``."""
    from ..tab import persistence  # persistence imports this module's callers

    db = persistence.database()
    items = list(items)
    if not items:
        return
    for item in items:
        if db is None:
            _memory.append(outbox.OutboxItem(item["id"], chat, item, 0))
            continue
        try:
            await persistence.db_call(outbox.enqueue, db, item["id"], chat, item)
        except ThreadDBError:  # logged once per outage; the item is lost with the database
            return
    _courier.wake()


CHANNELS: dict[str, Any] = {}  # "deliver": the channels' courier side (approvals/channels/reach.deliver)


def _chat_of(owner_key: str) -> str:
    return owner_key.rsplit("|", 1)[1] if "|" in owner_key else ""


def _notify_fn(chat: str) -> Any:
    if not chat:
        return None
    try:
        return getattr(rx.State.get_class_substate(chat), "notify_fn", None)
    except ValueError:
        return None


_memory: list[outbox.OutboxItem] = []  # without a database: (id, chat, body, attempts)


class _Courier:
    """This process's delivery loop, started on first use in its event loop."""

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._warned = False

    def wake(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._loop is not loop:
            self._loop, self._wake = loop, asyncio.Event()
            self._task = loop.create_task(self._run(), name="interrupt_chat.approvals.notifier",
                                          context=runs.detached_context())
        self._wake.set()

    async def _run(self) -> None:
        task = asyncio.current_task()
        while True:
            try:
                while await self._round():
                    pass
            except Exception:  # never take the worker down
                log.exception("notifications: the delivery loop failed; it goes on")
            if task is not None and task.cancelling():
                # a cancel that reached a delivery was turned into that client's own error (an SMTP client
                # does): end here, or this loop runs on through the event loop's shutdown (a hang at exit)
                raise asyncio.CancelledError
            self._wake.clear()
            # until woken, or a retry falls due (not wait_for: on 3.11 it may swallow a cancel at its timeout)
            waiter = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({waiter}, timeout=BACKOFF_SECONDS)
            finally:
                waiter.cancel()

    async def _round(self) -> bool:
        """Deliver what is due; True when there may be more right away."""
        from ..tab import persistence

        db = persistence.database()
        if db is not None:
            try:
                due = await persistence.db_call(outbox.claim_due, db)
            except ThreadDBError:
                return False
        else:
            due, _memory[:] = list(_memory), []
        for item in due:
            attempts = item.attempts if db is not None else item.attempts + 1
            delivered = await self.deliver(item.chat, item.body)
            if db is not None:
                await self._settle(db, item.id, delivered, attempts)
            elif not delivered and attempts < MAX_ATTEMPTS:
                asyncio.get_running_loop().call_later(_backoff(attempts), _memory.append,
                                                      outbox.OutboxItem(item.id, item.chat, item.body, attempts))
            elif not delivered:
                log.warning("notifications: gave up on %s %s after %d attempts", item.body.get("event"), item.id,
                            attempts)
        return len(due) >= 20

    async def _settle(self, db: Any, item_id: str, delivered: bool, attempts: int) -> None:
        from ..tab import persistence

        try:
            if delivered:
                await persistence.db_call(outbox.finish, db, item_id, delivered=True)
            elif attempts >= MAX_ATTEMPTS:
                log.warning("notifications: gave up on %s after %d attempts", item_id, attempts)
                await persistence.db_call(outbox.finish, db, item_id, delivered=False)
            else:
                await persistence.db_call(outbox.retry_later, db, item_id, _backoff(attempts))
        except ThreadDBError:  # the lease runs out: it is tried again
            pass

    async def deliver(self, chat: str, body: dict[str, Any]) -> bool:
        """Hand one notification to the chat's ``notify`` function and the webhook; True when both took it.

        A channel item (mail, Slack) goes to its channel instead.
        """
        if body.get("channel"):
            deliver = CHANNELS.get("deliver")
            return True if deliver is None else bool(await deliver(body))
        ok = True
        fn = _notify_fn(chat)
        if fn is not None:
            try:
                result = fn(dict(body))
                if inspect.isawaitable(result):
                    await result
            except Exception:  # the app's function: logged, retried
                log.exception("notifications: the chat's notify function raised")
                ok = False
        url = os.environ.get(WEBHOOK_URL_ENV, "")
        if url:
            ok = await self._post(url, body) and ok
        return ok

    async def _post(self, url: str, body: dict[str, Any]) -> bool:
        secret = os.environ.get(WEBHOOK_SECRET_ENV, "")
        if not secret:
            if not self._warned:
                self._warned = True
                log.error("notifications: %s is set but %s is not; webhooks are signed, so none is sent",
                          WEBHOOK_URL_ENV, WEBHOOK_SECRET_ENV)
            return True  # nothing will ever send it: not retried
        raw = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
        stamp = str(int(time.time()))
        headers = {"Content-Type": "application/json", TIMESTAMP_HEADER: stamp,
                   SIGNATURE_HEADER: sign(secret, stamp, raw)}
        try:
            async with httpx.AsyncClient(timeout=POST_TIMEOUT) as client:
                response = await client.post(url, content=raw, headers=headers)
        except httpx.HTTPError as exc:
            log.info("notifications: the webhook at %s failed: %s", redact(url, url), exc)
            return False
        if response.is_success:
            return True
        log.info("notifications: the webhook at %s answered %d", redact(url, url), response.status_code)
        return False


_courier = _Courier()
