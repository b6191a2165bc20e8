"""Where the thread database's calls run: one writer thread and a few readers, off the loop's default pool.

A :class:`~interrupt_chat.store.threads_db.ThreadDB` makes its writes one at a time (one lock per
process: what it remembers of each thread follows the database). On the event loop's default pool,
writes waiting for that lock held its threads, and reads queued behind them: a tab's check before
it acts, the thread list. At 500 chats on one worker, those reads waited a second and more
(docs/decisions/0023). Here writes queue in a thread of their own, reads never wait for them, and
the default pool is left to the app (Reflex writes its states there).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["READERS", "run"]

READERS = 4  # reads at once (each holds a pooled connection while it runs)
T = TypeVar("T")

_pools: dict[bool, ThreadPoolExecutor] = {}
_lock = threading.Lock()


def _pool(write: bool) -> ThreadPoolExecutor:
    with _lock:
        pool = _pools.get(write)
        if pool is None:
            name = "interrupt_chat-db-" + ("write" if write else "read")
            pool = _pools[write] = ThreadPoolExecutor(max_workers=1 if write else READERS, thread_name_prefix=name)
        return pool


def _forget() -> None:  # a forked worker has none of its parent's threads: it starts its own pools
    _pools.clear()


os.register_at_fork(after_in_child=_forget)


async def run(fn: Callable[..., T], *args: Any, write: bool, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the writer thread (``write``) or a reader thread, in this context's copy."""
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_pool(write), call)
