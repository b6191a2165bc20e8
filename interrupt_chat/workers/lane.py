"""A person's decision first: while one is on its way, the other chats' streams wait (docs/decisions/0037).

A busy worker's event loop runs every chat's reads and pushes in turn; a click, or a card that
surfaces, waits behind them at every step it yields (a database call, a lock, a push). Under
:func:`first` (a hold) the streams of other chats stop at their next step (:func:`blocked`: a
stream's next event, a push) until no hold is left, so the person's steps find the loop free. The
code that runs under a hold, and every task it starts (its resume run), never waits.

The holds are short (the click until the agent answers its resume, a card until it is drawn and the
other tabs are told). However many follow each other, the streams wait at most :data:`MAX_HOLD` in
one go, then go on for at least :data:`GRACE`: they are never starved. A browser can send any event
at any rate, so one tab (a hold's ``key``) opens at most one hold per :data:`KEY_GAP`; what it does
meanwhile is still a person's and never waits, it just stops nobody. Tab tokens cost a browser
nothing: the tabs that have not yet started a run under a hold of theirs (not *proven*) share one
hold per :data:`UNPROVEN_GAP` on the worker, so a page with many made-up tabs cannot keep the
streams stopped.

A hold can open earlier still, when the worker reads the decision's event (:func:`arrive`, installed
by ``ic.tune_events(app)``): the event's trip through Reflex's queues to its handler then finds the
loop free too, and the handler's :func:`first` takes that hold over.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import weakref
from collections.abc import Awaitable, Iterator

__all__ = ["ARRIVAL", "DECISIONS", "GRACE", "HANDED_MAX", "KEY_GAP", "MAX_HOLD", "UNPROVEN_GAP", "Hold", "arrive",
           "blocked", "first", "hand_over", "holding", "started"]

MAX_HOLD = 0.25  # seconds the streams wait at most in one go
GRACE = 0.1  # seconds they then go on, at least, before holds stop them again
KEY_GAP = 1.0  # seconds between two holds of one key (a tab): a flood of clicks stops the streams once
MAX_KEYS = 4096  # keys remembered (the oldest are forgotten: a gap long past), and proven keys
UNPROVEN_GAP = 2.0  # seconds between two holds, on the worker, of tabs that never started a run under one
HANDED_MAX = 2.0  # seconds a hold handed to another task (:func:`hand_over`) lasts at most
ARRIVAL = 0.25  # seconds an arrived event's hold waits for its handler's :func:`first` to take it over
# The event handlers (the last part of an event's name) whose first step is a person's hold: the
# answers of a card in the chat and in the inbox. Their arrival opens the hold (:func:`arrive`).
DECISIONS = frozenset({"resolve", "cancel", "submit_form", "approve_edited",
                       "inbox_resolve", "inbox_cancel", "inbox_submit_form"})

_HOLD: contextvars.ContextVar[Hold | None] = contextvars.ContextVar("interrupt_chat_person_hold", default=None)
_stopped = 0  # the loops whose streams wait now (a fast path for every stream's step)


class _Gate:
    """One loop's holds, and the streams waiting for them to end."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.holds = 0
        self.stopped = False  # the streams wait now
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()  # oldest first
        self.timer: asyncio.TimerHandle | None = None  # the hold's end (MAX_HOLD), or the grace's
        self.free_until = 0.0  # after a hold that ran out: the streams go until then
        self.keys: dict[tuple[bool, str], float] = {}  # (server's?, key): its last hold's opening (oldest first)
        self.arrivals: dict[str, tuple[Hold, asyncio.TimerHandle]] = {}  # an arrived event's, till its handler
        self.proven: dict[str, None] = {}  # the tabs whose hold started a run (oldest first)
        self.unproven_at = -UNPROVEN_GAP  # when the last hold of a tab not proven opened

    def prove(self, key: str) -> None:
        """``key``'s hold started a run: a person's, not a made-up tab's (its holds skip :data:`UNPROVEN_GAP`)."""
        self.proven.pop(key, None)
        self.proven[key] = None
        if len(self.proven) > MAX_KEYS:
            del self.proven[next(iter(self.proven))]

    def opened(self) -> None:
        self.holds += 1
        if not self.stopped and self.timer is None:
            self._stop()

    def closed(self) -> None:
        self.holds -= 1
        if not self.holds:
            self._go()

    def wait(self) -> asyncio.Future[None]:
        """A stream's wait: done when the holds end (its own future: cancelling it cancels nothing else)."""
        waiter = self.loop.create_future()
        self.waiting.append(waiter)
        return waiter

    def _stop(self) -> None:
        global _stopped
        if self.loop.time() < self.free_until:  # the streams' grace: a hold stops them after it
            self.timer = self.loop.call_at(self.free_until, self._again)
            return
        self.stopped = True
        _stopped += 1
        self.timer = self.loop.call_later(MAX_HOLD, self._ran_out)

    def _go(self) -> None:
        global _stopped
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.stopped:
            self.stopped = False
            _stopped -= 1
            self._release()

    def _release(self) -> None:
        """Let every waiting stream go, in the order they stopped.

        All at once: let go a few per turn of the loop, the last of 300 waited a second more on a
        busy worker, and the person gained nothing for it (docs/decisions/0037).
        """
        waiting, self.waiting = self.waiting, collections.deque()
        for waiter in waiting:
            if not waiter.done():  # (a stream cancelled meanwhile)
                waiter.set_result(None)

    def _ran_out(self) -> None:
        self.timer = None
        self._go()
        self.free_until = self.loop.time() + GRACE
        if self.holds:
            self.timer = self.loop.call_at(self.free_until, self._again)

    def _again(self) -> None:
        self.timer = None
        if self.holds and not self.stopped:
            self._stop()


_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Gate] = weakref.WeakKeyDictionary()


class Hold:
    """A person's action on its way on this loop, until :meth:`close` (closing twice is closing once)."""

    __slots__ = ("_gate", "handed", "key", "open")

    def __init__(self, gate: _Gate, stops: bool = True, key: str = "") -> None:
        """Open a hold on ``gate``'s loop: its streams stop at their next step (after a grace, if one runs).

        ``stops``: False for a person's code that stops nobody (its key's gap): closed from the start.
        ``key``: whose it is (proven when its run starts: :func:`started`).
        """
        self._gate, self.open, self.key = gate, stops, key
        self.handed = False  # given to a task of another context (:func:`hand_over`): that task closes it
        if stops:
            gate.opened()

    def close(self) -> None:
        """The person's action is through: when no other hold is open, the streams go on."""
        if self.open:
            self.open = False
            self._gate.closed()


@contextlib.contextmanager
def first(key: str = "", *, server: bool = False) -> Iterator[Hold]:
    """Hold the other chats' streams while this block runs (and until :func:`started`, if that comes first).

    The block, and the tasks started in it, are a person's: they never wait at :func:`blocked`.
    ``key``: whose action it is (a tab's token, a run's thread): one hold per :data:`KEY_GAP` each.
    ``server``: the key is the server's own (a run's thread, a follower), not a browser's: no
    :data:`UNPROVEN_GAP` for it.
    """
    gate = _gate()
    arrived = gate.arrivals.pop(key, None) if key and not server else None
    if arrived is None:
        hold = Hold(gate, _may_stop(gate, key, server), "" if server else key)  # (only a browser's key is proven)
    else:  # the event's hold, taken over; or, if it ran out first, a hold of its own (the key's gap was for it)
        hold, timer = arrived
        timer.cancel()
        if not hold.open:
            hold = Hold(gate, key=key)
    token = _HOLD.set(hold)
    try:
        yield hold
    finally:
        if not hold.handed:
            hold.close()
        _HOLD.reset(token)


def hand_over(context: contextvars.Context) -> Hold | None:
    """Give this context's hold, if any, to a task that will run in ``context`` (a context of its own).

    The task is then a person's (it never waits at :func:`blocked`), and the hold outlives the block
    of :func:`first` that opened it: the task's run closes it when the agent answers
    (:func:`started`, which also proves the hold's key). The task must close it itself when it ends
    without that (:meth:`Hold.close`; closing twice is closing once), and it closes anyway after
    :data:`HANDED_MAX`. Used where a person's click is answered by a run of the server's own (an
    assignee's answer from the inbox, a decision link's page).
    """
    hold = _HOLD.get()
    if hold is not None:
        context.run(_HOLD.set, hold)
        hold.handed = True
        if hold.open:  # an agent slow to answer does not keep the streams stopping: the handler's bound, kept
            hold._gate.loop.call_later(HANDED_MAX, hold.close)
    return hold


def arrive(key: str) -> None:
    """A person's decision event for ``key`` (a tab's token) was just read: the streams stop from now.

    Its handler's :func:`first` with the same key takes the hold over. If the handler has not come
    within :data:`ARRIVAL` (it refused the event, or it is late), the hold closes; a late handler
    still opens its own. One key's events open one such hold per :data:`KEY_GAP`, as :func:`first` does,
    and a key not proven waits for :data:`UNPROVEN_GAP` too.
    """
    gate = _gate()
    if not key or not _may_stop(gate, key):  # (an earlier event's hold of this key is within its gap)
        return
    hold = Hold(gate, key=key)
    gate.arrivals[key] = hold, gate.loop.call_later(ARRIVAL, hold.close)


def _gate() -> _Gate:
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = _Gate(loop)
    return gate


def _may_stop(gate: _Gate, key: str, server: bool = False) -> bool:
    """Whether ``key`` may open a hold now, and if so, that it did.

    Its last is :data:`KEY_GAP` old; a browser's key never proven also waits for the worker's last
    such hold to be :data:`UNPROVEN_GAP` old (a key refused here keeps its gap for later).
    """
    if not key:
        return True
    now, keys, slot = gate.loop.time(), gate.keys, (server, key)  # (a page naming a tab after a thread: apart)
    if now - keys.get(slot, -KEY_GAP) < KEY_GAP:
        return False
    if not server and key not in gate.proven:
        if now - gate.unproven_at < UNPROVEN_GAP:
            return False
        gate.unproven_at = now
    keys.pop(slot, None)
    if not server:
        gate.arrivals.pop(key, None)  # an event's hold whose handler never came: long closed
    keys[slot] = now  # (the newest last: the first are the oldest)
    while len(keys) > MAX_KEYS:
        oldest = next(iter(keys))
        del keys[oldest]
        if not oldest[0]:
            gate.arrivals.pop(oldest[1], None)
    return True


def started() -> None:
    """The run this context's person started has its answer's first event: their hold ends (if any).

    Its key is proven: a person's tab, whose next holds skip :data:`UNPROVEN_GAP`.
    """
    hold = _HOLD.get()
    if hold is not None:
        if hold.key:
            hold._gate.prove(hold.key)
        hold.close()


def holding() -> bool:
    """Whether this context's hold is open: what it does now is a person's decision on its way."""
    hold = _HOLD.get()
    return hold is not None and hold.open


def blocked() -> Awaitable[None] | None:
    """What a stream's next step waits for: None unless a person's hold stops the streams on this loop.

    Called at every step of every stream: without a hold anywhere it reads one global.
    """
    if not _stopped or _HOLD.get() is not None:
        return None
    gate = _gates.get(asyncio.get_running_loop())
    if gate is None or not gate.stopped:
        return None
    return gate.wait()
