"""The registry of runs in flight (``interrupt_chat.workers.runs``) against a real Redis server.

Two registries stand for two backend workers: each has its own Redis connections and its own
listener, exactly what two processes would have; one test puts the run in a real subprocess and
kills it. Without Redis the registry is local only.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from interrupt_chat.workers.runs import Registry, redis_key
from tests.redis_server import MISSING, redis_server_binary, running_redis

ROOT = Path(__file__).resolve().parents[2]
KEY = ("token-1", "reflex___state____state.chat")
needs_redis = pytest.mark.skipif(redis_server_binary() is None, reason=MISSING)


class FakeRun:
    running = True

    def __init__(self) -> None:
        self.cancels = 0

    def cancel(self) -> bool:
        self.cancels += 1
        return True


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    if redis_server_binary() is None:
        pytest.skip(MISSING)
    with running_redis() as url:
        yield url


async def _eventually(check, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.05)
    return False


async def test_without_redis_runs_are_local_only():
    here, there, run = Registry(redis_url=""), Registry(redis_url=""), FakeRun()
    await here.add(KEY, run)
    assert here.local(KEY) is run and await here.alive(KEY)
    assert not await there.alive(KEY) and not await there.stop(KEY)  # another process cannot see it
    assert run.cancels == 0
    assert await here.stop(KEY) and run.cancels == 1
    await here.remove(KEY, run)
    assert here.local(KEY) is None and not await here.alive(KEY) and not await here.stop(KEY)


async def test_waiting_for_a_runs_end_returns_when_it_is_removed_or_at_the_timeout():
    registry, run = Registry(redis_url=""), FakeRun()
    await registry.ended(KEY, 5.0)  # no such run: at once
    await registry.add(KEY, run)
    waiting = asyncio.ensure_future(registry.ended(KEY, 5.0))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # its end is not saved yet
    await registry.remove(KEY, run)
    await asyncio.wait_for(waiting, 1.0)
    await registry.add(KEY, run)
    started = time.monotonic()
    await registry.ended(KEY, 0.2)  # never removed: the wait is bounded
    assert 0.15 < time.monotonic() - started < 2.0 and not registry._ends


@needs_redis
async def test_a_stop_reaches_the_run_another_worker_drives(redis_url):
    driver, other, run = Registry(redis_url), Registry(redis_url), FakeRun()
    await driver.add(KEY, run)
    assert other.local(KEY) is None and await other.alive(KEY)
    assert await other.stop(KEY)
    assert await _eventually(lambda: _true(run.cancels == 1))
    await other.stop(("another-tab", KEY[1]))  # another tab's key stops nothing here
    await asyncio.sleep(0.2)
    assert run.cancels == 1
    await driver.remove(KEY, run)
    assert not await other.alive(KEY) and not await driver.alive(KEY)


@needs_redis
async def test_liveness_is_refreshed_while_a_run_is_held_and_cleared_when_it_ends(redis_url):
    driver, other, run = Registry(redis_url, refresh=0.2, ttl=0.6), Registry(redis_url), FakeRun()
    await driver.add(KEY, run)
    client = Redis.from_url(redis_url)
    try:
        await asyncio.sleep(1.5)  # well past the TTL: only the refreshes keep it
        assert await other.alive(KEY)
        assert 0 < await client.pttl(redis_key(KEY)) <= 600
        await driver.remove(KEY, run)
        assert not await client.exists(redis_key(KEY)) and not await other.alive(KEY)
    finally:
        await client.aclose()


@needs_redis
async def test_an_ended_run_does_not_clear_a_newer_holders_liveness(redis_url):
    first, second, reader = Registry(redis_url), Registry(redis_url), Registry(redis_url)
    old, new = FakeRun(), FakeRun()
    await first.add(KEY, old)
    await second.add(KEY, new)  # the tab reconnected elsewhere and started again
    await first.remove(KEY, old)
    assert await reader.alive(KEY)
    await second.remove(KEY, new)
    assert not await reader.alive(KEY)


@needs_redis
def test_a_registry_follows_a_new_event_loop(redis_url):
    registry, other = Registry(redis_url), Registry(redis_url)

    async def once() -> None:
        run = FakeRun()
        await registry.add(KEY, run)
        assert await other.alive(KEY) and await other.stop(KEY)
        assert await _eventually(lambda: _true(run.cancels == 1))
        await registry.remove(KEY, run)

    asyncio.run(once())
    asyncio.run(once())  # a restarted server loop: fresh connections and listener


_HOLDER = textwrap.dedent("""
    import asyncio, sys
    from interrupt_chat.workers.runs import Registry

    class Run:
        running = True

        def __init__(self):
            self.stopped = asyncio.Event()
        def cancel(self):
            self.stopped.set()
            return True

    async def main():
        registry, run = Registry(sys.argv[1], refresh=0.2, ttl=1.0), Run()
        await registry.add((sys.argv[2], sys.argv[3]), run)
        print("holding", flush=True)
        await asyncio.wait_for(run.stopped.wait(), 60)
        print("stopped", flush=True)
        await asyncio.sleep(60)  # still alive: the test kills it

    asyncio.run(main())
""")


@pytest.fixture
def holder(redis_url) -> Iterator[subprocess.Popen[str]]:
    """Another process that drives the run ``KEY`` (prints ``holding``, then ``stopped`` once stopped)."""
    process = subprocess.Popen([sys.executable, "-c", _HOLDER, redis_url, *KEY], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "holding"
        yield process
    finally:
        process.kill()
        process.wait(10)


@needs_redis
async def test_a_stop_reaches_a_run_in_another_process_and_a_killed_process_reads_as_dead(redis_url, holder):
    here = Registry(redis_url)
    assert await here.alive(KEY)
    assert await here.stop(KEY)
    assert holder.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(holder.stdout.readline), 10)
    assert line.strip() == "stopped"
    await asyncio.sleep(1.5)
    assert await here.alive(KEY)  # still held (the holder has not removed it): refreshed past its TTL
    os.kill(holder.pid, signal.SIGKILL)
    started = time.monotonic()
    assert await _eventually(lambda: _not(here.alive(KEY)), timeout=5)
    assert time.monotonic() - started <= 1.5  # the TTL (1 s) after the last refresh


async def _true(value: bool) -> bool:
    return value


async def _not(awaitable) -> bool:
    return not await awaitable
