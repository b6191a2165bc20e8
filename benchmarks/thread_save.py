"""What does saving a thread cost after one new message, as the thread grows? (no network, no Reflex)

Threads of 10, 100 and 600 messages (runs of ``_thread.py``: a user message, an answer with a tool
call on it, the call's result; topped up with user messages). For each size, after a first save,
one user message is added and the thread saved again, ``SAVES`` times; the median is printed for:

- the baseline, measured here in the same run: the old pickle store
  (``benchmarks/_pickle_store.ThreadStore.save``, the store the chat used before its database), which pickles the whole session and rewrites
  its one row every time;
- ``ThreadDB.save`` (``interrupt_chat.store.threads_db``) on a SQLite file (WAL, default synchronous=FULL,
  like the baseline): the thread row, plus only the message rows that are new or changed. Which
  ones is found by digest; the digests come from ``MessageDigests.scan``, which converts only the
  messages whose view changed (a cheap key per view: the one part of a save that still reads the
  whole history, at about a microsecond per message). "(its scan)" times that scan on its own.

Ratios: ThreadDB / pickle at each size, and each one's 600 / 10 growth. "rows" is the message rows
the save wrote (``SaveResult.written``): it must stay 1 whatever the length. For contrast, the last
column is what building the whole record and digests each time would cost (no memo).

Run: ``.venv/bin/python -m benchmarks.thread_save`` (about 10 s).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._thread import ARG_DELTAS, DELTAS, build_transcript, typed_runs, user_text  # noqa: E402
from interrupt_chat.agui import AgentSession  # noqa: E402
from interrupt_chat.agui.records import MessageDigests, message_digest, session_record  # noqa: E402
from benchmarks._pickle_store import ThreadStore  # noqa: E402  (the old pickle store: the baseline)
from interrupt_chat.store.threads_db import ThreadDB  # noqa: E402

SIZES = (10, 100, 600)
SAVES = 40  # saves timed per size, each after one new message; the median is printed
OWNER = "bench-token|chat"


def thread_of(messages: int, runs: list) -> AgentSession:
    """A session whose transcript has exactly ``messages`` messages (3 per run, then user messages)."""
    session = AgentSession("http://127.0.0.1:9/", thread_id=f"thread-{messages}")
    build_transcript(runs[: messages // 3], session.transcript)
    for k in range(messages % 3):
        session.transcript.add_user_message(f"extra-{k}", user_text(k))
    assert len(session.transcript.messages) == messages
    return session


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def timed_saves(session: AgentSession, save) -> list[float]:
    """Seconds of each of ``SAVES`` calls of ``save()``, each after one new user message."""
    samples = []
    for k in range(SAVES):
        session.transcript.add_user_message(f"new-{k}", f"one more question, number {k}")
        t0 = time.perf_counter()
        save()
        samples.append(time.perf_counter() - t0)
    return samples


def main() -> None:
    runs = typed_runs(max(SIZES) // 3, deltas=DELTAS, arg_deltas=ARG_DELTAS)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        # separate files and separate loops: one store's large writes do not slow the other's fsync
        store = ThreadStore(Path(folder) / "pickle.db")
        db = ThreadDB(f"sqlite:///{folder}/threads.db")
        for size in SIZES:
            session = thread_of(size, runs)
            store.save(OWNER, {session.thread_id: session}, session.thread_id)
            t_pickle = timed_saves(session, lambda s=session: store.save(OWNER, {s.thread_id: s}, s.thread_id))

            session = thread_of(size, runs)
            assert db.overwrite(OWNER, session).inserted == size
            written: list[int] = []
            t_db = timed_saves(session, lambda s=session, w=written: w.append(db.overwrite(OWNER, s).written))
            restored = db.load(OWNER, session.thread_id)
            assert restored is not None
            assert restored.build_input().messages == session.build_input().messages

            session = thread_of(size, runs)
            memo = MessageDigests()  # the scan ThreadDB.save does, on its own
            memo.scan(session.transcript)
            t_scan = timed_saves(session, lambda s=session, m=memo: m.scan(s.transcript))
            t_full = timed_saves(session, lambda s=session: [message_digest(b) for b in session_record(s)["messages"]])
            rows.append((size, median_ms(t_pickle), median_ms(t_db), median_ms(t_scan), median_ms(t_full),
                         max(written)))
        store.close()
        db.close()

    print(f"Saving a thread after one new message (median of {SAVES} saves; SQLite file, WAL)\n")
    print(f"{'messages':>9} {'pickle store':>13} {'ThreadDB':>10} {'(its scan)':>11} {'ThreadDB/pickle':>16}"
          f" {'rows':>5}   {'full record+digests':>20}")
    for size, p, d, sc, full, w in rows:
        print(f"{size:>9} {p:>10.2f} ms {d:>7.2f} ms {sc:>8.2f} ms {d / p:>15.2f}x {w:>5}   {full:>17.2f} ms")
    (_, p10, d10, s10, f10, _), (_, p600, d600, s600, f600, _) = rows[0], rows[-1]
    print(f"\ngrowth 600 / 10 messages: pickle store {p600 / p10:.1f}x, ThreadDB {d600 / d10:.1f}x"
          f" (its scan {s600 / s10:.1f}x: {s600 * 1e3 / 600:.2f} us per message of history)")
    print("message rows written per save: " + ", ".join(f"{w} at {s}" for s, *_, w in rows))
    print(f"for contrast, a save that rebuilt every message (session_record + digests, no memo) would cost"
          f" {f600:.2f} ms at 600 on top of the database work ({f600 / f10:.0f}x its cost at 10)")


if __name__ == "__main__":
    main()
