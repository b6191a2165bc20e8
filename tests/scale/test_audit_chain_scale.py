"""The audit chain on two workers (issue 44, contracts §6.5): two people, their websockets on different workers,
approve at the same moment, round after round; ``audit verify`` then finds one valid chain holding every entry."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import urllib.request

from playwright.sync_api import Browser, Page

from tests.e2e.conftest import Chat
from tests.scale.conftest import ScaleApp
from tests.scale.test_people_scale import _new_socket
from tests.scale.test_scale_out import RELOADS, pause

LOAD = 60_000
ROUNDS = 3


def _tab_on(app: ScaleApp, page: Page) -> tuple[Chat, int]:
    before = frozenset(app.websockets())
    chat = Chat(page, app.url).open()
    return chat, _new_socket(app, before)[1]


def test_two_workers_deciding_at_once_keep_one_chain(page: Page, browser: Browser, scale_app: ScaleApp):
    page.set_viewport_size({"width": 1280, "height": 900})
    first, worker = _tab_on(scale_app, page)
    other = browser.new_context(viewport={"width": 1280, "height": 900})  # another person (anonymous)
    try:
        for _ in range(RELOADS):
            second, elsewhere = _tab_on(scale_app, other.new_page())
            if elsewhere != worker:
                break
            second.page.close()
            pause()
        else:
            raise AssertionError(f"{RELOADS} loads all landed on worker {worker}")
        for _round in range(ROUNDS):
            for chat in (first, second):
                chat.send("approval")
            for chat in (first, second):
                chat.wait("interrupted", timeout=LOAD)
            for chat in (first, second):  # at once: no wait between the clicks
                chat.page.evaluate("document.querySelector('[data-testid=\"interrupt-approve\"]').click()")
            for chat in (first, second):
                chat.wait("idle", timeout=LOAD)
    finally:
        other.close()
    url = scale_app.env["INTERRUPT_CHAT_DB_URL"]
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        (stored,) = conn.execute("SELECT COUNT(*) FROM interrupt_chat_decisions").fetchone()
    assert stored >= 2 * ROUNDS
    said = subprocess.run([sys.executable, "-m", "interrupt_chat", "audit", "verify", "--db", url],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (said.returncode, said.stdout.strip()) == (0, f"OK {stored} entries"), said
    totals = {_decided(scale_app.url) for _ in range(8)}  # each scrape lands on either worker
    assert len(totals) == 1 and totals.pop() >= 2 * ROUNDS, totals  # read from the database: the same on both


def _decided(url: str) -> float:
    """The sum of ``interrupt_chat_decisions_total`` one scrape of ``/metrics`` reports."""
    with urllib.request.urlopen(url + "/metrics", timeout=30) as answer:
        body = answer.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in body.splitlines()
               if line.startswith("interrupt_chat_decisions_total{"))
