"""Runs in flight, reachable from every backend worker: the stop button and liveness.

A run lives in the process that drives it (its HTTP stream, its :class:`~interrupt_chat.agui.AgentSession`).
This registry keeps the process's runs by thread: a :data:`Key` is ``(owner key, thread id)``
(:func:`interrupt_chat.tab.persistence.run_key`), the owner key being ``"<owner>|<chat state's full
name>"``, or ``"tab:<client token>|<chat state's full name>"`` for a tab with nobody. So a stop,
liveness and orphans belong to the thread, whichever tab or worker shows it. A run is held here from
right after its thread's claim is won (the thread database's in-flight mark,
:func:`interrupt_chat.tab.persistence.commit`; without a database, from its start) until its end is
saved: while it is held, the claim has a live driver and nobody reads it as orphaned. When Reflex
keeps its states in Redis (``REFLEX_REDIS_URL`` or ``rx.Config(redis_url=...)``: several workers, or
several instances), it also

- relays a stop: :func:`stop` in a process that does not hold the run publishes the key on a
  channel that every process listens to (one task per process and event loop, started with its
  first run or stop); the process that holds the run stops it;
- announces liveness: each process refreshes a key per run it holds every second, expiring after
  five seconds (:func:`redis_key`; its value is the process's :attr:`Registry.holder`: host, pid and a
  random part), so :func:`alive` tells from any process whether a run still has a driver. A killed
  process stops refreshing: its runs read as dead five seconds later, and the thread's claim is
  ended by whoever finds it (:func:`interrupt_chat.tab.persistence.end_orphaned`).

Without Redis there is one process, and everything is local.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any, Protocol

import reflex as rx
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

__all__ = ["CHANNEL", "FORCED_OWNER", "KEY_PREFIX", "Key", "Registry", "Run", "add", "alive", "detached_context",
           "ended", "local", "remove", "stop"]

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (owner key, thread id): "<owner>|<chat state's full name>" and the thread
CHANNEL = "interrupt_chat:stop"
KEY_PREFIX = "interrupt_chat:run:"
REFRESH_SECONDS = 1.0
TTL_SECONDS = 5.0

# Delete a run's liveness key only if this process still owns it (another may have taken the key over).
_DELETE_IF_MINE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


class Run(Protocol):
    """What the registry needs of a run: a way to stop it, and whether it still runs (``AgentSession`` is one)."""

    @property
    def running(self) -> bool:
        """The run is in flight; False once its stream ended (its end may still be being saved)."""
        ...

    def cancel(self) -> bool:
        """Stop the run; False when nothing was running."""
        ...


def redis_key(key: Key) -> str:
    """The Redis key that says the run ``key`` is alive; it holds the driving process's :attr:`Registry.holder`."""
    return KEY_PREFIX + json.dumps(list(key), separators=(",", ":"))


FORCED_OWNER: contextvars.ContextVar[str] = contextvars.ContextVar("interrupt_chat_forced_owner", default="")
"""The owner key a server-side answer acts for (a decision link, expiry): :mod:`interrupt_chat.approvals.headless`."""


def detached_context() -> contextvars.Context:
    """A copy of the current context (Reflex's registration included) in which no server-side owner is forced.

    Long-lived tasks (a listener, a sweeper, a follow of another tab) start in it: the event that
    happened to start them (a decision link's answer) never lends them its owner.
    """
    context = contextvars.copy_context()
    context.run(FORCED_OWNER.set, "")
    return context


HANDLERS: dict[str, Callable[[Any], None]] = {}  # channel -> handler(data), for every registry (sync.py)


class Registry:
    """The runs this process drives, and their reach across processes through Redis.

    Args:
        redis_url: the Redis server; None (default) takes Reflex's (``rx.config.get_config().redis_url``,
            read at each use), ``""`` means no Redis (local only).
        refresh: seconds between liveness refreshes.
        ttl: seconds a liveness key lives without a refresh.
    """

    def __init__(self, redis_url: str | None = None, *, refresh: float = REFRESH_SECONDS,
                 ttl: float = TTL_SECONDS) -> None:
        """A registry with no runs; Redis is connected on first use."""
        self._url, self.refresh, self.ttl = redis_url, refresh, ttl
        self._holder, self._holder_pid = "", 0
        self._runs: dict[Key, Run] = {}
        self._ends: dict[Key, list[asyncio.Future[None]]] = {}  # who waits for a run's removal (its end saved)
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop the client and the listener belong to
        self._redis: Redis | None = None
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._handlers = HANDLERS  # more channels every process listens to (sync.py registers its own)

    def listening(self) -> bool:
        """Whether this process's listener runs (or there is no Redis to listen to)."""
        return not self.redis_url() or (self._listener is not None and not self._listener.done()
                                        and self._loop is asyncio.get_running_loop())

    async def listen(self) -> None:
        """Start this process's listener now (a worker that has run nothing yet still hears notices)."""
        await self._connect()

    async def publish(self, channel: str, data: str) -> bool:
        """Send ``data`` to every process listening on ``channel``; False without Redis (or when it fails)."""
        redis = await self._connect()
        if redis is None:
            return False
        try:
            await redis.publish(channel, data)
        except Exception as exc:  # noqa: BLE001 - Redis trouble: the caller delivers locally
            log.warning("runs: could not publish on %s: %s", channel, exc)
            return False
        return True

    @property
    def holder(self) -> str:
        """This process's value of its liveness keys (host, pid, a random part); a forked worker gets its own."""
        if self._holder_pid != os.getpid():
            self._holder_pid = os.getpid()
            self._holder = f"{socket.gethostname()}/{self._holder_pid}/{uuid.uuid4().hex[:8]}"
        return self._holder

    def redis_url(self) -> str:
        """The Redis server in use, or ``""`` for none."""
        return self._url if self._url is not None else (rx.config.get_config().redis_url or "")

    def local(self, key: Key) -> Run | None:
        """The run ``key`` when this process drives it."""
        return self._runs.get(key)

    async def add(self, key: Key, run: Run) -> None:
        """Hold ``run`` under its thread's ``key`` (its claim was just won): stoppable anywhere, alive at once."""
        self._runs[key] = run
        redis = await self._connect()
        if redis is not None:
            with contextlib.suppress(asyncio.TimeoutError):  # a stop sent before this subscribes is lost
                await asyncio.wait_for(self._subscribed.wait(), 2.0)
            await self._announce(redis, [key])

    async def remove(self, key: Key, run: Run) -> None:
        """Forget ``run`` (it ended); a newer run under the same key stays."""
        if self._runs.get(key) is not run:
            return
        del self._runs[key]
        for waiter in self._ends.pop(key, []):
            if not waiter.done():
                waiter.set_result(None)
        redis = await self._connect()
        if redis is not None:
            try:
                await redis.eval(_DELETE_IF_MINE, 1, redis_key(key), self.holder)  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - Redis trouble: the key expires by itself
                log.warning("runs: could not clear the liveness of %s: %s", key, exc)

    async def ended(self, key: Key, timeout: float) -> None:
        """Wait until this process no longer holds the run ``key`` (its end is saved), at most ``timeout`` seconds."""
        if key not in self._runs:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._ends.setdefault(key, []).append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            pass
        finally:
            waiters = self._ends.get(key, [])
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters:
                self._ends.pop(key, None)

    async def stop(self, key: Key) -> bool:
        """Stop the run ``key`` wherever it runs. True when this process stopped it or a listener was told."""
        run = self._runs.get(key)
        if run is not None:
            return run.cancel()
        redis = await self._connect()
        if redis is None:
            return False
        try:
            return bool(await redis.publish(CHANNEL, json.dumps(list(key))))
        except Exception as exc:  # noqa: BLE001 - Redis trouble: the stop is lost; say so, keep the worker up
            log.warning("runs: could not send the stop of %s: %s", key, exc)
            return False

    async def alive(self, key: Key) -> bool:
        """Whether the run ``key`` has a driver: this process, else (with Redis) a live liveness key.

        With Redis unreachable the answer is True: a run is never declared dead on a guess.
        """
        if key in self._runs:
            return True
        redis = await self._connect()
        if redis is None:
            return False
        try:
            return bool(await redis.exists(redis_key(key)))
        except Exception as exc:  # noqa: BLE001 - Redis trouble: unknown, so alive
            log.warning("runs: could not read the liveness of %s: %s", key, exc)
            return True

    async def _connect(self) -> Redis | None:
        """The Redis client of the running event loop, its listener started; None without Redis."""
        url = self.redis_url()
        if not url:
            return None
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._redis is None:  # first use, or a new loop (tests, a restarted server)
            self._loop, self._redis, self._listener = loop, Redis.from_url(url), None
            self._subscribed = asyncio.Event()
        if self._listener is None or self._listener.done():
            self._listener = loop.create_task(self._listen(self._redis), name="interrupt_chat.workers.runs",
                                              context=detached_context())  # no event's context lives on in it
        return self._redis

    async def _listen(self, redis: Redis) -> None:
        """The process's listener (runs forever): stop requests in, liveness of the runs held here out."""
        while True:
            try:
                async with redis.pubsub() as pubsub:
                    await pubsub.subscribe(CHANNEL, *self._handlers)
                    self._subscribed.set()
                    await self._serve(redis, pubsub)
            except Exception as exc:  # noqa: BLE001 - Redis trouble: log, retry; never take the worker down
                self._subscribed.clear()
                log.warning("runs: Redis listener failed, retrying: %s", exc)
                await asyncio.sleep(self.refresh)

    async def _serve(self, redis: Redis, pubsub: PubSub) -> None:
        next_refresh = 0.0
        while True:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=self.refresh)
            if message is not None and message.get("type") == "message":
                channel = message.get("channel")
                channel = channel.decode() if isinstance(channel, bytes) else str(channel)
                handler = self._handlers.get(channel)
                if handler is not None:
                    handler(message.get("data"))
                else:
                    self._on_stop(message.get("data"))
            if time.monotonic() >= next_refresh:
                next_refresh = time.monotonic() + self.refresh
                if self._runs:
                    await self._announce(redis, list(self._runs))

    def _on_stop(self, data: Any) -> None:
        """A stop request from the channel: stop the run if this process holds it."""
        try:
            owner, thread_id = json.loads(data)
            key = (str(owner), str(thread_id))
        except (TypeError, ValueError) as exc:
            log.warning("runs: ignoring a malformed stop request: %s", exc)
            return
        run = self._runs.get(key)
        if run is not None:
            run.cancel()

    async def _announce(self, redis: Redis, keys: list[Key]) -> None:
        """Mark these runs alive for ``ttl`` seconds."""
        try:
            async with redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.set(redis_key(key), self.holder, px=int(self.ttl * 1000))
                await pipe.execute()
        except Exception as exc:  # noqa: BLE001 - Redis trouble: retried at the next refresh
            log.warning("runs: could not refresh the liveness of %d run(s): %s", len(keys), exc)


_registry = Registry()


async def add(key: Key, run: Run) -> None:
    """Hold a run that starts in this process (see :meth:`Registry.add`)."""
    await _registry.add(key, run)


async def remove(key: Key, run: Run) -> None:
    """Forget a run that ended (see :meth:`Registry.remove`)."""
    await _registry.remove(key, run)


def local(key: Key) -> Run | None:
    """The run ``key`` when this process drives it."""
    return _registry.local(key)


async def ended(key: Key, timeout: float) -> None:
    """Wait until this process no longer holds the run ``key`` (its end is saved), at most ``timeout`` seconds."""
    await _registry.ended(key, timeout)


async def stop(key: Key) -> bool:
    """Stop the run ``key`` wherever it runs (see :meth:`Registry.stop`)."""
    return await _registry.stop(key)


async def shared_redis() -> Redis | None:
    """The Redis client the workers share (Reflex's), or None for one process without Redis."""
    return await _registry._connect()


async def alive(key: Key) -> bool:
    """Whether the run ``key`` still has a driver somewhere (see :meth:`Registry.alive`)."""
    return await _registry.alive(key)
