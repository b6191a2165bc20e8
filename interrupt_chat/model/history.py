"""The history's rows reach the page as changes, never whole (decision 22).

Reflex sends a var's whole value whenever it changes, so a list var holding the history cost
every turn O(history) bytes and every thread O(n²). Instead the page keeps the rows it has in
a store of its own (``history_rows.js``), and the chat's ``history`` var carries one
:class:`HistoryDelta` at a time: the rows from some index on (a turn just ended, an older row
changed), a page of older rows (the person scrolled up), or a reset (a thread shown anew: its
newest page only). Each delta names the one it builds on (``base``); a page that missed one
asks again (``ChatState.history_resync``) and gets a reset.

:class:`HistoryFeed` is the server's side: what the page has (its sequence number, the lowest
row index it holds, a fingerprint per row), no copy of the rows. :func:`apply` is the page's
side, the twin of ``applyDelta`` in ``history_rows.js``; the tests use it as the page.
Framework-free, like :mod:`interrupt_chat.model.views`.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["MAX_ROWS", "PAGE_ROWS", "HistoryDelta", "HistoryFeed", "HistoryStore", "apply", "digest"]

PAGE_ROWS = 30  # rows a thread opens with, and per older page
MAX_ROWS = 3 * PAGE_ROWS  # a turn that leaves the page holding more drops its oldest rows, down to two pages

Row = TypeVar("Row")


@dataclass
class HistoryDelta(Generic[Row]):
    """One change of the page's history rows.

    ``rows`` are the rows at indices ``start`` … ``start + len(rows) - 1`` of the history. A
    ``reset`` replaces what the page holds; otherwise the delta applies only on top of ``base``
    (the sequence number of the delta the page must hold). ``truncate``: the page drops what it
    holds after these rows (a change at its end); else it keeps it (an older page). ``at_end``:
    the page's rows then reach the history's end, so the current turn follows them. ``total`` is
    the history's length, ``thread_id`` the thread, ``focus`` a row to show (a search's match).
    ``keep_from``: the page then drops the rows before this index (a long session stays light).
    """

    seq: int = 0
    base: int = 0
    reset: bool = True
    start: int = 0
    rows: list[Row] = field(default_factory=list)
    truncate: bool = True
    at_end: bool = True
    total: int = 0
    thread_id: str = ""
    focus: str = ""
    keep_from: int = 0


@dataclass
class HistoryStore(Generic[Row]):
    """What a page holds: the rows at indices ``offset`` … of the thread's history."""

    seq: int = 0
    offset: int = 0
    rows: list[Row] = field(default_factory=list)
    at_end: bool = True
    thread_id: str = ""


def apply(store: HistoryStore[Row], delta: HistoryDelta[Row]) -> HistoryStore[Row] | None:
    """The store after ``delta``; the same store if it holds it already; None for a gap (ask again)."""
    if delta.seq == store.seq:
        return store
    if delta.reset:
        return HistoryStore(delta.seq, delta.start, list(delta.rows), delta.at_end, delta.thread_id)
    end = store.offset + len(store.rows)
    if delta.base != store.seq or delta.start > end or delta.start + len(delta.rows) < store.offset:
        return None
    before = store.rows[:max(0, delta.start - store.offset)]
    after = [] if delta.truncate else store.rows[max(0, delta.start + len(delta.rows) - store.offset):]
    offset, rows = min(store.offset, delta.start), [*before, *delta.rows, *after]
    if delta.keep_from > offset:
        offset, rows = delta.keep_from, rows[delta.keep_from - offset:]
    return HistoryStore(delta.seq, offset, rows, delta.at_end, delta.thread_id)


@dataclass
class _Held:
    """What the page holds once a delta arrives: the rows ``offset`` … ``end - 1`` of a thread's history."""

    seq: int
    thread_id: str
    offset: int
    end: int
    digests: list[bytes]  # of every row of the history, the page's or not

    @property
    def at_end(self) -> bool:
        return self.end == len(self.digests)


class HistoryFeed:
    """The server's record of one page's history rows: which deltas to send it.

    Holds a fingerprint per row (of its ``repr``: rows are plain dataclasses; stable across
    workers, unlike ``hash``), the window of rows the page holds and the last sequence number,
    never the rows themselves. Sequence numbers start at random, so a page that outlived its
    backend state (a restart) cannot take a new feed's delta for one it holds.

    A var sends only its last value: two deltas made before the first went out (one event that
    shows a thread and then publishes) would leave the page a gap. Until :meth:`sent` says the
    last one went out, a new delta is made against what the page held before it, and replaces it.
    """

    def __init__(self) -> None:
        """A feed for a page that holds nothing yet."""
        self.seq = secrets.randbits(40) + 1  # exact in JavaScript (< 2**53) for a very long time
        self.held: _Held | None = None  # what the page holds (None: nothing this feed sent)
        self.pending: _Held | None = None  # what it will hold once the delta not sent yet arrives
        self.pending_reset = False
        # what the caller made the latest rows from (``Transcript.history_mark`` and the thread): the same
        # mark again means the same rows, so it may skip making them (they are O(history))
        self.mark: object = None

    @property
    def thread_id(self) -> str:
        """The thread the page's rows belong to (once every delta made arrives)."""
        latest = self.pending or self.held
        return latest.thread_id if latest is not None else ""

    @property
    def offset(self) -> int:
        """The lowest row index the page holds (once every delta made arrives)."""
        latest = self.pending or self.held
        return latest.offset if latest is not None else 0

    def sent(self) -> None:
        """The last delta went out (the var is no longer waiting to be sent)."""
        if self.pending is not None:
            self.held, self.pending, self.pending_reset = self.pending, None, False

    def reset(self, thread_id: str, rows: Sequence[Row], around: int | None = None,
              focus: str = "", digests: Sequence[bytes] | None = None) -> HistoryDelta[Row]:
        """Show ``rows`` anew: the page gets the newest page, or the page ``around`` a row (``focus``: its id).

        ``digests``: the rows' (:func:`digest`), when the caller keeps them; else they are made here.
        """
        total = len(rows)
        if around is None:
            offset, end = max(0, total - PAGE_ROWS), total
        else:
            offset = max(0, min(around - PAGE_ROWS // 4, total - PAGE_ROWS))
            end = min(total, offset + PAGE_ROWS)
        digests = list(digests) if digests is not None else [digest(row) for row in rows]
        return self._made(True, 0, _Held(0, thread_id, offset, end, digests), offset, rows[offset:end], focus=focus)

    def update(self, thread_id: str, rows: Sequence[Row], sent: Callable[[], Sequence[Row]] | None = None,
               digests: Sequence[bytes] | None = None) -> HistoryDelta[Row] | None:
        """The history is now ``rows``: the delta from the first row that changed, or None if none did.

        ``sent``: makes the same rows as the delta carries them (called only for a delta), when the
        page has part of them already (the texts a turn streamed, which it keeps by stream key); a
        reset carries ``rows``. ``digests``: as :meth:`reset`'s. Only the rows the delta carries are read.
        """
        held = self.held
        if self.pending_reset or held is None or held.thread_id != thread_id:
            pending = self.pending if self.pending is not None and self.pending.thread_id == thread_id else None
            around = pending.offset + PAGE_ROWS // 4 if pending is not None and not pending.at_end else None
            return self.reset(thread_id, rows, around, digests=digests)
        digests = list(digests) if digests is not None else [digest(row) for row in rows]
        old = held.digests
        first = next((i for i, (a, b) in enumerate(zip(old, digests, strict=False)) if a != b),
                     min(len(old), len(digests)))
        if first == len(old) == len(digests) and self.pending is None:
            return None
        end = len(digests) if held.at_end else held.end
        if first < held.offset or (not held.at_end and len(digests) != len(old)) or end - first > PAGE_ROWS:
            # a row the page does not hold changed, or one was inserted before them; a turn ended
            # while the page showed older rows (a search's match); or more changed than a page
            # holds (an agent's snapshot brought a long history): the newest page anew
            return self.reset(thread_id, rows, digests=digests)
        if first >= end and not held.at_end and self.pending is None:  # beyond the rows the page holds
            self.held = _Held(held.seq, thread_id, held.offset, held.end, digests)
            return None
        first = min(first, end)
        offset = held.offset if end - held.offset <= MAX_ROWS else end - 2 * PAGE_ROWS
        carried = sent() if sent is not None else rows
        return self._made(False, held.seq, _Held(0, thread_id, offset, end, digests), first,
                          (carried if len(carried) == len(rows) else rows)[first:end], keep_from=offset)

    def older(self, rows: Sequence[Row], before: int) -> HistoryDelta[Row] | None:
        """The page above the page's oldest row (it holds rows from ``before`` on), or None if there is none."""
        held = self.held
        if self.pending is not None or held is None or before != held.offset or held.offset == 0:
            return None  # the page's holdings are changing, or changed since it asked: it asks again
        start = max(0, held.offset - PAGE_ROWS)
        return self._made(False, held.seq, _Held(0, held.thread_id, start, held.end, held.digests), start,
                          rows[start:held.offset], truncate=False)

    def newer(self, rows: Sequence[Row], after: int) -> HistoryDelta[Row] | None:
        """The page below the page's newest row (it holds rows up to ``after``), or None if it holds the end."""
        held = self.held
        if self.pending is not None or held is None or after != held.end or held.at_end:
            return None
        end = min(len(held.digests), held.end + PAGE_ROWS)
        return self._made(False, held.seq, _Held(0, held.thread_id, held.offset, end, held.digests), held.end,
                          rows[held.end:end])

    def _made(self, reset: bool, base: int, after: _Held, start: int, rows: Sequence[Row], *,
              truncate: bool = True, focus: str = "", keep_from: int = 0) -> HistoryDelta[Row]:
        self.seq += 1
        after.seq = self.seq
        self.pending, self.pending_reset = after, reset
        return HistoryDelta(seq=self.seq, base=base, reset=reset, start=start, rows=list(rows), truncate=truncate,
                            at_end=after.at_end, total=len(after.digests), thread_id=after.thread_id, focus=focus,
                            keep_from=keep_from)


def digest(row: object) -> bytes:
    """A row's fingerprint: of its ``repr`` (rows are plain dataclasses), the same in every worker."""
    return hashlib.blake2b(repr(row).encode(), digest_size=8).digest()
