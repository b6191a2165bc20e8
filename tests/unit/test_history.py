"""The history's deltas (interrupt_chat/model/history.py, decision 22): what the page holds is always a suffix
of the history, a turn sends only the turn, and a missed delta is a gap, never a wrong row."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from interrupt_chat.model.history import MAX_ROWS, PAGE_ROWS, HistoryDelta, HistoryFeed, HistoryStore, apply


@dataclass
class Row:
    id: str
    text: str


def turns(n: int, start: int = 0) -> list[Row]:
    return [Row(f"m{i}", f"text {i}") for i in range(start, start + n)]


class Page:
    """A page: applies every delta the feed makes, each sent on its own (the var is sent between publishes)."""

    def __init__(self) -> None:
        self.feed = HistoryFeed()
        self.store: HistoryStore[Row] = HistoryStore()
        self.sizes: list[int] = []

    def take(self, delta: HistoryDelta[Row] | None) -> None:
        self.feed.sent()
        if delta is None:
            return
        after = apply(self.store, delta)
        assert after is not None, "a delta sent in order never leaves a gap"
        self.store = after
        self.sizes.append(len(delta.rows))

    def check(self, rows: list[Row]) -> None:
        end = self.store.offset + len(self.store.rows)
        assert self.store.rows == rows[self.store.offset:end]
        assert self.store.at_end == (end == len(rows))


def test_a_turn_sends_only_the_turn_and_the_page_holds_the_newest_page():
    page, rows = Page(), turns(100)
    page.take(page.feed.reset("t", rows))
    assert page.store.offset == 100 - PAGE_ROWS and page.sizes == [PAGE_ROWS]
    page.check(rows)
    for turn in range(50):  # every turn adds two rows: the delta is those two, whatever the history's length
        rows = rows + turns(2, 100 + 2 * turn)
        page.take(page.feed.update("t", rows))
        page.check(rows)
    assert page.sizes[1:] == [2] * 50
    assert page.feed.update("t", rows) is None  # nothing changed: nothing is sent


def test_scrolling_up_loads_older_pages_until_the_first_row():
    page, rows = Page(), turns(75)
    page.take(page.feed.reset("t", rows))
    while page.store.offset:
        page.take(page.feed.older(rows, page.store.offset))
        page.check(rows)
    assert page.store.rows == rows and page.sizes == [30, 30, 15]
    assert page.feed.older(rows, 0) is None
    rows = rows + turns(1, 75)  # a turn after the page holds everything: still only the turn
    page.take(page.feed.update("t", rows))
    page.check(rows)
    assert page.store.offset == 0 and page.sizes[-1] == 1


def test_a_changed_row_is_sent_from_its_index_and_one_the_page_does_not_hold_resets():
    page, rows = Page(), turns(60)
    page.take(page.feed.reset("t", rows))
    rows[50] = Row("m50", "edited")  # held (the page holds 30..59)
    page.take(delta := page.feed.update("t", rows))
    assert delta is not None and (delta.reset, delta.start, len(delta.rows)) == (False, 50, 10)
    page.check(rows)
    rows.insert(3, Row("late", "a result for an old call"))  # before what the page holds: the newest page anew
    page.take(delta := page.feed.update("t", rows))
    assert delta is not None and delta.reset and page.store.offset == len(rows) - PAGE_ROWS
    page.check(rows)
    del rows[-5:]  # rows removed at the end (a version switch): the page drops them
    page.take(page.feed.update("t", rows))
    page.check(rows)


def test_two_deltas_made_before_the_first_is_sent_become_one():
    """One event that shows a thread and then publishes: the var sends only its last value."""
    page, rows = Page(), turns(40)
    page.take(page.feed.reset("t", rows))
    rows = rows + turns(2, 40)
    first = page.feed.update("t", rows)
    rows = rows + turns(2, 42)
    second = page.feed.update("t", rows)  # the first was never sent
    assert first is not None and second is not None and second.base == first.base
    page.take(second)
    page.check(rows)
    assert page.sizes[-1] == 4
    reset = page.feed.reset("t", rows)  # a reset not sent yet stays a reset
    rows = rows + turns(1, 44)
    merged = page.feed.update("t", rows)
    assert reset.reset and merged is not None and merged.reset
    page.take(merged)
    page.check(rows)
    unchanged = page.feed.update("t", rows)
    assert unchanged is None


def test_a_missed_delta_is_a_gap_and_a_reset_recovers():
    page, rows = Page(), turns(40)
    page.take(page.feed.reset("t", rows))
    rows = rows + turns(2, 40)
    page.feed.update("t", rows)  # lost: a reconnect
    page.feed.sent()
    rows = rows + turns(2, 42)
    missed = page.feed.update("t", rows)
    assert missed is not None and apply(page.store, missed) is None
    page.take(page.feed.reset("t", rows))
    page.check(rows)
    assert apply(page.store, HistoryDelta(seq=page.store.seq, rows=[Row("x", "y")])) is page.store  # already held


def test_another_thread_resets_and_a_stale_older_request_is_dropped():
    page, rows = Page(), turns(70)
    page.take(page.feed.reset("t", rows))
    other = turns(5, 500)
    page.take(delta := page.feed.update("u", other))
    assert delta is not None and delta.reset and delta.thread_id == "u"
    page.check(other)
    assert page.feed.older(other, 40) is None  # asked for the old thread's page


@pytest.mark.parametrize("seed", range(20))
def test_random_edits_keep_the_page_a_suffix_of_the_history(seed: int):
    import random
    rng = random.Random(seed)
    page, rows = Page(), turns(rng.randrange(0, 80))
    page.take(page.feed.reset("t", rows))
    for step in range(60):
        action = rng.random()
        if action < 0.4:
            rows = rows + turns(rng.randrange(1, 4), 1000 + step * 4)
        elif action < 0.55 and rows:
            i = rng.randrange(len(rows))
            rows[i] = Row(rows[i].id, f"changed {step}")
        elif action < 0.65 and rows:
            del rows[rng.randrange(len(rows)):]
        elif action < 0.8:
            page.take(page.feed.older(rows, page.store.offset))
            continue
        elif action < 0.9:
            page.take(page.feed.newer(rows, page.store.offset + len(page.store.rows)))
            continue
        elif action < 0.95 and rows:
            page.take(page.feed.reset("t", rows, around=rng.randrange(len(rows))))
            continue
        if rng.random() < 0.3:  # sometimes two publishes share one send
            page.feed.update("t", rows)
            rows = rows + turns(1, 5000 + step)
        page.take(page.feed.update("t", rows))
        page.check(rows)


def test_a_new_feed_never_reuses_a_sequence_number_a_page_may_hold():
    assert len({HistoryFeed().seq for _ in range(50)}) == 50


def test_a_search_opens_the_page_around_its_match_and_the_newer_pages_follow():
    page, rows = Page(), turns(200)
    page.take(delta := page.feed.reset("t", rows, around=40, focus="m40"))
    assert delta.focus == "m40" and not delta.at_end and page.store.offset <= 40 < page.store.offset + PAGE_ROWS
    page.check(rows)
    rows[45] = Row("m45", "changed in the window")
    page.take(page.feed.update("t", rows))
    page.check(rows)
    rows[150] = Row("m150", "changed beyond it")  # the page does not hold it: nothing is sent
    assert page.feed.update("t", rows) is None
    while not page.store.at_end:
        page.take(page.feed.newer(rows, page.store.offset + len(page.store.rows)))
        page.check(rows)
    assert page.store.rows[-1] == rows[-1] and page.store.rows[150 - page.store.offset].text == "changed beyond it"
    rows = rows + turns(2, 200)  # at the end again: a turn sends only the turn
    page.take(page.feed.update("t", rows))
    page.check(rows)
    assert page.sizes[-1] == 2


def test_a_turn_that_ends_while_the_page_shows_older_rows_brings_it_to_the_newest_page():
    page, rows = Page(), turns(200)
    page.take(page.feed.reset("t", rows, around=10))
    rows = rows + turns(2, 200)
    page.take(delta := page.feed.update("t", rows))
    assert delta is not None and delta.reset and delta.at_end
    page.check(rows)
    assert page.feed.newer(rows, len(rows)) is None


def test_rows_removed_at_the_end_leave_the_page():
    page, rows = Page(), turns(10)
    page.take(page.feed.reset("t", rows))
    del rows[7:]
    page.take(delta := page.feed.update("t", rows))
    assert delta is not None and delta.rows == [] and page.store.rows == rows


def test_more_changed_rows_than_a_page_holds_send_the_newest_page():
    """An agent's snapshot that brings a long history: the page gets its newest page, not every row."""
    page, rows = Page(), turns(10)
    page.take(page.feed.reset("t", rows))
    rows = rows + turns(500, 10)
    page.take(delta := page.feed.update("t", rows))
    assert delta is not None and delta.reset and len(delta.rows) == PAGE_ROWS
    page.check(rows)


def test_a_long_session_drops_the_oldest_rows_it_holds():
    """Turn after turn the page holds at most MAX_ROWS rows: older ones load again on the way up."""
    page, rows = Page(), turns(10)
    page.take(page.feed.reset("t", rows))
    for turn in range(100):
        rows = rows + turns(2, 10 + 2 * turn)
        page.take(page.feed.update("t", rows))
        page.check(rows)
        assert len(page.store.rows) <= MAX_ROWS
    assert page.store.offset > 0 and page.sizes[-1] == 2
    page.take(page.feed.older(rows, page.store.offset))  # the rows it dropped come back on the way up
    page.check(rows)
