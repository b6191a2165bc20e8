"""Several thread saves in one SQLite transaction (docs/decisions/0030).

On SQLite every statement a writer thread makes hands the interpreter back to the event loop and
waits to win it again: on a busy worker that wait, not SQLite, is most of a save. A save of its own
pays for its ``BEGIN`` and its ``COMMIT`` too. :meth:`ThreadDB.batch
<interrupt_chat.store.threads_db.ThreadDB.batch>` runs the saves waiting side by side in one
transaction (:func:`interrupt_chat.store.pools.together`), so each pays only for its own statements.

A batch is all or nothing, and so is what the ThreadDB remembers of it: if any save in it fails
(a conflict, a deleted thread, an error) or the commit does, the transaction is rolled back, what
the saves left in memory is forgotten (the revisions they set on their sessions, the rows the
ThreadDB thinks are stored), and each save runs again in a transaction of its own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterator, MutableMapping, MutableSet
from typing import Any

from sqlalchemy.engine import Connection

__all__ = ["Batches", "WriteBatch"]


class WriteBatch:
    """The transaction several saves share on the writer thread, and how to forget them if it rolls back."""

    def __init__(self, conn: Connection) -> None:
        """A batch in ``conn``'s transaction."""
        self.conn = conn
        self.failed = False  # something in the batch failed: it must be rolled back
        self.touched: set[Hashable] = set()  # the threads whose remembered rows the batch may have changed
        self._undo: list[Callable[[], None]] = []

    def saved(self, session: Any, revision: int, damaged: MutableSet[Any], key: Hashable) -> None:
        """A save in the batch set ``session.revision`` (it was ``revision``) and cleared ``key`` of ``damaged``."""
        was_damaged = key in damaged

        def undo() -> None:
            session.revision = revision
            if was_damaged:
                damaged.add(key)

        self._undo.append(undo)

    def forget(self, known: MutableMapping[Any, Any]) -> None:
        """Rolled back: undo what the saves left in memory; the touched threads' rows are read again."""
        for key in self.touched:
            entry = known.get(key)
            if entry is not None:
                entry.stored = None
        for undo in reversed(self._undo):
            undo()


class Batches:
    """The batch open on each thread (at most one: the writer's)."""

    def __init__(self) -> None:
        """None open yet."""
        self._local = threading.local()

    @property
    def current(self) -> WriteBatch | None:
        """The batch this thread runs in, if any."""
        return getattr(self._local, "batch", None)

    @contextlib.contextmanager
    def opened(self, conn: Connection) -> Iterator[WriteBatch]:
        """A batch on ``conn`` (a transaction begun) for this thread while the block runs."""
        batch = self._local.batch = WriteBatch(conn)
        try:
            yield batch
        finally:
            self._local.batch = None

    @staticmethod
    @contextlib.contextmanager
    def joined(batch: WriteBatch) -> Iterator[Connection]:
        """A transaction inside ``batch``: its connection; a failure in it fails the whole batch."""
        try:
            yield batch.conn
        except BaseException:
            batch.failed = True
            raise
