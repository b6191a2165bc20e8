"""What a publish of the history costs when the history did not change (the claim's, a run's end): issue 45.

``tab.paging.publish`` is what ``driver.publish`` calls for the ``history`` var on every publish with
``full=True``: a send, the click's claim, a run's end (``_surface``), a follower's refresh. Before,
each one built the rows of the *whole* history and a digest of each row (``HistoryFeed.update``)
to find that nothing changed: O(history) per call, on the worker's event loop. Now the feed keeps
the transcript's history mark (``Transcript.history_mark``) it made its rows at, and a publish that
finds the same mark makes none.

Measured on threads of ``_thread.py``'s runs (a user message, a streamed answer with a tool call,
its result: two rows a run), best of ``REPEATS`` calls, for each size:

- **unchanged, this tree**: ``paging.publish`` with the history as the feed last made it;
- **unchanged, made again**: the same call with the feed's mark forgotten first, which is what
  every such publish did before (the baseline, measured here in the same run);
- **one turn joined** (for reference): a send's publish, after ``mark_tail`` moved the last turn
  into the history. Both ways make the rows then.

Run: ``.venv/bin/python -m benchmarks.history_publish`` (about 10 s).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import build_transcript, start_run, typed_runs, us  # noqa: E402
from interrupt_chat.agui import AgentSession  # noqa: E402
from interrupt_chat.model.history import HistoryDelta  # noqa: E402
from interrupt_chat.tab import paging  # noqa: E402

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


def measure(runs: int, events: list[list[Any]]) -> tuple[int, float, float, float]:
    """Rows, and the seconds of: an unchanged publish, the same made again, a send's (one turn joined)."""
    session, chat = _thread(runs, events), _Chat()
    paging.publish(chat, session, reset=True)  # the page holds the newest page
    rows = len(paging.history_rows(session))

    def publish() -> None:
        paging.publish(chat, session)

    def forget() -> None:
        chat._history_feed.mark = None  # type: ignore[attr-defined]

    same = _best(publish)
    again = _best(publish, forget)
    transcript = session.transcript

    def join() -> None:  # the turn's messages join the history as a send does (nothing else changes)
        transcript.tail_start -= 1
        transcript.mark_tail()

    joined = _best(publish, join)
    return rows, same, again, joined


def main() -> None:
    events = typed_runs(max(RUNS), deltas=20)
    print("paging.publish with full=True, best of", REPEATS, "calls (this tree; baseline: the rows made again)")
    print(f"{'history rows':>13} | {'unchanged':>11} | {'made again':>11} | {'ratio':>6} | {'one turn joined':>15}")
    for runs in RUNS:
        rows, same, again, joined = measure(runs, events)
        print(f"{rows:>13} | {us(same)} | {us(again)} | {same / again:6.3f} | {us(joined):>15}")


if __name__ == "__main__":
    main()
