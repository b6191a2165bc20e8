"""The worker's load: the push tick it calls for, and how long a stream waits between two reads."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from interrupt_chat import load
from interrupt_chat.load import MAX_PUSH_INTERVAL, PUSH_INTERVAL, WorkerLoad, read_pause


@pytest.fixture
def lag() -> Iterator[None]:
    before = WorkerLoad.lag
    yield
    WorkerLoad.lag = before


def test_an_idle_worker_pushes_every_tick_and_reads_at_once(lag):
    WorkerLoad.lag = 0.0
    assert WorkerLoad.interval() == PUSH_INTERVAL
    assert read_pause() == 0.0


def test_late_timers_stretch_the_tick_and_the_reads_up_to_a_bound(lag):
    for _ in range(200):  # timers firing 50 ms late, again and again
        WorkerLoad.sample(0.05)
    assert WorkerLoad.lag == pytest.approx(0.05, rel=1e-3)
    assert WorkerLoad.interval() == pytest.approx(PUSH_INTERVAL + load.LOAD_GAIN * 0.05, rel=1e-3)
    assert read_pause() == pytest.approx((WorkerLoad.interval() - PUSH_INTERVAL) * load.READ_PAUSE_SHARE)
    for _ in range(200):
        WorkerLoad.sample(2.0)  # far behind
    assert WorkerLoad.interval() == MAX_PUSH_INTERVAL
    assert read_pause() == pytest.approx((MAX_PUSH_INTERVAL - PUSH_INTERVAL) * load.READ_PAUSE_SHARE)


def test_a_timer_that_fires_early_counts_as_on_time(lag):
    WorkerLoad.lag = 0.0
    WorkerLoad.sample(-0.5)
    assert WorkerLoad.lag == 0.0


async def test_the_probe_sees_a_blocked_loop_and_an_idle_one(lag):
    """``watch()``: a timer every 50 ms, whatever the runs do; a loop blocked for 300 ms shows as late,
    and an idle loop brings the load back down."""
    WorkerLoad.lag = 0.0
    load.watch()
    load.watch()  # once per loop
    await asyncio.sleep(0.12)
    assert WorkerLoad.lag < 0.01
    time.sleep(0.3)  # the loop is stuck: the probe fires 250 ms late
    await asyncio.sleep(0.06)
    late = WorkerLoad.lag
    assert late > 0.02
    await asyncio.sleep(1.0)  # 20 samples on time
    assert WorkerLoad.lag < late / 4
