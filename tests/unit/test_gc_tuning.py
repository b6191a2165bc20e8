"""``ic.tune_gc``: the collector set for a chat server, and reference cycles still collected."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

import interrupt_chat as ic
from interrupt_chat.workers.gc_tuning import YOUNG_THRESHOLD


@pytest.fixture
def collector() -> Iterator[None]:
    """Put the process's collector back as it was (thresholds, frozen objects)."""
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_tune_gc_raises_the_young_threshold_keeps_the_old_ones_and_freezes_the_import(collector):
    _, middle, old = gc.get_threshold()
    ic.tune_gc()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, middle, old) == (20_000, middle, old)
    assert gc.get_freeze_count() > 10_000  # the imported modules, Reflex's among them


def test_tune_gc_takes_another_young_threshold(collector):
    ic.tune_gc(5_000)
    assert gc.get_threshold()[0] == 5_000


def test_a_threshold_below_pythons_default_is_refused(collector):
    before = gc.get_threshold()
    with pytest.raises(ValueError, match="at least 700"):
        ic.tune_gc(100)
    assert gc.get_threshold() == before


def test_reference_cycles_made_after_tuning_are_still_collected(collector):
    ic.tune_gc()

    class Node:
        other: Node

    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None
