"""Issue 21: one thread, one truth across tabs, workers and restarts.

Finding 01: two tabs of one browser show the same approval; after a backend restart (both tabs
reconnect to fresh states, only the thread database remembers) a click on Approve in both tabs
within a few milliseconds must send the agent exactly one resume. Both tabs then draw the approved tool's
result inside its call's card (issue 39: the tab that won drew it as a row of its own).

Finding 02: a tab that has not seen the other tab's last turn (stale) renames the thread; the
rename must change the title only, never put the stale copy of the thread back over that turn.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect

from .conftest import Chat
from .test_restart import restored, wipe_backend_states

pytestmark = pytest.mark.stage("prod", why="tabs, workers and restarts with the database as arbiter, as deployed")

ROUNDS = 3
APPROVE = '[data-testid="interrupt-card"] [data-testid="interrupt-approve"]'


class TabSockets:
    """One tab's event sockets (routed per page, so each tab's own socket can be closed)."""

    def __init__(self, page: Page) -> None:
        """Watch the tab's event sockets (before the page opens)."""
        self.page = page
        self.sockets: list = []
        page.route_web_socket(re.compile(r"/_event"), self._route)

    def _route(self, ws) -> None:
        ws.connect_to_server()
        self.sockets.append(ws)


WATCH_MUTATIONS = """() => {
    window.__icLastMutation = performance.now();
    new MutationObserver(() => { window.__icLastMutation = performance.now(); })
        .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
}"""
QUIET = "ms => performance.now() - window.__icLastMutation > ms"
# Waits (5 s at most) for the button, should an update still redraw the card; the wait is reported with the gap.
CLICK = """async selector => {
    const started = performance.now();
    let button = document.querySelector(selector);
    while (!button && performance.now() - started < 5000) {
        await new Promise(resolve => setTimeout(resolve, 10));
        button = document.querySelector(selector);
    }
    if (!button) throw new Error("no " + selector + " on the page for 5 s");
    button.click();
    return performance.now() - started;
}"""


def restart_under(reflex_app, *tabs: TabSockets) -> None:
    """A backend restart under several open tabs: states wiped once, every tab's socket closed, all reconnected,
    each tab's fresh state has restored the thread, and each page's DOM is quiet again."""
    for tab in tabs:
        tab.page.evaluate(WATCH_MUTATIONS)
    wipe_backend_states(reflex_app)
    counts = [len(tab.sockets) for tab in tabs]
    for tab in tabs:
        tab.sockets[-1].close(code=1012, reason="service restart")  # each tab reconnects on its own
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(len(t.sockets) == n for t, n in zip(tabs, counts, strict=True)):
        tabs[0].page.wait_for_timeout(100)
    assert all(len(t.sockets) > n for t, n in zip(tabs, counts, strict=True)), "a tab did not reconnect"
    # The DOM alone does not say the fresh state has hydrated: until its first update arrives the page
    # still shows the state from before (a reconnect's hydrate then shows the defaults until the thread
    # is restored, one update later), so the backend's state of each tab is asked first.
    while time.monotonic() < deadline and not all(restored(reflex_app, tab.page) for tab in tabs):
        tabs[0].page.wait_for_timeout(100)
    assert all(restored(reflex_app, tab.page) for tab in tabs), "a tab's fresh state did not restore its thread"
    for tab in tabs:
        tab.page.wait_for_function(QUIET, arg=1000, timeout=15_000)


def _resumes_of(demo_agent, thread: str, interrupt_id: str) -> list[dict]:
    """The requests the agent received on ``thread`` that answer ``interrupt_id``."""
    return [r for r in demo_agent.records(thread)
            if any(entry.get("interruptId") == interrupt_id for entry in r.get("resume") or [])]


def _settle(demo_agent, thread: str, interrupt_id: str, *chats: Chat, timeout: float = 20.0) -> None:
    """Wait for the first resume of ``interrupt_id`` (10 s at most), then until no run streams and no tab
    shows ``running`` for a second in a row (a second resume would have arrived by then)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not _resumes_of(demo_agent, thread, interrupt_id):
        chats[0].page.wait_for_timeout(50)
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        busy = bool(demo_agent.store.active_runs) or any(
            c.status.get_attribute("data-status") == "running" for c in chats)
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 1.0:
            return
        chats[0].page.wait_for_timeout(50)


def _result_in_card(tab: Chat, call_id: str, why: str) -> None:
    """The tool's result is drawn inside its call's card (docs/dom-contract.md: ``tool-call``), never as a row of
    its own: every ``message`` of role ``tool`` on the page is inside a ``tool-call``."""
    card = tab.page.locator(f'[data-testid="tool-call"][data-tool-call-id="{call_id}"]')
    expect(card, why).to_have_attribute("data-status", "complete")
    expect(card.locator('[data-testid="message"][data-role="tool"]'), why).to_contain_text("deleted 3 files")
    rows = tab.page.locator('[data-testid="message"][data-role="tool"]')
    inside = tab.page.locator('[data-testid="tool-call"] [data-testid="message"][data-role="tool"]')
    expect(rows, why).to_have_count(inside.count())


def test_finding01_two_tabs_after_a_restart_send_one_resume(page: Page, app_url, reflex_app, demo_agent):
    page.set_viewport_size({"width": 1280, "height": 900})
    first_tab = TabSockets(page)
    a = Chat(page, app_url)
    second_page = page.context.new_page()  # same context: same owner cookie
    second_page.set_viewport_size({"width": 1280, "height": 900})
    second_tab = TabSockets(second_page)
    b = Chat(second_page, app_url)

    thread = None
    for round_no in range(ROUNDS):
        if round_no == 0:
            a.interrupt("approval")
            thread = demo_agent.last_thread()
            b.open_pending()  # the owner's newest thread: the one waiting in A
        else:
            a.send("approval")  # a fresh approval on the same thread
            a.wait("interrupted")
            assert demo_agent.last_thread() == thread
            b.page.reload()  # B opens the thread as it stands now
            b.wait("interrupted")
        interrupt_id = a.card().get_attribute("data-interrupt-id")
        assert interrupt_id, "the approval has no interrupt id"
        call_id = a.page.locator('[data-testid="tool-call"][data-status="awaiting_approval"]').get_attribute(
            "data-tool-call-id")
        expect(b.card()).to_have_attribute("data-interrupt-id", interrupt_id)

        restart_under(reflex_app, first_tab, second_tab)
        for name, tab in (("A", a), ("B", b)):
            try:
                tab.wait("interrupted")
            except AssertionError as exc:
                items = tab.page.locator('[data-testid="thread-item"]')
                shown = [items.nth(i).get_attribute("data-thread-id") for i in range(items.count())]
                errors = tab.page.get_by_test_id("chat-error").all_inner_texts()
                raise AssertionError(f"round {round_no + 1}: tab {name} after the restart lists threads {shown} "
                                     f"(the approval's: {thread}), {tab.messages('user').count()} user messages, "
                                     f"errors {errors}") from exc
            expect(tab.cards()).to_have_count(1)
            expect(tab.card()).to_have_attribute("data-interrupt-id", interrupt_id)
            expect(tab.card().get_by_test_id("interrupt-approve")).to_be_enabled()

        started = time.monotonic()  # both clicks within a few ms (one CDP round trip each)
        waits = [a.page.evaluate(CLICK, APPROVE), b.page.evaluate(CLICK, APPROVE)]
        gap_ms = (time.monotonic() - started) * 1000

        _settle(demo_agent, thread, interrupt_id, a, b)
        resumes = _resumes_of(demo_agent, thread, interrupt_id)
        assert len(resumes) == 1, (
            f"round {round_no + 1}: the agent received {len(resumes)} resume requests for interrupt "
            f"{interrupt_id} (two tabs clicked Approve {gap_ms:.0f} ms apart after a restart, "
            f"waiting {waits[0]:.0f} and {waits[1]:.0f} ms for the button); expected exactly 1; "
            f"run ids {[r.get('runId') for r in resumes]}")
        for name, tab in (("A", a), ("B", b)):  # both tabs end on the answered thread, without a reload (live sync)
            stale = f"round {round_no + 1}: tab {name} does not show the answered thread"
            expect(tab.status, stale).to_have_attribute("data-status", "idle")
            expect(tab.cards(), stale).to_have_count(0)
            _result_in_card(tab, call_id, f"round {round_no + 1}: tab {name} does not draw the tool's result "
                                          "inside its call's card")


def test_finding02_a_stale_tab_renaming_keeps_the_other_tabs_turn(chat, demo_agent):
    a = chat
    a.open()
    a.send("alpha start")
    a.wait("idle")
    thread = demo_agent.last_thread()

    b = Chat(a.page.context.new_page(), a.base_url)  # same browser: same owner, the newest thread shown
    b.page.set_viewport_size({"width": 1280, "height": 900})
    b.open()
    b_current = b.page.locator('[data-testid="thread-item"][data-current="true"]')
    expect(b_current).to_have_attribute("data-thread-id", thread)
    expect(b.messages("user")).to_have_count(1)

    a.send("hello")  # B is left alone: it has not seen this turn
    a.wait("idle")
    expect(a.messages("user")).to_have_count(2)
    expect(a.messages("assistant")).to_have_count(2)
    expect(a.messages("assistant").last).to_contain_text("You said: hello")
    assert demo_agent.last_thread() == thread

    row = b_current.locator("xpath=..")  # B renames the thread from its stale list
    row.get_by_test_id("thread-rename").click()
    b.page.get_by_test_id("thread-rename-input").fill("Renamed by B")
    b.page.get_by_test_id("thread-rename-confirm").click()
    expect(b_current).to_contain_text("Renamed by B")
    b.page.wait_for_timeout(700)  # the rename's database write runs after the view's update

    def check(tab: Chat, which: str) -> None:
        lost = f"{which}: A's turn ('hello' and its answer) is gone from the thread after the stale tab's rename"
        expect(tab.messages("user"), lost).to_have_count(2)
        expect(tab.messages("user").last, lost).to_contain_text("hello")
        expect(tab.messages("assistant"), lost).to_have_count(2)
        expect(tab.messages("assistant").last, lost).to_contain_text("You said: hello")
        current = tab.page.locator('[data-testid="thread-item"][data-current="true"]')
        expect(current).to_have_attribute("data-thread-id", thread)
        expect(current, f"{which}: the new title is not shown").to_contain_text("Renamed by B")

    a.page.reload()
    a.wait("idle")
    check(a, "tab A after a reload")

    c = Chat(a.page.context.new_page(), a.base_url)  # a fresh tab reads the thread database
    c.page.set_viewport_size({"width": 1280, "height": 900})
    c.open()
    check(c, "a fresh tab C")

    c.send("after rename")  # the next run carries the whole history to the agent
    c.wait("idle")
    last = demo_agent.records(thread)[-1]
    users = [m.get("content") for m in last.get("messages", []) if m.get("role") == "user"]
    assert users == ["alpha start", "hello", "after rename"], f"the agent's history of the thread: {users}"
    assistants = [m.get("content") or "" for m in last.get("messages", []) if m.get("role") == "assistant"]
    assert len(assistants) == 2, f"the agent's history of the thread's answers: {assistants}"
    assert "You said: hello" in assistants[-1], f"the agent's history lost the answer to 'hello': {assistants}"
