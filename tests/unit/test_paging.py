"""The chat's ``history`` var on a long thread (paging.py, decision 22), with the state sent between events as
Reflex sends it: a turn sends the turn, a thread opens at its newest page, older and newer pages come on request,
the thread search opens a thread at its match, and a page that missed a delta gets a reset."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import interrupt_chat as ic
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.model.history import PAGE_ROWS, HistoryStore, apply
from interrupt_chat.tab import paging
from interrupt_chat.tab.paging import history_rows
from tests.unit.agents import serve_in_thread
from tests.unit.page import Page
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures
from tests.unit.test_consistency import Tab


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, DemoStore]]:
    app = create_app(delay=0.003)  # an answer streams over a few pushes, as a page sees it
    with serve_in_thread(app) as base:
        yield f"{base}/", app.state.store


@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="paging")


def drawn(row: Any) -> tuple[Any, ...]:
    """What a row shows: its text and its tool calls' arguments and results."""
    return row.id, row.role, row.content, [(c.id, c.args, c.result) for c in row.tool_calls]


class Browser:
    """A tab's page: after each event it receives the state's delta and applies the history's, as history_rows.js."""

    def __init__(self, tab: Tab, texts: Page) -> None:
        self.tab, self.texts = tab, texts  # texts: the streamed texts the tab holds, by stream key
        self.store: HistoryStore[Any] = HistoryStore()
        self.sent: list[Any] = []  # the history deltas received

    def receive(self) -> None:
        delta = self.tab.root.get_delta().get(self.tab.chat.get_full_name(), {})
        self.tab.root._clean()
        if "history_rx_state_" in delta:
            self.sent.append(delta["history_rx_state_"])
            after = apply(self.store, self.tab.chat.history)
            assert after is not None, "a delta sent in order left a gap"
            self.store = after

    def rows(self) -> list[Any]:
        return history_rows(self.tab.session)

    def check(self) -> None:
        """The page shows a stretch of the thread's history, row for row (texts it holds by key drawn whole)."""
        rows, store = self.rows(), self.store
        assert [drawn(self.texts.show(row)) for row in store.rows] == \
            [drawn(row) for row in rows[store.offset:store.offset + len(store.rows)]]
        assert store.at_end == (store.offset + len(store.rows) == len(rows))


async def _long(chat: ic.Chat, agent, texts: Page, turns: int = 60) -> tuple[Tab, Browser]:
    tab = await Tab(chat.state, agent[1]).load()
    page = Browser(tab, texts)
    page.receive()
    for text in (f"backlog {turns}", "hello"):  # the backlog's turn joins the history when the next one starts
        await tab.send(text)
        page.receive()
        page.check()
    return tab, page


async def _search(chat: ic.Chat, agent, texts: Page, query: str) -> tuple[Tab, Browser]:
    """A long thread opened from another one through the thread search."""
    tab, view = await _long(chat, agent, texts)
    thread = tab.chat.thread_id
    await chat.state.new_thread.fn(tab.chat)
    view.receive()
    await chat.state.search_threads.fn(tab.chat, query)
    await chat.state.switch_thread.fn(tab.chat, thread)
    view.receive()
    view.check()
    return tab, view


async def test_a_turn_on_a_long_thread_sends_the_turn_not_the_history(chat, agent, page, monkeypatch):
    tab, view = await _long(chat, agent, page)
    assert view.sent[-1].reset and len(view.sent[-1].rows) == PAGE_ROWS  # a snapshot's 130 rows: the newest page
    publish = paging.publish

    def sent_at_once(*args: Any, **kwargs: Any) -> None:  # each push goes out before the next, as Reflex's do
        publish(*args, **kwargs)
        view.receive()

    monkeypatch.setattr(paging, "publish", sent_at_once)
    await tab.send("hello again")
    view.receive()
    view.check()
    last = next(d for d in reversed(view.sent) if d.rows)
    assert not last.reset and [r.role for r in last.rows] == ["user", "assistant"]  # the turn before this one
    assert last.start == len(view.rows()) - 2
    # its answer streamed: it goes as the prefix and stream key the page drew it with, not a second time
    answer, whole = last.rows[1], view.rows()[-1]
    assert answer.stream and len(answer.content) < len(whole.content) and whole.content.startswith(answer.content)


async def test_a_reload_opens_at_the_newest_page_and_older_pages_come_as_asked(chat, agent, page):
    tab, _ = await _long(chat, agent, page)
    tab.restart()  # a reload: a fresh page, and a fresh state after a restart
    await tab.load()
    view = Browser(tab, page)
    view.receive()
    total = len(view.rows())
    assert total > 120 and view.store.offset == total - PAGE_ROWS and view.store.at_end
    while view.store.offset:
        offset = view.store.offset
        await chat.state.history_older.fn(tab.chat, offset)
        view.receive()
        view.check()
        assert view.store.offset == max(0, offset - PAGE_ROWS)
    sent = len(view.sent)
    await chat.state.history_older.fn(tab.chat, 0)  # nothing above the first row
    await chat.state.history_older.fn(tab.chat, "3")  # ids come from the page: not an index
    view.receive()
    assert len(view.sent) == sent and view.store.rows == view.rows()


async def test_the_thread_search_opens_a_thread_at_its_match_and_the_newer_pages_follow(chat, agent, page):
    tab, view = await _search(chat, agent, page, "topic-7?")
    rows = view.rows()
    match = next(i for i, r in enumerate(rows) if r.id == "backlog-u7")
    assert tab.chat.history.focus == "backlog-u7" and view.store.offset <= match < view.store.offset + PAGE_ROWS
    assert not view.store.at_end
    while not view.store.at_end:
        await chat.state.history_newer.fn(tab.chat, view.store.offset + len(view.store.rows))
        view.receive()
        view.check()
    await tab.send("one more")  # at the end again: the next turn sends only the turn
    view.receive()
    view.check()
    assert not view.sent[-1].reset


async def test_a_page_that_missed_a_delta_asks_and_gets_the_newest_page(chat, agent, page):
    tab, view = await _long(chat, agent, page)
    await tab.send("lost")
    tab.root.get_delta()  # sent, but the page never got it (a dropped connection)
    tab.root._clean()
    await tab.send("after")
    delta = tab.root.get_delta().get(tab.chat.get_full_name(), {})
    tab.root._clean()
    assert apply(view.store, tab.chat.history) is None  # a gap: history_rows.js asks for a reset
    await chat.state.history_resync.fn(tab.chat)
    view.receive()
    view.check()
    assert "history_rx_state_" in delta and view.sent[-1].reset and view.store.at_end


async def test_a_page_that_lost_a_streamed_text_gets_the_history_whole(chat, agent, page, monkeypatch):
    tab, view = await _long(chat, agent, page)
    publish = paging.publish
    monkeypatch.setattr(paging, "publish", lambda *a, **k: (publish(*a, **k), view.receive()))
    await tab.send("hello again")
    view.receive()
    assert view.store.rows[-1].stream  # drawn from the text the page streamed
    await chat.state.resync_stream.fn(tab.chat)  # its StreamText lost it (on_gap)
    view.receive()
    view.check()
    assert view.sent[-1].reset and not any(row.stream for row in view.store.rows)


async def test_a_match_in_the_newest_page_opens_that_page_marked(chat, agent, page):
    tab, view = await _search(chat, agent, page, "topic-59?")
    assert tab.chat.history.focus == "backlog-u59" and view.store.at_end
    assert view.store.offset == len(view.rows()) - PAGE_ROWS


async def test_a_publish_makes_only_the_rows_new_to_the_history(chat, agent, page, monkeypatch):
    """The rows are O(history): a turn digests its own rows, and a publish that finds the history unchanged none."""
    from interrupt_chat.model import views
    from interrupt_chat.tab import driver

    tab, view = await _long(chat, agent, page)
    made: list[Any] = []
    digest = views.digest
    monkeypatch.setattr(views, "digest", lambda row: made.append(row.id) or digest(row))
    await tab.send("approval")  # the turn before ("hello" and its answer) joins the history; the card's make none
    view.receive()
    view.check()
    assert len(made) == 2 and len(view.rows()) > 120 and tab.ids()
    call = tab.session.transcript.run_tool_call_ids()[-1]  # the call the card asks about
    await tab.resolve({"approved": True}, tab.ids()[0])  # the click's claim, the resume, its end: the same history
    view.receive()
    view.check()
    assert len(made) == 2 and not tab.ids()
    await tab.send("hello")  # the approval's turn joins the history: its rows only
    view.receive()
    view.check()
    session = tab.session
    history = session.transcript.messages[:session.transcript.tail_start]
    turn = history[max(i for i, m in enumerate(history) if m.role == "user"):]  # "approval" to its follow-up
    assert turn[0].content == "approval" and len(made) == 2 + len(paging.HistoryRows(turn, session.transcript)) >= 4
    assert any(call in m.tool_call_ids for m in history)
    session.transcript.set_tool_call_rejected(call)  # a change to a row the page holds: made again, and sent
    before, sent = len(made), len(view.sent)
    await driver.publish(tab.chat, session, full=True)
    view.receive()
    view.check()
    assert len(made) == before + 1 and len(view.sent) == sent + 1
    assert any(c.rejected for row in view.store.rows for c in row.tool_calls if c.id == call)


async def test_a_copy_read_from_the_store_keeps_the_digests_of_the_rows_it_shares(chat, agent, page, monkeypatch):
    """A follower replaces the tab's copy with the store's: the history's rows are not made again, a changed one is."""
    import json

    from interrupt_chat.agui.records import session_from_record, session_record
    from interrupt_chat.model import views

    tab, _ = await _long(chat, agent, page)
    old = tab.session
    made: list[Any] = []
    digest = views.digest
    monkeypatch.setattr(views, "digest", lambda row: made.append(row.id) or digest(row))

    def read() -> Any:  # what a follower's read gives: the thread from its stored record
        return session_from_record(json.loads(json.dumps(session_record(old)))).transcript

    def history(transcript: Any) -> Any:
        return paging.HistoryRows(transcript.messages[:transcript.tail_start], transcript)

    new = read()
    new.keep_remembered(old.transcript)
    kept = history(new).digests()
    assert kept == [digest(row) for row in history(new)]  # (made now, for the check)
    assert len(made) == len(history(new)) - len(history(old.transcript))  # the old copy's tail only
    assert len(history(old.transcript)) > 120
    call = next(c for m in new.messages[:new.tail_start] for c in m.tool_call_ids)
    changed = read()
    changed.set_tool_call_rejected(call)  # the store's copy differs there
    changed.keep_remembered(old.transcript)
    made.clear()
    history(changed).digests()
    owner = next(m.id for m in changed.messages if call in m.tool_call_ids)
    assert owner in made and len(made) == 1 + len(history(changed)) - len(history(old.transcript))
