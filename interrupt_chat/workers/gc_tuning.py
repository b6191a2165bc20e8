"""The cyclic garbage collector, set for a chat server: collections rare, and the app's import never walked again.

Python collects its youngest generation every 700 new container objects, and walks every
object the process holds on a full collection. A worker streaming 500 chats makes tens of
thousands of short-lived objects a second (events, coroutines, futures) and holds about half a
million that live on (modules, pages, the tabs' states and threads). With the defaults it
spent about 30 % of its CPU in the collector, in full collections of about 250 ms each that
stall every stream at once (docs/decisions/0023, ``benchmarks/chats_per_worker.py``).
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "tune_gc"]

YOUNG_THRESHOLD = 20_000  # new container objects between two young collections (Python's default: 700)


def tune_gc(young: int = YOUNG_THRESHOLD) -> None:
    """Collect the youngest generation every ``young`` allocations, and freeze what exists now.

    Call it once, at the end of the app's module (each worker imports it): the frozen objects
    (the imported modules, the compiled pages) are left out of every later collection, and are
    still freed by reference counting. The older generations keep Python's own thresholds. A
    young collection then walks at most ``young`` objects, a few megabytes of garbage waiting at
    most; reference cycles are still collected.

    Args:
        young: the youngest generation's threshold; at least 700 (Python's default).

    Raises:
        ValueError: ``young`` is below Python's default.
    """
    if young < 700:
        raise ValueError(f"young must be at least 700 (Python's default), not {young}")
    _, middle, old = gc.get_threshold()
    gc.collect()  # what the import left as garbage is freed, not frozen
    gc.freeze()
    gc.set_threshold(young, middle, old)
