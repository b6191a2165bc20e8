"""Live sync's follower, one per tab (issue 45): what comes while it works waits, joined where one refresh does both.

A tab's follower reads the database when it runs, so a change's notice that waits covers the
changes to its thread that come after it; a running turn's rows go ahead of the trail's notices.
The notices here are delivered in-process (no Redis), to a follower that records what it is given.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

import pytest

from interrupt_chat.workers import sync
from interrupt_chat.workers.sync import Notice, Watch


def test_two_changes_to_a_thread_join_at_the_revision_known():
    five, seven = Notice("o", "t", revision=5), Notice("o", "t", revision=7)
    assert five.then(seven) == Notice("o", "t", revision=7) == seven.then(five)
    assert five.then(Notice("o", "t")) == Notice("o", "t")  # one of them unknown: the follower reads the head
    assert Notice("o", "t").then(seven) == Notice("o", "t")
    assert five.then(Notice("o", "u", revision=7)) is None  # another thread
    assert five.then(Notice("p", "t", revision=7)) is None  # another owner


def test_a_change_covers_the_trail_and_a_turns_latest_rows_replace_the_rows_before():
    change, trail = Notice("o", "t", revision=4), Notice("o", "t", trail=True)
    assert change.then(trail) is change and trail.then(change) is change
    assert trail.then(Notice("o", "t", trail=True)) == trail
    rows, more = Notice("o", "t", rows=[{"id": "1"}]), Notice("o", "t", rows=[{"id": "1"}, {"id": "2"}], step="s")
    assert rows.then(more) is more
    assert change.then(rows) is None and rows.then(change) is None  # a change and a turn keep their order
    assert rows.then(trail) is None
    assert Notice.loads(trail.dumps()).trail and not Notice.loads(change.dumps()).trail
    assert Notice.loads('{"owner": "o", "thread_id": "t", "trail": "yes"}').trail is False


@pytest.fixture
def followed(monkeypatch) -> tuple[list[tuple[str, Notice]], asyncio.Event]:
    """Two tabs of owner ``o`` (tab-a shows t, tab-b shows u); tab-a's first notice waits for the gate."""
    seen: list[tuple[str, Notice]] = []
    gate = asyncio.Event()

    async def follower(token: str, watch: Watch, notice: Notice) -> None:
        seen.append((token, notice))
        if token == "tab-a" and len([s for s in seen if s[0] == "tab-a"]) == 1:
            await gate.wait()

    tabs = OrderedDict([("tab-a", Watch("S", "t")), ("tab-b", Watch("S", "u"))])
    monkeypatch.setattr(sync, "_watchers", OrderedDict([("o", tabs)]))
    monkeypatch.setattr(sync, "_waiting", {})
    monkeypatch.setattr(sync, "_follower", follower)
    return seen, gate


async def _settle() -> None:
    while sync._waiting or [t for t in sync._tasks if not t.done()]:
        await asyncio.sleep(0.01)


async def test_notices_wait_for_the_tabs_follower_joined_and_a_turns_rows_go_ahead_of_the_trail(followed):
    seen, gate = followed
    sync.deliver(Notice("o", "t", "tab-c", revision=5))  # the answer's claim: tab-a's follower starts, and waits
    await asyncio.sleep(0.01)
    sync.deliver(Notice("o", "t", "tab-c", trail=True))  # its audit entry
    sync.deliver(Notice("o", "t", "tab-c", rows=[{"id": "m1"}]))  # the follow-up's first rows...
    sync.deliver(Notice("o", "t", "tab-c", rows=[{"id": "m1"}, {"id": "m2"}]))  # ...and more of them
    sync.deliver(Notice("o", "t", "tab-a", revision=6))  # tab-a's own change: not for tab-a
    assert [n for _seen, n in sync._waiting["tab-a"]] == [Notice("o", "t", "tab-c", rows=[{"id": "m1"}, {"id": "m2"}]),
                                                          Notice("o", "t", "tab-c", trail=True)]
    gate.set()
    await _settle()
    mine = [n for token, n in seen if token == "tab-a"]
    assert [(n.revision, n.trail, n.rows) for n in mine] == [(5, False, None), (0, False, [{"id": "m1"}, {"id": "m2"}]),
                                                             (0, True, None)]
    # tab-b (showing another thread) followed the changes on its own, waiting for nobody; no rows for it
    assert [(n.revision, n.trail, n.rows) for token, n in seen if token == "tab-b"] == [(5, False, None),
                                                                                        (0, True, None),
                                                                                        (6, False, None)]
    assert sync._waiting == {}


async def test_a_tab_far_behind_keeps_the_newest_notice_of_each_kind_per_thread(followed, monkeypatch):
    seen, gate = followed
    monkeypatch.setattr(sync, "MAX_WAITING", 3)
    sync.deliver(Notice("o", "t", revision=1))
    await asyncio.sleep(0.01)
    for thread_id in ("x", "y", "x", "z", "y"):  # other threads changed, one after the other
        sync.deliver(Notice("o", thread_id, revision=2))
    assert [n.thread_id for _seen, n in sync._waiting["tab-a"]] == ["x", "z", "y"]
    gate.set()
    await _settle()
    assert [n.thread_id for token, n in seen if token == "tab-a"] == ["t", "x", "z", "y"]


async def test_a_follower_that_fails_does_not_stop_the_tabs_next_notices(followed, monkeypatch, caplog):
    seen: list[Notice] = []

    async def follower(token: str, watch: Watch, notice: Notice) -> None:
        seen.append(notice)
        if notice.revision == 1:
            await asyncio.sleep(0.02)
            raise RuntimeError("boom")

    monkeypatch.setattr(sync, "_follower", follower)
    sync.deliver(Notice("o", "t", "tab-b", revision=1))
    await asyncio.sleep(0)
    sync.deliver(Notice("o", "t", "tab-b", revision=2))
    await _settle()
    assert [n.revision for n in seen] == [1, 2]
    assert "a follower failed" in caplog.text
