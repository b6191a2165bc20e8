"""Decision links and the webhook in the browser (issue 23, contracts §5.1): a pending approval is posted to a
signed webhook with its ``decide_url``; the link works in another browser (no owner cookie), once; a tampered
one is invalid, an expired one done; the owner's chat tab follows live; the audit says ``data-by="link"``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from interrupt_chat.approvals import links, notifier
from tests.unit.agents import serve_in_thread

from .conftest import Chat

pytestmark = pytest.mark.stage("prod", why="links answered from another browser, racing the tab, as deployed")

SECRET = "e2e-webhook-secret"
SYNC_MS = 2_000


class Hook:
    def __init__(self) -> None:
        self.events: list[dict] = []
        self.verified: list[bool] = []
        self.lock = threading.Lock()

    async def receive(self, request: Request) -> JSONResponse:
        raw = await request.body()
        ok = notifier.verify(SECRET, request.headers.get(notifier.TIMESTAMP_HEADER, ""), raw,
                             request.headers.get(notifier.SIGNATURE_HEADER, ""))
        with self.lock:
            self.events.append(json.loads(raw))
            self.verified.append(ok)
        return JSONResponse({"ok": True})

    def link_for(self, interrupt_id: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for event in self.events:
                    if event["event"] == "pending" and event["interrupt_id"] == interrupt_id:
                        assert all(self.verified)
                        return urlsplit(event["decide_url"]).path
            time.sleep(0.05)
        raise AssertionError(f"no pending notification for {interrupt_id}")


@pytest.fixture
def hook(monkeypatch) -> Iterator[Hook]:
    receiver = Hook()
    with serve_in_thread(Starlette(routes=[Route("/hook", receiver.receive, methods=["POST"])])) as base:
        monkeypatch.setenv(notifier.WEBHOOK_URL_ENV, f"{base}/hook")  # the backend runs in this process
        monkeypatch.setenv(notifier.WEBHOOK_SECRET_ENV, SECRET)
        yield receiver


def _stranger(browser: Browser) -> Page:
    """Another browser profile: none of the owner's cookies."""
    return browser.new_context().new_page()


def test_a_link_answers_from_another_browser_once_and_the_chat_follows(chat: Chat, hook: Hook, browser: Browser,
                                                                       demo_agent):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    path = hook.link_for(interrupt_id)
    assert path.startswith(links.DECIDE_PATH)
    phone = _stranger(browser)
    phone.goto(chat.base_url + path)
    card = phone.get_by_test_id("decide-card")
    expect(card).to_have_attribute("data-interrupt-id", interrupt_id)
    expect(card).to_have_attribute("data-reason", "tool_call")
    expect(card).to_contain_text("delete_files")
    phone.get_by_test_id("decide-approve").click()
    expect(phone.get_by_test_id("decide-done")).to_have_attribute("data-action", "resolved")
    expect(chat.cards()).to_have_count(0, timeout=SYNC_MS)  # the owner's tab, live
    chat.wait("idle", timeout=10_000)
    entry = chat.page.locator(f'[data-testid="audit-entry"][data-interrupt-id="{interrupt_id}"]')
    expect(entry).to_have_attribute("data-by", "link", timeout=SYNC_MS)
    phone.reload()  # used: nothing more is sent
    expect(phone.get_by_test_id("decide-done")).to_have_attribute("data-action", "resolved")
    thread = demo_agent.last_thread()
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == 1
    deadline = time.monotonic() + 10
    while not any(e["event"] == "decided" and e["interrupt_id"] == interrupt_id for e in hook.events):
        assert time.monotonic() < deadline, "no decided notification"
        time.sleep(0.05)


def test_a_tampered_link_is_invalid_and_an_expired_one_done(chat: Chat, hook: Hook, browser: Browser,
                                                           monkeypatch):
    monkeypatch.setenv(links.LINK_HOURS_ENV, str(1 / 3600))  # links live one second
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    path = hook.link_for(interrupt_id)
    phone = _stranger(browser)
    body, signature = path.removeprefix(links.DECIDE_PATH).split(".")
    phone.goto(f"{chat.base_url}{links.DECIDE_PATH}{body[:-2]}xy.{signature}")
    expect(phone.get_by_test_id("decide-invalid")).to_be_visible()
    time.sleep(1.2)
    phone.goto(chat.base_url + path)
    expect(phone.get_by_test_id("decide-done")).to_have_attribute("data-action", "expired")
    expect(chat.cards()).to_have_count(1)  # nothing was answered
    expect(chat.status).to_have_attribute("data-status", "interrupted")


def test_a_link_racing_the_owners_tab_resumes_once(chat: Chat, hook: Hook, browser: Browser, demo_agent):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    phone = _stranger(browser)
    phone.goto(chat.base_url + hook.link_for(interrupt_id))
    expect(phone.get_by_test_id("decide-approve")).to_be_enabled()
    click = "(id) => document.querySelector(`[data-testid='${id}']`).click()"
    phone.evaluate(click, "decide-approve")
    chat.page.evaluate(click, "interrupt-reject")
    chat.wait("idle", timeout=10_000)
    expect(phone.get_by_test_id("decide-done")).to_be_visible()
    time.sleep(0.5)
    thread = demo_agent.last_thread()
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == 1


def test_an_open_decide_page_follows_an_answer_given_in_the_chat(chat: Chat, hook: Hook, browser: Browser):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    phone = _stranger(browser)
    phone.goto(chat.base_url + hook.link_for(interrupt_id))
    expect(phone.get_by_test_id("decide-card")).to_be_visible()
    chat.card().get_by_test_id("interrupt-reject").click()
    expect(phone.get_by_test_id("decide-done")).to_have_attribute("data-action", "rejected", timeout=SYNC_MS)


def test_a_form_request_is_shown_by_link_but_answered_in_the_app(chat: Chat, hook: Hook, browser: Browser,
                                                                demo_agent):
    chat.interrupt("choice")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    phone = _stranger(browser)
    phone.goto(chat.base_url + hook.link_for(interrupt_id))
    card = phone.get_by_test_id("decide-card")
    expect(card).to_have_attribute("data-reason", "input_required")
    expect(card).to_contain_text("Pick a color")
    expect(card.get_by_test_id("decide-open")).to_be_visible()  # a choice is typed in the app (issue 38)
    for control in ("decide-approve", "decide-reject", "decide-submit"):
        expect(phone.get_by_test_id(control)).to_have_count(0)
    time.sleep(0.3)
    thread = demo_agent.last_thread()
    assert [r for r in demo_agent.records(thread) if r.get("resume")] == []
    expect(chat.cards()).to_have_count(1)
