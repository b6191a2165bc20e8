"""S25: a pending approval survives a backend restart even when the tab stays open (no reload).

The restart is simulated in-process: the backend's states are wiped (memory and ``.states/``),
and the page's websocket is closed so that it reconnects and hydrates a fresh state, as after a
real restart. The tab must show the approval again and answer it exactly once.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect

from .conftest import Chat

pytestmark = pytest.mark.stage("prod", why="a backend restart under an open tab, as deployed")


def wipe_backend_states(reflex_app) -> None:
    """A fresh backend: every state gone from memory and ``.states/``; only the thread database remembers."""
    manager = reflex_app.app_instance._state_manager
    for _ in range(2):  # a debounced disk write may land once more
        manager.states.clear()
        directory = getattr(manager, "states_directory", None)
        if directory is not None:
            for path in directory.glob("*.pkl"):
                path.unlink(missing_ok=True)
        time.sleep(0.5)


def restored(reflex_app, page: Page) -> bool:
    """Whether the backend state of the tab's token (a reconnect may have been given a new one) shows a thread."""
    token = page.evaluate("() => window.sessionStorage.getItem('token')")
    root = reflex_app.app_instance._state_manager.states.get(token or "")
    stack = [root] if root is not None else []
    while stack:
        state = stack.pop()
        if getattr(state, "loaded", False) is True and getattr(state, "thread_id", ""):
            return True
        stack.extend(state.substates.values())
    return False


class TabRestart:
    """A backend restart under an open tab: states wiped, the tab's socket closed, the tab reconnected."""

    def __init__(self, page: Page) -> None:
        """Watch the tab's event sockets (before the page opens)."""
        self.page = page
        self.sockets: list = []
        page.context.route_web_socket(re.compile(r"/_event"), self._route)

    def _route(self, ws) -> None:
        ws.connect_to_server()
        self.sockets.append(ws)

    def __call__(self, reflex_app) -> None:
        """Restart, and return once the tab has reconnected to the fresh backend."""
        wipe_backend_states(reflex_app)
        connections = len(self.sockets)
        self.sockets[-1].close(code=1012, reason="service restart")  # the tab reconnects on its own
        deadline = time.monotonic() + 20
        while len(self.sockets) == connections and time.monotonic() < deadline:
            self.page.wait_for_timeout(100)
        assert len(self.sockets) > connections, "the page did not reconnect"
        while not restored(reflex_app, self.page) and time.monotonic() < deadline:  # else the DOM is the old one
            self.page.wait_for_timeout(100)
        assert restored(reflex_app, self.page), "the tab's fresh state did not restore its thread"


def test_s25_approval_survives_a_backend_restart_without_reload(page: Page, app_url, reflex_app, demo_agent):
    restart = TabRestart(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    chat = Chat(page, app_url)
    chat.interrupt("approval")
    thread = demo_agent.last_thread()
    interrupt_id = chat.card().get_attribute("data-interrupt-id")

    restart(reflex_app)
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(1)
    expect(chat.card()).to_have_attribute("data-interrupt-id", interrupt_id)
    expect(chat.input).to_be_disabled()  # S21: still locked
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    page.wait_for_timeout(500)
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == 1


def test_s25_after_a_backend_restart_the_approval_is_answered_exactly_once_from_the_inbox(chat, reflex_app,
                                                                                          demo_agent):
    chat.interrupt("approval")
    thread = demo_agent.last_thread()
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    wipe_backend_states(reflex_app)
    inbox = chat.page.context.new_page()
    inbox.goto(chat.base_url + "/inbox")
    item = inbox.locator(f'[data-testid="inbox-item"][data-thread-id="{thread}"]')
    expect(item).to_have_attribute("data-interrupt-id", interrupt_id)
    item.get_by_test_id("interrupt-approve").click()
    expect(inbox.get_by_test_id("inbox-empty")).to_be_visible()
    # its state was wiped with no reconnect: live sync has nothing to refresh there yet. Wait for what the tab
    # settles on (a card counted while the page redraws it would be missed), then click the stale card
    chat.page.wait_for_function("() => document.querySelector('[data-testid=\"interrupt-card\"]') || "
                                "document.querySelector('[data-testid=\"run-status\"][data-status=\"idle\"]')")
    if chat.cards().count():
        chat.card().get_by_test_id("interrupt-approve").click()  # the stale card sends nothing
    chat.wait("idle")
    expect(chat.cards()).to_have_count(0)
    inbox.wait_for_timeout(500)
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == 1
