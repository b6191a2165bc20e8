"""A person's database calls go first (issue 45, docs/decisions/0029): the lanes' order, and who is urgent."""

from __future__ import annotations

import asyncio
import threading

import pytest

import interrupt_chat as ic
from interrupt_chat.store import pools
from interrupt_chat.store.pools import _Lane
from interrupt_chat.tab import persistence
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab


def test_an_urgent_call_overtakes_the_waiting_ones_and_never_the_running_one():
    lane, order, gate, started = _Lane(1, "test-lane"), [], threading.Event(), threading.Event()

    def blocker():
        started.set()
        gate.wait(5)
        order.append("running")

    first = lane.submit(blocker, urgent=False)
    assert started.wait(5)
    waiting = [lane.submit(lambda n=n: order.append(n), urgent=False) for n in ("save-1", "save-2")]
    claim = lane.submit(lambda: order.append("claim"), urgent=True)
    later = lane.submit(lambda: order.append("claim-2"), urgent=True)
    gate.set()
    for future in (first, *waiting, claim, later):
        future.result(5)
    assert order == ["running", "claim", "claim-2", "save-1", "save-2"]  # urgent first, each kind in arrival order
    lane.stop(5)


def test_a_cancelled_call_is_skipped_and_errors_reach_the_caller():
    lane, ran, gate = _Lane(1, "test-lane"), [], threading.Event()
    lane.submit(lambda: gate.wait(5), urgent=False)
    dropped = lane.submit(lambda: ran.append("dropped"), urgent=False)
    assert dropped.cancel()  # its caller gave up while it waited
    failing = lane.submit(lambda: 1 / 0, urgent=True)
    gate.set()
    with pytest.raises(ZeroDivisionError):
        failing.result(5)
    lane.submit(lambda: ran.append("next"), urgent=False).result(5)
    assert ran == ["next"]
    lane.stop(5)


async def test_run_keeps_the_callers_context_and_urgency():
    seen = []
    with pools.first():
        seen.append(await pools.run(pools.URGENT.get, write=True))
    seen.append(await pools.run(pools.URGENT.get, write=False))
    assert seen == [True, False]
    assert not pools.URGENT.get()  # the block reset it


async def test_a_call_a_person_waits_on_by_name_goes_before_every_waiting_one():
    gate, started, order = threading.Event(), threading.Event(), []
    key = ("me|chat", "t1")

    def blocker():
        started.set()
        gate.wait(5)
        order.append("running")

    running = asyncio.ensure_future(pools.run(blocker, write=True))
    assert await asyncio.to_thread(started.wait, 5)
    saves = [asyncio.ensure_future(pools.run(order.append, n, write=True)) for n in ("save-1", "save-2")]
    with pools.first():
        claim = asyncio.ensure_future(pools.run(order.append, "claim", write=True))
    with pools.hurriable(key):  # e.g. the end save of this person's last run (saving.write)
        mine = asyncio.ensure_future(pools.run(order.append, "my end", write=True))
    with pools.hurriable(("someone else", "t1")):
        theirs = asyncio.ensure_future(pools.run(order.append, "their end", write=True))
    await asyncio.sleep(0)  # all queued, behind the running call
    with pools.hurry(key):  # a send of theirs waits for that save (persistence._end_saved)
        with pools.hurriable(key):
            later = asyncio.ensure_future(pools.run(order.append, "my next", write=True))
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(running, *saves, claim, mine, theirs, later)
    assert order == ["running", "my end", "my next", "claim", "save-1", "save-2", "their end"]
    assert not pools._queued and not pools._hurried  # nothing of a finished wait stays


async def test_a_person_s_claims_and_a_surfacing_set_go_first_a_run_s_other_saves_do_not(agent, database):
    url, store = agent
    saves: list[tuple[bool, int]] = []  # (urgent, the revision written over)
    keep = database.save

    def observed(owner, session, *args, **kwargs):
        saves.append((pools.URGENT.get(), kwargs.get("revision", -1)))
        return keep(owner, session, *args, **kwargs)

    database.save = observed  # the real save, observed from the writer thread
    tab = await Tab(ic.Chat(url, name="db-lanes").state, store).load()
    await tab.send("approval")  # the send's claim (urgent), then the run's end with a card (urgent)
    [interrupt_id] = tab.ids()
    await tab.resolve({"approved": True}, interrupt_id)  # the answer's claim (urgent), the follow-up's end (not)
    # the send's claim, the card's save, the answer's claim go first; the follow-up's end waits its turn
    assert saves == [(True, 0), (True, 1), (True, 2), (False, 3)]


async def test_a_run_s_end_save_can_be_hurried_by_the_thread_s_run_key(agent, database):
    url, store = agent
    keys: list[object] = []
    keep = database.save

    def observed(owner, session, *args, **kwargs):
        keys.append(pools._KEY.get())
        return keep(owner, session, *args, **kwargs)

    database.save = observed
    tab = await Tab(ic.Chat(url, name="db-hurry").state, store).load()
    await tab.send("hello")
    run_key = persistence.run_key(tab.chat, tab.chat.thread_id)
    assert keys[-1] == run_key  # the end save: what a send right after it hurries (_end_saved)
