"""Where the thread database's calls run: one writer thread and a few readers, off the loop's default pool.

A :class:`~interrupt_chat.store.threads_db.ThreadDB` makes its writes one at a time (one lock per
process: what it remembers of each thread follows the database). On the event loop's default pool,
writes waiting for that lock held its threads, and reads queued behind them: a tab's check before
it acts, the thread list. At 500 chats on one worker, those reads waited a second and more
(docs/decisions/0023). Here writes queue in a thread of their own, reads never wait for them, and
the default pool is left to the app (Reflex writes its states there).

A person's action goes first (docs/decisions/0029): the calls made under :func:`first` (a tab's
check before it acts, the claim, a request's surfacing) take the next free thread of their lane,
ahead of the calls already waiting there (other chats' saves), in arrival order among themselves.
A call that a person waits on by name goes before those (:func:`hurry`): a send right after its own
answer ended waits for that answer's end to be saved, queued as an ordinary save. A call that runs
is never interrupted.

Calls made under :func:`together` (the thread saves on SQLite) are taken several at a time when
they wait side by side at one level: they run in one transaction (docs/decisions/0030), and their
callers hear of them once it is committed. If one of them fails, the transaction is rolled back
and each call runs again on its own, so every caller gets what its call alone would have given.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import functools
import itertools
import os
import queue
import threading
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

__all__ = ["BATCH", "READERS", "URGENT", "Batch", "first", "hurriable", "hurry", "run", "together"]

READERS = 4  # reads at once (each holds a pooled connection while it runs)
BATCH = 16  # calls at most in one transaction (they wait for its commit; so does a call queued behind it)
T = TypeVar("T")


class Batch(Protocol):
    """One transaction for several calls (:func:`together`): ``failed`` once something in it failed."""

    failed: bool


Group = Callable[[], contextlib.AbstractContextManager[Batch]]

URGENT: contextvars.ContextVar[bool] = contextvars.ContextVar("interrupt_chat_db_urgent", default=False)
"""Whether this context's database calls go ahead of the waiting ones (set by :func:`first`)."""

_KEY: contextvars.ContextVar[Hashable | None] = contextvars.ContextVar("interrupt_chat_db_key", default=None)
_GROUP: contextvars.ContextVar[Group | None] = contextvars.ContextVar("interrupt_chat_db_group", default=None)
_Item = tuple[int, int, Callable[[], Any] | None, Future[Any] | None, Group | None]
_Call = tuple[Callable[[], Any], Future[Any]]
HURRIED, URGENT_LEVEL, NORMAL, STOP = 0, 1, 2, 3  # the order the waiting calls are taken in


class _Lane:
    """Threads that take the waiting calls urgent first, then in the order they came."""

    def __init__(self, threads: int, name: str) -> None:
        self._queue: queue.PriorityQueue[_Item] = queue.PriorityQueue()
        self._order = itertools.count()
        self._size, self._name = threads, name
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._take = threading.Lock()  # a hurried call is queued twice: one thread takes it

    def submit(self, call: Callable[[], T], urgent: bool, group: Group | None = None) -> Future[T]:
        return self.put(call, URGENT_LEVEL if urgent else NORMAL, group)[1]

    def put(self, call: Callable[[], T], level: int, group: Group | None = None) -> tuple[_Item, Future[T]]:
        """Queue ``call`` at ``level`` (:data:`HURRIED` first): the queued item (to promote) and its future."""
        future: Future[T] = Future()
        item: _Item = (level, next(self._order), call, future, group)
        self._queue.put(item)
        with self._lock:
            if len(self._threads) < self._size and self._queue.qsize() > 0:
                thread = threading.Thread(target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
        return item, future

    def promote(self, item: _Item) -> None:
        """Queue ``item`` again, ahead of every waiting call but the hurried ones; its first copy taken runs."""
        _, _, call, future, group = item
        if future is not None and not future.done() and not future.running():
            self._queue.put((HURRIED, next(self._order), call, future, group))

    def _work(self) -> None:
        while True:
            level, _, call, future, group = self._queue.get()
            if call is None or future is None:  # stop (at exit)
                return
            if not self._claim(future):
                continue
            if group is None:
                _answer(call, future)
            else:
                _together(group, (call, future), functools.partial(self._next_of, level, group))
            del call, future, group  # nothing of a finished call stays alive while the thread waits

    def _claim(self, future: Future[Any]) -> bool:
        """Mark ``future`` running; False: its other copy ran (hurried), or its caller gave up."""
        with self._take:
            return not (future.running() or future.done()) and future.set_running_or_notify_cancel()

    def _next_of(self, level: int, group: Group) -> _Call | None:
        """The call waiting first, taken off the queue if it is ``group``'s at ``level``; else None (it stays)."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return None
            _, _, call, future, its_group = item
            if item[0] != level or its_group != group or call is None or future is None:
                self._queue.put(item)  # its place in the queue is its (level, order): it is taken next
                return None
            if self._claim(future):
                return call, future

    def stop(self, timeout: float) -> None:
        """Let the waiting calls finish (a save must not be lost at exit), then end the threads."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._queue.put((STOP, next(self._order), None, None, None))
        for thread in threads:
            thread.join(timeout)


def _answer(call: Callable[[], T], future: Future[T]) -> None:
    try:
        result = call()
    except BaseException as exc:  # noqa: BLE001 - handed to the caller, as an executor does
        future.set_exception(exc)
    else:
        future.set_result(result)


def _together(group: Group, first: _Call, more: Callable[[], _Call | None]) -> None:
    """Run ``first`` and the calls ``more`` gives in one transaction, answered once it is committed.

    A call is taken only once the one before it ran, so a call that must go first (urgent, hurried)
    queued meanwhile ends the batch: it waits for one call and the commit, not for the whole batch.
    On a failure the batch is rolled back, and each call runs again on its own.
    """
    following = more()
    if following is None:
        _answer(*first)
        return
    taken: list[_Call] = [first, following]  # claimed: each is answered, here or on its own
    results: list[Any] = []
    try:
        with group() as batch:
            while len(results) < len(taken):
                results.append(taken[len(results)][0]())
                if batch.failed:
                    raise _Again
                if len(results) == len(taken) < BATCH and (following := more()) is not None:
                    taken.append(following)
    except BaseException:  # noqa: BLE001 - rolled back: each call runs again on its own, its error its own
        for call, future in taken:
            _answer(call, future)
        return
    for (_, future), result in zip(taken, results, strict=True):
        future.set_result(result)


class _Again(Exception):
    """A call of a batch failed: roll the batch back."""


_lanes: dict[bool, _Lane] = {}
_lock = threading.Lock()


def _lane(write: bool) -> _Lane:
    with _lock:
        lane = _lanes.get(write)
        if lane is None:
            name = "interrupt_chat-db-" + ("write" if write else "read")
            lane = _lanes[write] = _Lane(1 if write else READERS, name)
        return lane


def _forget() -> None:  # a forked worker has none of its parent's threads: it starts its own lanes
    _lanes.clear()


os.register_at_fork(after_in_child=_forget)


@atexit.register
def _stop() -> None:
    for lane in list(_lanes.values()):
        lane.stop(timeout=5.0)


@contextlib.contextmanager
def first(when: bool = True) -> Iterator[None]:
    """The database calls made in this block go first, ``when`` so (a task started in it would inherit that)."""
    token = URGENT.set(when or URGENT.get())
    try:
        yield
    finally:
        URGENT.reset(token)


_queued: dict[Hashable, list[tuple[_Lane, _Item]]] = {}  # the waiting calls made under hurriable(key)
_hurried: dict[Hashable, int] = {}  # the keys somebody waits on now (how many of them)
_keys = threading.Lock()  # (loops in several threads may share the lanes)


@contextlib.contextmanager
def together(group: Group | None) -> Iterator[None]:
    """The writes made in this block may share a transaction made by ``group`` (None: each its own).

    ``group()`` opens the transaction that the calls run in, on the writer thread; it commits when
    the block ends without an error. A failure inside a call must set the batch's ``failed``.
    """
    token = _GROUP.set(group)
    try:
        yield
    finally:
        _GROUP.reset(token)


@contextlib.contextmanager
def hurriable(key: Hashable | None) -> Iterator[None]:
    """The database calls made in this block can be hurried by ``key`` (:func:`hurry`; None: they cannot)."""
    token = _KEY.set(key)
    try:
        yield
    finally:
        _KEY.reset(token)


@contextlib.contextmanager
def hurry(key: Hashable) -> Iterator[None]:
    """While this block runs, the calls made under ``hurriable(key)`` go before all others.

    Those already waiting are queued again at the front; those made meanwhile are queued there.
    """
    with _keys:
        _hurried[key] = _hurried.get(key, 0) + 1
        waiting = list(_queued.get(key, ()))
    for lane, item in waiting:
        lane.promote(item)
    try:
        yield
    finally:
        with _keys:
            _hurried[key] -= 1
            if not _hurried[key]:
                del _hurried[key]


async def run(fn: Callable[..., T], *args: Any, write: bool, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the writer thread (``write``) or a reader thread, in this context's copy."""
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    lane, key, group = _lane(write), _KEY.get(), _GROUP.get() if write else None
    if key is None:
        return await asyncio.wrap_future(lane.submit(call, URGENT.get(), group))
    with _keys:
        level = HURRIED if key in _hurried else URGENT_LEVEL if URGENT.get() else NORMAL
        entry = lane.put(call, level, group)
        _queued.setdefault(key, []).append((lane, entry[0]))
    try:
        return await asyncio.wrap_future(entry[1])
    finally:
        with _keys:
            waiting = _queued.get(key, [])
            waiting.remove((lane, entry[0]))
            if not waiting:
                _queued.pop(key, None)
