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
  history's length, is left out: the same message joins at each call);
- **a follower's copy**: a publish of the thread as another tab's follower reads it from the store
  (a new transcript, from the thread's record), which takes the digests the tab's copy kept for the
  messages that are the same (``Transcript.keep_remembered``); the read itself is not timed.

Run: ``.venv/bin/python -m benchmarks.history_publish`` (about 10 s).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import build_transcript, start_run, typed_runs, us
from interrupt_chat.agui import AgentSession
from interrupt_chat.agui.records import session_from_record, session_record
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


def measure(runs: int, events: list[list[Any]]) -> tuple[int, list[tuple[float, float]]]:
    """Rows, and (now, before) seconds: an unchanged publish, a send's (one turn joined), a follower's copy."""
    session, chat = _thread(runs, events), _Chat()
    paging.publish(chat, session, reset=True)  # the page holds the newest page
    rows = len(paging.history_rows(session))
    transcript = session.transcript
    shown = [session]  # what the publish shows: the session, or a follower's copy of it

    def now() -> None:
        paging.publish(chat, shown[0])

    def before() -> None:  # paging.publish before issue 45's change: the rows and their digests made whole
        feed = paging._feed(chat)
        paging._send(chat, feed, feed.update(shown[0].thread_id, paging.history_rows(shown[0])))

    def join() -> None:  # the turn's messages join the history as a send does (nothing else changes)
        transcript.tail_start -= 1
        transcript.mark_tail()

    record = json.dumps(session_record(session))

    def read() -> None:  # a follower's refresh: the thread as the store has it, a new copy (untimed)
        shown[0] = session_from_record(json.loads(record))

    def follow() -> None:  # and the tab's copy it replaces lends it the digests it kept (persistence._replace)
        shown[0].transcript.keep_remembered(transcript)
        now()

    figures = [(_best(now), _best(before)), (_best(now, join), _best(before, join)),
               (_best(follow, read), _best(before, read))]
    return rows, figures


def main() -> None:
    """Print the table."""
    events = typed_runs(max(RUNS), deltas=20)
    print(f"paging.publish with full=True, best of {REPEATS} calls: this tree / before (the rows made whole)")
    print(f"{'history rows':>13} | {'unchanged: now':>14} | {'before':>10} | {'ratio':>6} | "
          f"{'one turn: now':>13} | {'before':>10} | {'ratio':>6} | {'follower: now':>13} | {'before':>10} | "
          f"{'ratio':>6}")
    for runs in RUNS:
        rows, figures = measure(runs, events)
        cells = [f"{us(now):>14} | {us(before)} | {now / before:6.3f}" for now, before in figures]
        print(f"{rows:>13} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
