"""Four people in four browsers (contracts §6.2): what the people tests share.

Each person is a context of their own (``browser.new_context()``), signed in on ``/login`` as one of the
demo's people (alice: staff; bob and dave: finance; carol: managers; password ``<id>-demo``).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from starlette.applications import Starlette
from starlette.routing import Route

from interrupt_chat.approvals import notifier
from tests.unit.agents import serve_in_thread

from .conftest import Chat, DemoAgent
from .test_decision_links import SECRET, Hook
from .test_people_login import LOAD, sign_in

SYNC_MS = 2_000  # every page follows a change within 2 s (§5.1)
REPLY_MS = 10_000  # a resumed run's answer: the agent streams it
VIEWPORT = {"width": 1280, "height": 900}  # wide: the thread list and the audit are in view

__all__ = ["LOAD", "REPLY_MS", "SYNC_MS", "Asked", "Hook", "SignIn", "approve_at_once", "ask", "audit", "events",
           "hook_fixture", "inbox", "inbox_item", "people_fixture", "ready", "resumes", "signing_in", "wait_resumes"]

SignIn = Callable[..., Page]


@dataclass(frozen=True)
class Asked:
    """A request someone asked: its thread and interrupt."""

    thread_id: str
    interrupt_id: str


@pytest.fixture(name="people")
def people_fixture(browser: Browser, app_url: str) -> Iterator[SignIn]:
    """``people("bob", "/inbox")``: a new browser context signed in as bob, on that page (default ``/``)."""
    with signing_in(browser, app_url) as person:
        yield person


@contextlib.contextmanager
def signing_in(browser: Browser, base_url: str) -> Iterator[SignIn]:
    """What :func:`people_fixture` gives, against the app at ``base_url``; the contexts are closed after."""
    contexts: list[BrowserContext] = []

    def person(name: str, path: str = "/") -> Page:
        context = browser.new_context(viewport=VIEWPORT)
        contexts.append(context)
        page = context.new_page()
        sign_in(page, base_url, name, f"{name}-demo", then=path)
        landed = re.compile(re.escape(base_url + path.rstrip("/")) + "/?$")  # a production build says /inbox/
        expect(page).to_have_url(landed, timeout=LOAD)
        expect(page.get_by_test_id("whoami")).to_have_attribute("data-person", name, timeout=LOAD)
        if path == "/inbox":
            ready(page)
        return page

    try:
        yield person
    finally:
        for context in contexts:
            context.close()


def ready(page: Page) -> None:
    """The inbox's first load has answered (its live updates flow from now on)."""
    expect(page.get_by_test_id("inbox-loading")).to_have_count(0, timeout=LOAD)
    expect(page.get_by_test_id("inbox-scope")).to_be_visible(timeout=LOAD)


def inbox(page: Page, app_url: str) -> Page:
    """Another tab of the same person (the same context) on ``/inbox``."""
    tab = page.context.new_page()
    tab.goto(app_url + "/inbox")
    ready(tab)
    return tab


def ask(page: Page, app_url: str, text: str) -> Asked:
    """On the signed-in person's ``/`` (a new thread): send ``text`` and wait for the agent's request."""
    chat = Chat(page, app_url)
    expect(chat.input).to_be_visible(timeout=LOAD)
    page.get_by_test_id("thread-new").click()
    expect(chat.messages("user")).to_have_count(0)
    chat.send(text)
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(1)
    current = page.locator('[data-testid="thread-item"][data-current="true"]')
    expect(current).to_have_count(1)
    thread_id, interrupt_id = current.get_attribute("data-thread-id"), chat.card().get_attribute("data-interrupt-id")
    assert thread_id and interrupt_id
    return Asked(thread_id, interrupt_id)


def inbox_item(page: Page, asked: Asked) -> Locator:
    return page.locator(f'[data-testid="inbox-item"][data-interrupt-id="{asked.interrupt_id}"]')


def audit(page: Page, asked: Asked, action: str) -> Locator:
    """The audit entries of the request with ``action``, in the drawer "Threads and decisions" of ``page``'s chat."""
    return page.locator(f'[data-testid="audit-entry"][data-interrupt-id="{asked.interrupt_id}"]'
                        f'[data-action="{action}"]')


def approve_at_once(pages: list[Page], asked: Asked) -> None:
    """Click Approve on the request's inbox item in every page, one right after the other (no wait between)."""
    selector = f'[data-testid="inbox-item"][data-interrupt-id="{asked.interrupt_id}"] [data-testid="interrupt-approve"]'
    for page in pages:
        expect(page.locator(selector)).to_be_enabled()
    for page in pages:
        page.evaluate("(selector) => document.querySelector(selector).click()", selector)


def resumes(agent: DemoAgent, asked: Asked) -> list[dict]:
    """What the agent received as a resume on the request's thread."""
    return [r for r in agent.records(asked.thread_id) if r.get("resume")]


def wait_resumes(agent: DemoAgent, asked: Asked, count: int = 1, settle: float = 0.5) -> list[dict]:
    """The resumes once ``count`` arrived, and after ``settle`` s more (a second one would be there by then)."""
    deadline = time.monotonic() + 10
    while len(resumes(agent, asked)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(settle)
    return resumes(agent, asked)


@pytest.fixture(name="hook")
def hook_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hook]:
    """The signed webhook's receiver (tests/e2e/test_decision_links.py): every event, with its decision link."""
    receiver = Hook()
    with serve_in_thread(Starlette(routes=[Route("/hook", receiver.receive, methods=["POST"])])) as base:
        monkeypatch.setenv(notifier.WEBHOOK_URL_ENV, f"{base}/hook")  # the backend runs in this process
        monkeypatch.setenv(notifier.WEBHOOK_SECRET_ENV, SECRET)
        yield receiver


def events(hook: Hook, asked: Asked, event: str, timeout: float = 10.0) -> list[dict]:
    """The webhook's ``event`` notifications of the request, once one has come (none after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        with hook.lock:
            found = [e for e in hook.events if e["event"] == event and e.get("interrupt_id") == asked.interrupt_id]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)
