"""A person's decision first (issue 45, docs/decisions/0037): other chats' streams wait while one is on its way.

The gate on its own (holds, the bound and the grace, cancellation, the person's own tasks), then the
real chat: another chat's run stops at its next event under a hold and finishes after it; a person's
run goes on; a click holds until the agent has its resume; a surfacing card's notice is followed first.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterator

import pytest

import interrupt_chat as ic
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.workers import lane, sync
from interrupt_chat.workers.sync import Notice
from tests.unit.agents import serve_in_thread
from tests.unit.holds import holds, this_gate
from tests.unit.tabs import database_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab


async def _turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_a_stream_waits_while_a_hold_is_open_and_goes_when_it_closes(monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    assert lane.blocked() is None  # no hold anywhere
    with lane.first() as hold:
        assert lane.holding() and lane.blocked() is None  # the person's own code never waits

        async def stream() -> None:
            assert not lane.holding()
            held = lane.blocked()
            assert held is not None
            await held

        waiter = asyncio.get_running_loop().create_task(stream(), context=contextvars.Context())
        await _turns()
        assert not waiter.done()
        hold.close()
        await asyncio.wait_for(waiter, 5)
    assert not lane.holding() and lane.blocked() is None


async def test_two_holds_release_the_streams_when_both_are_closed(monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    loop = asyncio.get_running_loop()
    with lane.first() as one:
        other = loop.create_task(_hold_until(asyncio.Event()), context=contextvars.Context())
        await _turns()
        waiter = loop.create_task(_wait_if_blocked(), context=contextvars.Context())
        await _turns()
        one.close()
        await _turns()
        assert not waiter.done()  # the other hold is still open
        other.cancel()  # its block ends: its hold closes
        await asyncio.wait_for(waiter, 5)


async def _hold_until(done: asyncio.Event) -> None:
    with lane.first():
        await done.wait()


async def _wait_if_blocked() -> bool:
    held = lane.blocked()
    if held is None:
        return False
    await held
    return True


async def test_a_hold_stops_the_streams_for_max_hold_at_most_then_they_go_for_the_grace(monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 0.05)
    monkeypatch.setattr(lane, "GRACE", 1.0)
    loop = asyncio.get_running_loop()
    with lane.first() as hold:
        waiter = loop.create_task(_wait_if_blocked(), context=contextvars.Context())
        assert await asyncio.wait_for(waiter, 5) is True  # released by the bound, the hold still open
        again = loop.create_task(_wait_if_blocked(), context=contextvars.Context())
        assert await again is False  # the grace: the streams go on
        monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
        async with asyncio.timeout(5):
            while contextvars.Context().run(lane.blocked) is None:  # the grace over, the hold open: stopped again
                await asyncio.sleep(0.02)
        third = loop.create_task(_wait_if_blocked(), context=contextvars.Context())
        await _turns()
        assert not third.done()
        hold.close()
        assert await asyncio.wait_for(third, 5) is True
    assert all(gate.timer is None and not gate.stopped for gate in lane._gates.values())


async def test_a_cancelled_waiter_does_not_release_the_others(monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    loop = asyncio.get_running_loop()
    with lane.first() as hold:
        first = loop.create_task(_wait_if_blocked(), context=contextvars.Context())
        second = loop.create_task(_wait_if_blocked(), context=contextvars.Context())
        await _turns()
        first.cancel()
        await _turns()
        assert first.cancelled() and not second.done()
        hold.close()
        assert await asyncio.wait_for(second, 5) is True


async def test_started_ends_the_hold_of_the_person_whose_task_it_is(monkeypatch):
    """The resume run, a task started in the click's hold, ends it once the agent answered."""
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    loop = asyncio.get_running_loop()
    with lane.first() as hold:
        async def resume() -> bool:
            assert lane.holding() and lane.blocked() is None
            lane.started()
            return lane.holding()

        assert await loop.create_task(resume()) is False
        assert not hold.open
        assert await loop.create_task(_wait_if_blocked(), context=contextvars.Context()) is False


async def test_a_hold_handed_to_a_task_of_its_own_context_outlives_its_block_until_the_task_closes_it(monkeypatch):
    """An assignee's click is answered by a run in a context of the server's own (``approvals.headless``)."""
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    loop = asyncio.get_running_loop()
    background = contextvars.Context()
    go = asyncio.Event()

    async def resume() -> bool:
        await go.wait()
        person = lane.blocked() is None  # the person's run never waits at a gate
        lane.started()  # the agent answered: the hold ends and its tab is proven
        return person

    with lane.first("tab-assignee") as hold:
        assert lane.hand_over(background) is hold
        task = loop.create_task(resume(), context=background)
    gate = this_gate()
    assert hold.open and gate.stopped  # the block is through, the resume is not: the streams still wait
    other = loop.create_task(_wait_if_blocked(), context=contextvars.Context())  # another chat's stream
    await _turns()
    assert not other.done()
    go.set()
    assert await task is True
    assert await asyncio.wait_for(other, 5) is True  # it waited, and went once the agent had the resume
    assert not hold.open and gate.holds == 0 and not gate.stopped and "tab-assignee" in gate.proven
    assert lane.hand_over(contextvars.Context()) is None  # no hold here: nothing to hand

    monkeypatch.setattr(lane, "HANDED_MAX", 0.05)  # a resume whose agent never answers ends its hold anyway
    with lane.first("tab-assignee", server=True) as hold:
        lane.hand_over(contextvars.Context())
    assert hold.open
    await asyncio.sleep(0.1)
    assert not hold.open and gate.holds == 0


async def test_every_waiting_stream_is_let_go_when_the_holds_end_a_cancelled_one_skipped(monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    with lane.first() as hold:
        waiters = [contextvars.Context().run(lane.blocked) for _ in range(20)]
        assert all(isinstance(w, asyncio.Future) and not w.done() for w in waiters)
        waiters[1].cancel()  # a stream that stopped waiting: nobody else's wait ends with it
        await _turns()
        assert not any(w.done() for i, w in enumerate(waiters) if i != 1)
        hold.close()
        assert all(w.done() for w in waiters) and waiters[1].cancelled()
        assert [w.result() for i, w in enumerate(waiters) if i != 1] == [None] * 19


async def test_one_key_opens_one_hold_per_gap_and_its_code_still_never_waits(monkeypatch):
    """A flood of one tab's clicks stops the streams once a gap; its own code is a person's all the same."""
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    loop = asyncio.get_running_loop()
    with lane.first("tab-1") as one:
        assert one.open
        with lane.first("tab-1") as again:
            assert not again.open and not lane.holding() and lane.blocked() is None
        one.close()
    with lane.first("tab-1") as third:  # within the gap: it stops nobody
        assert not third.open
        assert await loop.create_task(_wait_if_blocked(), context=contextvars.Context()) is False
    gate = this_gate()
    gate.prove("tab-2")  # (a tab whose run started under a hold before: no UNPROVEN_GAP for it)
    with lane.first("tab-2") as other:  # another tab's does
        assert other.open
    gate.keys[False, "tab-1"] -= lane.KEY_GAP  # the gap has passed
    gate.unproven_at -= lane.UNPROVEN_GAP  # (tab-1 never started a run: the worker's gap for such tabs too)
    with lane.first("tab-1") as later:
        assert later.open


async def test_made_up_tabs_share_one_hold_per_unproven_gap_and_a_tab_whose_run_started_has_its_own(monkeypatch):
    """A page can name any number of tabs: those that never started a run under a hold stop the streams
    once per ``UNPROVEN_GAP`` between them all; a tab whose run started is a person's (one per ``KEY_GAP``)."""
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    gate = lane._gate()
    for n in range(50):  # a flood of made-up tabs' decision events
        lane.arrive(f"made-up-{n}")
    assert gate.holds == 1 and list(gate.arrivals) == ["made-up-0"]
    with lane.first("made-up-7") as refused:  # a handler of one of them: its own code, stopping nobody
        assert not refused.open and gate.holds == 1
        lane.started()  # … whose resume run started: a person's tab after all
    assert "made-up-7" in gate.proven and "made-up-0" not in gate.proven
    with lane.first("made-up-7") as proven:  # holds within the others' shared gap (refused above: no gap taken)
        assert proven.open and gate.holds == 2
    with lane.first("made-up-8") as other:
        assert not other.open
    with lane.first("thread-1", server=True) as card:  # the server's own keys (a card surfacing) hold
        assert card.open
        lane.started()
    assert "thread-1" not in gate.proven  # (and prove nothing: only a browser's key is)
    gate.prove("thread-2")  # a page naming its tab after a thread: the thread's own gap is apart from it
    with lane.first("thread-2") as named, lane.first("thread-2", server=True) as thread:
        assert named.open and thread.open
    gate.unproven_at -= lane.UNPROVEN_GAP  # the worker's gap has passed
    with lane.first("made-up-8") as later:
        assert later.open
    async with asyncio.timeout(5):
        while gate.holds:  # the first made-up tab's arrival: nobody takes it over, it ends on its own
            await asyncio.sleep(0.01)


async def test_an_arrived_decision_holds_until_its_handler_takes_the_hold_over(monkeypatch):
    """The event's hold is the handler's: one hold, open from the arrival until the handler's block ends."""
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    loop = asyncio.get_running_loop()
    lane.arrive("tab-a")
    gate = this_gate()
    waiter = loop.create_task(_wait_if_blocked(), context=contextvars.Context())
    await _turns()
    assert gate.holds == 1 and not waiter.done()  # stopped from the arrival on
    with lane.first("tab-a") as hold:
        assert hold.open and gate.holds == 1 and lane.holding()  # taken over: no second hold, no gap refused
        await asyncio.sleep(lane.ARRIVAL + 0.05)
        assert hold.open and not waiter.done()  # the arrival's bound no longer applies: the handler's block does
    assert await asyncio.wait_for(waiter, 5) is True
    assert gate.holds == 0 and not gate.arrivals


async def test_an_arrival_nobody_takes_over_ends_and_its_late_handler_stillholds(monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    monkeypatch.setattr(lane, "ARRIVAL", 0.05)
    loop = asyncio.get_running_loop()
    lane.arrive("tab-b")
    lane.arrive("tab-b")  # a flood of one tab's events: one hold
    gate = this_gate()
    assert gate.holds == 1
    async with asyncio.timeout(5):
        while gate.holds:  # the handler never came (it refused the event): the hold ends on its own
            await asyncio.sleep(0.01)
    assert await loop.create_task(_wait_if_blocked(), context=contextvars.Context()) is False
    with lane.first("tab-b") as late:  # the late handler: the key's gap was taken for it, it holds all the same
        assert late.open and gate.holds == 1
    with lane.first("tab-b") as again:  # but only once
        assert not again.open
    lane.arrive("")  # no tab: no hold
    assert gate.holds == 0 and not gate.stopped


def test_a_notice_on_a_decisions_way_stays_first_when_joined_and_over_the_wire():
    first, later = Notice("o", "t", revision=3, first=True), Notice("o", "t", revision=4)
    assert first.then(later) == Notice("o", "t", revision=4, first=True)
    assert later.then(first) == Notice("o", "t", revision=4, first=True)
    assert first.then(Notice("o", "t", trail=True)) == first
    assert Notice.loads(first.dumps()).first and not Notice.loads(later.dumps()).first
    assert Notice.loads('{"owner": "o", "thread_id": "t", "first": "yes"}').first is False


# -- the real chat: the demo agent over loopback, tabs as state trees ------------------------------------------

@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, DemoStore]]:
    app = create_app(delay=0.01)
    with serve_in_thread(app) as base:
        yield f"{base}/", app.state.store


async def test_another_chats_run_waits_under_a_hold_and_finishes_after_it(agent, database, monkeypatch):
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    url, store = agent
    other = await Tab(ic.Chat(url, name="lane-other").state, store, owner="lane-other").load()
    release = asyncio.Event()

    async def hold() -> None:
        with lane.first():
            await release.wait()

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)  # the hold is open
    sending = asyncio.create_task(other.send("hello"))
    while not store.records(other.chat.thread_id):  # the other chat's request reached the agent
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    assert not sending.done()  # stopped at its run's first event while the hold is open
    assert not [m for m in other.session.transcript.messages if m.role == "assistant" and m.content]
    release.set()
    await asyncio.wait_for(holder, 5)
    await asyncio.wait_for(sending, 30)
    [*_, last] = other.session.transcript.messages
    assert last.role == "assistant" and last.content


async def test_a_click_holds_until_the_agent_has_its_resume_and_a_card_is_followed_first(agent, database,
                                                                                         monkeypatch):
    url, store = agent

    def had() -> int:
        return len([r for r in store.records() if r.get("resume")])

    events = holds(monkeypatch, had)
    sent: list[Notice] = []
    send = sync._send

    async def capture(notice: Notice) -> None:
        sent.append(notice)
        await send(notice)

    monkeypatch.setattr(sync, "_send", capture)
    tab = await Tab(ic.Chat(url, name="lane-click").state, store, owner="lane-click").load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    assert [kind for kind, _ in events] == ["open", "close"]  # the card surfacing
    assert [n.first for n in sent if n.rows is None and not n.trail][-1] is True  # its notice: followed first
    del events[:], sent[:]
    before = had()
    await tab.resolve({"approved": True}, interrupt_id)
    resumes = [r for r in store.records(tab.chat.thread_id) if r.get("resume")]
    assert len(resumes) == 1 and events == [("open", before), ("close", before + 1)]  # closed once the agent had it
    gate = this_gate()
    assert gate.holds == 0 and not gate.stopped
    assert list(gate.proven) == [tab.token]  # its resume run started: a person's tab (the card's thread is not one)
    assert any(n.first for n in sent)  # the claim's notice, on the click's way


async def test_a_clicks_arrived_hold_is_taken_over_by_the_answer_and_ends_when_the_agent_has_it(agent, database,
                                                                                                  monkeypatch):
    url, store = agent
    tab = await Tab(ic.Chat(url, name="lane-arrive").state, store, owner="lane-arrive").load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    events = holds(monkeypatch, lambda: len([r for r in store.records(tab.chat.thread_id) if r.get("resume")]))
    lane.arrive(tab.token)  # the tab's client token, as ic.tune_events does when the worker reads the click's event
    await tab.resolve({"approved": True}, interrupt_id)
    assert events == [("open", 0), ("close", 1)]  # one hold, from the arrival until the agent had the resume
    gate = this_gate()
    assert gate.holds == 0 and not gate.arrivals and tab.token in gate.proven


async def test_a_tabs_follower_holds_on_a_key_of_its_own_and_leaves_the_tabs_click_its_hold(monkeypatch):
    """A card followed first in a tab must not use up, or take over, the hold of a click in that tab."""
    monkeypatch.setattr(lane, "MAX_HOLD", 60.0)
    lane.arrive("tab-f")  # the tab's click, read by the worker
    gate = this_gate()
    seen: list[tuple[int, bool]] = []

    async def follower(token: str, watch: object, notice: Notice) -> None:
        seen.append((gate.holds, "tab-f" in gate.arrivals))

    await sync._follow_one(follower, "tab-f", None, Notice("o", "t", first=True))  # type: ignore[arg-type]
    assert seen == [(2, True)]  # a hold of its own beside the click's, which still waits for its handler
    with lane.first("tab-f") as click:
        assert click.open and gate.holds == 1  # the click's handler takes its event's hold over
    assert gate.holds == 0
