"""Expiry that fails closed: ``Chat(on_expiry="cancel")`` sends a set once its last open interrupt expired.

Without the option nothing changes (S11: an expired interrupt can only be cancelled, and a set
goes when the person answers). With it, the backend answers for the person once every unanswered
interrupt of a set has expired: each as ``cancelled`` (its audit entry says ``expired``, by
``expiry``), so the last one sends the set (answers given before stay; an expired approval goes as
cancelled, S11) and the agent runs on, with no tab open. The notifier sends ``expired``.

A sweeper looks every :data:`SWEEP_SECONDS`; exactly one worker runs it at a time (a Redis lock
with several workers; without Redis there is one worker). Every answer it gives is claimed in the
thread database like any other, so a person answering at the same moment and the sweeper never
both send. It starts with the first chat event of a worker; ``app.register_lifespan_task(
ic.expiry_sweeper)`` starts it with the backend, for sets that expire while nobody visits.
"""

from __future__ import annotations

import asyncio
import logging
import typing
from typing import TYPE_CHECKING, Any

from sqlalchemy import Text, cast, or_, select

from ..agui import is_expired
from ..store.schema import threads_table
from ..store.threads_db import ThreadDB, ThreadDBError
from ..tab import hooks, persistence
from ..workers import runs

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["SWEEP_SECONDS", "ensure_running", "expiry_sweeper", "sweep"]

log = logging.getLogger(__name__)

SWEEP_SECONDS = 1.0
LOCK_KEY = "interrupt_chat:expiry-sweeper"
LOCK_MS = 5_000
BATCH = 50


def _chats() -> dict[str, Any]:
    """The chat states with ``on_expiry="cancel"``, by full name."""
    chats = typing.cast("list[type[ChatLike]]", list(hooks.CHATS.values()))
    return {cls.get_full_name(): cls for cls in chats if cls.on_expiry == "cancel"}


def _candidates(db: ThreadDB, names: list[str]) -> list[tuple[str, str]]:
    """(owner key, thread id) of threads of these chats whose pending set has an expiry."""
    t = threads_table
    owners = [t.c.owner.like(f"%|{name}") for name in names]
    with db._transaction("find expiring sets") as conn:
        rows = conn.execute(select(t.c.owner, t.c.thread_id).where(
            (t.c.pending_count > 0) & cast(t.c.pending, Text).like("%expiresAt%")
            & or_(*owners)).limit(BATCH)).all()
    return [(row[0], row[1]) for row in rows]


def _swept() -> bool:
    """Whether a chat needs the sweeper: one that sends expired sets, or one with people (reminders, escalation)."""
    return bool(_chats()) or any(getattr(cls, "people", None) is not None for cls in list(hooks.CHATS.values()))


async def sweep() -> int:
    """One pass: the people's reminders and escalations due, then the sets whose last open interrupt expired.

    Returns how many sets were sent.
    """
    from . import headless  # it answers through the chat's own path (which imports the driver, which starts this)
    from .people.sweep import remind

    await remind()
    chats, db = _chats(), persistence.database()
    if not chats or db is None:
        return 0
    sent = 0
    for owner_key, thread_id in await persistence.db_read(_candidates, db, list(chats)):
        stored = await persistence.db_read(db.read, owner_key, thread_id)
        if stored is None or stored.in_flight:
            continue
        tracker = stored.session.tracker
        pending = tracker.pending
        if pending is None or tracker.sealed or pending.kind != "standard":
            continue
        now = tracker.now()
        open_ = [i for i in pending.interrupts if i.id not in tracker.answers]
        if not open_ or not all(is_expired(i, now) for i in open_):
            continue
        chat_cls = chats[owner_key.rsplit("|", 1)[1]]
        for interrupt in open_:  # the last one sends the set (its resume runs in the background)
            answered = await headless.answer(chat_cls, owner_key, thread_id, "cancel", None, interrupt.id,
                                             pending.run_id or "", "expiry")
            if not answered.recorded:
                break
        else:
            sent += 1
    return sent


async def expiry_sweeper() -> None:
    """Sweep forever (a lifespan task, or started by the first chat event); one worker at a time."""
    holder = runs._registry.holder
    task = asyncio.current_task()
    while True:
        try:
            if await _lead(holder):
                await sweep()
        except ThreadDBError:  # logged once per outage (db_call)
            pass
        except Exception:  # never take the worker down
            log.exception("expiry: the sweep failed; it goes on")
        if task is not None and task.cancelling():  # a cancel some client turned into its own error: stop
            raise asyncio.CancelledError
        await asyncio.sleep(SWEEP_SECONDS)


async def _lead(holder: str) -> bool:
    """Whether this worker sweeps now: it holds (or takes) the Redis lock; always, without Redis."""
    registry = runs._registry
    if not registry.redis_url():
        return True
    redis = await registry._connect()
    if redis is None:
        return True
    try:
        if await redis.set(LOCK_KEY, holder, nx=True, px=LOCK_MS):
            return True
        if (await redis.get(LOCK_KEY) or b"").decode() == holder:
            await redis.pexpire(LOCK_KEY, LOCK_MS)
            return True
    except Exception as exc:  # noqa: BLE001 - Redis trouble: nobody sweeps until it is back (fails closed later)
        log.warning("expiry: could not take the sweeper's lock: %s", exc)
    return False


_task: asyncio.Task[None] | None = None


def ensure_running() -> None:
    """Start this worker's sweeper if a chat asks for it (called by chat events; cheap)."""
    global _task
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if _task is not None and not _task.done() and _task.get_loop() is loop:
        return
    if _swept():
        _task = loop.create_task(expiry_sweeper(), name="interrupt_chat.approvals.expiry",
                                 context=runs.detached_context())
