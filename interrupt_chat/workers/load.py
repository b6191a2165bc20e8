"""How busy this worker is, from how late a probe timer fires; what the streams do about it.

One per process: every run's push throttle (:mod:`interrupt_chat.tab.driver`) reads it,
so 500 chats on one worker share what the worker can serve. A busy loop fires timers late; then
pushes space out (fewer envelopes) and the agents' streams are read in bigger pieces (fewer
wake-ups, and the deltas of one read are joined before they are applied:
:mod:`interrupt_chat.agui.coalesce`). An idle worker reads and pushes at once
(docs/decisions/0023).
"""

from __future__ import annotations

import asyncio
import weakref

__all__ = ["LOAD_GAIN", "MAX_PUSH_INTERVAL", "PROBE_INTERVAL", "PUSHES_PER_SECOND", "PUSH_INTERVAL", "READ_PAUSE_SHARE",
           "WorkerLoad", "read_pause", "watch"]

PUSHES_PER_SECOND = 20
PUSH_INTERVAL = 1.0 / PUSHES_PER_SECOND  # the shortest tick
MAX_PUSH_INTERVAL = 0.5  # the longest tick a busy worker stretches to (the lag target is 1 s)
LOAD_GAIN = 4.0  # tick = PUSH_INTERVAL + LOAD_GAIN * the worker's smoothed timer lateness
LOAD_SMOOTHING = 0.1
READ_PAUSE_SHARE = 0.5  # of the tick's stretch, waited between two reads of a stream
PROBE_INTERVAL = 0.05  # seconds between two samples of the loop's lateness

_watched: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


class WorkerLoad:
    """The worker's smoothed timer lateness, and the push tick it calls for."""

    lag = 0.0  # seconds, smoothed

    @classmethod
    def sample(cls, late: float) -> None:
        """A timer fired ``late`` seconds after it was due."""
        cls.lag += (max(late, 0.0) - cls.lag) * LOAD_SMOOTHING

    @classmethod
    def interval(cls) -> float:
        """Seconds between two pushes of one run."""
        return min(PUSH_INTERVAL + LOAD_GAIN * cls.lag, MAX_PUSH_INTERVAL)


def watch() -> None:
    """Sample this loop's lateness every :data:`PROBE_INTERVAL` from now on (once per loop; cheap to call again).

    A timer that re-arms itself: the load is known whatever the runs do (pushes that need no timer,
    reads that come in batches) and falls back to 0 when the worker is idle.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if loop not in _watched:
        _watched.add(loop)
        loop.call_later(PROBE_INTERVAL, _probe, loop, loop.time() + PROBE_INTERVAL)


def _probe(loop: asyncio.AbstractEventLoop, due: float) -> None:
    now = loop.time()
    WorkerLoad.sample(now - due)
    loop.call_later(PROBE_INTERVAL, _probe, loop, now + PROBE_INTERVAL)


def read_pause() -> float:
    """Seconds a run's stream waits after a network read before the next (``AgentClient(read_pause=...)``).

    0 while the worker keeps up. Under load, half of what the push tick stretched by: the events
    wait in the socket's buffer instead of in the throttle, and arrive together.
    """
    return (WorkerLoad.interval() - PUSH_INTERVAL) * READ_PAUSE_SHARE
