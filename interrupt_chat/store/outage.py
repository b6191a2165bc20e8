"""The thread database's availability: one log line per outage, and a growing pause between tries.

A database that is down (a wrong URL, a server that is stopped, a locked file) used to be tried,
and logged, on every read and write. :class:`Outage` logs the first failure of an outage with its
cause and when the next try is, skips calls until then (each skipped call fails at once, so the
chat goes on in memory without waiting on timeouts), doubles the pause up to a limit, and logs
once when the database answers again. Framework-free; thread-safe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from .types import ThreadDBError

__all__ = ["FIRST_PAUSE", "LONGEST_PAUSE", "Outage"]

log = logging.getLogger("interrupt_chat.tab.persistence")

FIRST_PAUSE = 2.0  # seconds before the first retry of an outage
LONGEST_PAUSE = 60.0


class Outage:
    """Whether the database is down, since when, and when to try it again.

    Args:
        first: seconds before the first retry.
        longest: the longest pause between tries.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, first: float = FIRST_PAUSE, longest: float = LONGEST_PAUSE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Up, with no failure seen."""
        self.first, self.longest, self._clock = first, longest, clock
        self._lock = threading.Lock()
        self.down_since: float | None = None
        self._pause = first
        self._retry_at = 0.0
        self.failures = 0  # failed tries in the current outage (skipped calls not counted)

    def check(self) -> None:
        """Raise :class:`ThreadDBError` at once while the database is down and its next try is not due."""
        with self._lock:
            if self.down_since is not None and self._clock() < self._retry_at:
                left = self._retry_at - self._clock()
                raise ThreadDBError(f"thread database: unavailable (next try in {left:.0f} s)")

    def failed(self, exc: ThreadDBError) -> None:
        """A call failed: log it if it starts an outage, and pause the next tries."""
        with self._lock:
            now = self._clock()
            if self.down_since is None:
                self.down_since, self._pause, self.failures = now, self.first, 0
                log.warning("%s; the chat keeps working in memory, the next try is in %.0f s", exc, self._pause)
            else:
                self._pause = min(self._pause * 2, self.longest)
                log.debug("%s; next try in %.0f s", exc, self._pause)
            self.failures += 1
            self._retry_at = now + self._pause

    def recovered(self) -> None:
        """A call succeeded: end the outage, if there was one (logged once)."""
        if self.down_since is None:
            return
        with self._lock:
            if self.down_since is None:
                return
            log.warning("thread database: available again after %.0f s (%d failed tries)",
                        self._clock() - self.down_since, self.failures)
            self.down_since, self._pause, self.failures = None, self.first, 0
