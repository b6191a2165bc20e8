"""The worker's load: the push tick it calls for, and how long a stream waits between two reads."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from interrupt_chat.workers import load
from interrupt_chat.workers.load import MAX_PUSH_INTERVAL, PUSH_INTERVAL, WorkerLoad, read_pause


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


async def test_a_busy_worker_takes_the_state_lock_for_streamed_text_less_often(lag):
    from interrupt_chat.tab.driver import LOCK_AT_LEAST_EVERY, MAX_LOCK_INTERVAL, _Throttle

    async def push(route: bool, text_only: bool = False) -> None:
        return None

    throttle = _Throttle(push)
    now = asyncio.get_running_loop().time()
    WorkerLoad.lag = 0.0  # idle: a text-only push takes the lock once its interval has passed
    throttle._locked = now - LOCK_AT_LEAST_EVERY - 0.1
    assert not throttle._text_only(now, route=False)
    assert throttle._text_only(now + 0.1, route=False)  # it just did
    for _ in range(200):
        WorkerLoad.sample(2.0)  # busy: the interval stretches as the push tick does, up to a bound
    throttle._locked = now - LOCK_AT_LEAST_EVERY - 0.1
    assert throttle._text_only(now, route=False)
    throttle._locked = now - MAX_LOCK_INTERVAL - 0.1
    assert not throttle._text_only(now, route=False)
    assert not throttle._text_only(now, route=True)  # RUN_STARTED routes: always under the lock
    await throttle.close()


async def test_a_push_that_is_due_waits_for_the_last_event_of_its_read(lag):
    """A read holding a run's start and its first text is one push (routed: S4); one holding a message's end and
    the run's, none: the driver's end pushes the thread whole as the stream closes (decision 0030)."""
    from ag_ui.core import (
        RunFinishedEvent,
        RunStartedEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
    )

    from interrupt_chat.tab.driver import _Throttle

    pushes: list[bool] = []

    async def push(route: bool, text_only: bool = False) -> None:
        pushes.append(route)

    WorkerLoad.lag = 0.0
    throttle = _Throttle(push)
    start = [RunStartedEvent(thread_id="t", run_id="r"), TextMessageStartEvent(message_id="m"),
             TextMessageContentEvent(message_id="m", delta="Hel")]
    for left, event in zip(range(len(start) - 1, -1, -1), start, strict=True):
        await throttle.event(event, read_ahead=left)
    assert pushes == [True]  # one push, and it routes: the card goes with RUN_STARTED
    end = [TextMessageContentEvent(message_id="m", delta="lo"), TextMessageEndEvent(message_id="m"),
           RunFinishedEvent(thread_id="t", run_id="r")]
    for left, event in zip(range(len(end) - 1, -1, -1), end, strict=True):
        await throttle.event(event, read_ahead=left)
    assert pushes == [True]
    await throttle.close()  # the stream closed: the timer left for a stream left open is dropped
    await asyncio.sleep(WorkerLoad.interval() + 0.1)
    assert pushes == [True]
    throttle = _Throttle(push)
    await throttle.event(RunStartedEvent(thread_id="t", run_id="r2"))  # alone in its read: at once
    assert pushes == [True, True]
    whole = [TextMessageStartEvent(message_id="m2"), TextMessageContentEvent(message_id="m2", delta="Hi"),
             TextMessageEndEvent(message_id="m2"), RunFinishedEvent(thread_id="t", run_id="r2")]
    for left, event in zip(range(len(whole) - 1, -1, -1), whole, strict=True):
        await throttle.event(event, read_ahead=left)
    assert pushes == [True, True]
    await asyncio.sleep(WorkerLoad.interval() + 0.1)  # the stream stays open after its end: a tick later
    assert pushes == [True, True, False]
    await throttle.close()
    tiny = _Throttle(push)  # a run that starts and ends in one read: its push routes, so it goes at once
    for left, event in zip(range(3, -1, -1), [RunStartedEvent(thread_id="t", run_id="r3"), *whole[1:]], strict=True):
        await tiny.event(event, read_ahead=left)
    assert pushes == [True, True, False, True]
    await tiny.close()


async def test_a_busy_worker_reads_the_stream_next_just_before_the_next_tick(lag):
    """A push on a busy worker (the tick stretched past twice its shortest) sets the run's next read to
    the next tick; an idle worker reads as the client's pause says (no call)."""
    from ag_ui.core import TextMessageContentEvent, TextMessageStartEvent

    from interrupt_chat.tab.driver import _Throttle

    async def push(route: bool, text_only: bool = False) -> None:
        return None

    reads: list[float] = []
    throttle = _Throttle(push, reads.append)
    loop = asyncio.get_running_loop()
    WorkerLoad.lag = 0.0
    await throttle.event(TextMessageStartEvent(message_id="m"))  # a push at once (a message starts)
    assert reads == []
    for _ in range(200):
        WorkerLoad.sample(2.0)  # far behind: the tick is at its longest
    before = loop.time()
    await throttle.event(TextMessageContentEvent(message_id="m", delta="Hello"))  # a message's first text: at once
    assert len(reads) == 1
    assert before + MAX_PUSH_INTERVAL <= reads[0] <= loop.time() + MAX_PUSH_INTERVAL
    await throttle.close()


def test_a_resync_asked_on_this_worker_is_taken_by_one_push():
    from interrupt_chat.tab import driver

    driver._resync_wanted.add(("owner-key", "thread-1"))
    assert driver._resync_asked(("owner-key", "thread-1"))
    assert not driver._resync_asked(("owner-key", "thread-1"))  # taken: the next push may skip the lock again
    assert not driver._resync_asked(("other-owner", "thread-1"))
