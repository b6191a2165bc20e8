"""What a publish of the history costs on the worker's loop (issue 45): unchanged, and after a turn.

``tab.paging.publish`` is what ``driver.publish`` calls for the ``history`` var on every publish with
``full=True``: a send, the click's claim, a run's end (``_surface``), a follower's refresh. Before,
each one made the rows of the *whole* history and a digest of each (``HistoryFeed.update``) to find
what changed: O(history) per call, on the worker's event loop. Now:

- the feed keeps the transcript's history mark (``Transcript.history_mark``) it made its rows at: a
  publish that finds the same mark makes nothing (the claim's, a run's end);
- a row's digest is kept with its message until the message changes (``Transcript.remember``), and
  rows are made only for the delta (``views.HistoryRows``): a send makes its turn's rows only.

Measured on threads of ``_thread.py``'s runs (a user message, an answer with a tool call, its
result: two rows a run), best of ``REPEATS`` calls, for each size, this tree against the way
before, run here in the same process (``HistoryFeed.update`` given the whole ``message_rows``, as
``paging.publish`` called it before):

- **unchanged**: the history as the feed last made it;
- **one turn joined**: a send's publish, after ``mark_tail`` moved the last message into the history
  (the mark moves, so every digest is read again; the new rows' own making, the same whatever the
  history's length, is left out: the same message joins at each call).

Run: ``.venv/bin/python -m benchmarks.history_publish`` (about 10 s).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import build_transcript, start_run, typed_runs, us
from interrupt_chat.agui import AgentSession
from interrupt_chat.model.history import HistoryDelta
from interrupt_chat.tab import paging

RUNS = (25, 100, 250, 500)  # 50 to 1,000 rows of history
REPEATS = 200


class _Chat:
    """What ``paging.publish`` reads and writes of a chat (``paging.Paged``)."""

    def __init__(self) -> None:
        self.history: HistoryDelta[Any] = HistoryDelta()
        self._history_feed = None
        self.dirty_vars: set[str] = set()  # empty: the last delta went out


def _thread(runs: int, events: list[list[Any]]) -> AgentSession:
    session = AgentSession("http://127.0.0.1:9/", thread_id=f"thread-{runs}")
    build_transcript(events[:runs], session.transcript)
    start_run(session.transcript, runs)  # the runs so far are history; this one's user message is the tail
    return session


def _best(call: Any, before: Any = None) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        if before is not None:
            before()
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(runs: int, events: list[list[Any]]) -> tuple[int, float, float, float, float]:
    """Rows, and the seconds of an unchanged publish and of a send's (one turn joined): now, and before."""
    session, chat = _thread(runs, events), _Chat()
    paging.publish(chat, session, reset=True)  # the page holds the newest page
    rows = len(paging.history_rows(session))
    transcript = session.transcript

    def now() -> None:
        paging.publish(chat, session)

    def before() -> None:  # paging.publish before issue 45's change: the rows and their digests made whole
        feed = paging._feed(chat)
        paging._send(chat, feed, feed.update(session.thread_id, paging.history_rows(session)))

    def join() -> None:  # the turn's messages join the history as a send does (nothing else changes)
        transcript.tail_start -= 1
        transcript.mark_tail()

    return rows, _best(now), _best(before), _best(now, join), _best(before, join)


def main() -> None:
    """Print the table."""
    events = typed_runs(max(RUNS), deltas=20)
    print(f"paging.publish with full=True, best of {REPEATS} calls: this tree / before (the rows made whole)")
    print(f"{'history rows':>13} | {'unchanged: now':>14} | {'before':>11} | {'ratio':>6} | "
          f"{'one turn: now':>13} | {'before':>11} | {'ratio':>6}")
    for runs in RUNS:
        rows, same, same_before, joined, joined_before = measure(runs, events)
        print(f"{rows:>13} | {us(same):>14} | {us(same_before)} | {same / same_before:6.3f} | "
              f"{us(joined):>13} | {us(joined_before)} | {joined / joined_before:6.3f}")


if __name__ == "__main__":
    main()
