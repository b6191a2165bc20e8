"""Expiry that fails closed (issue 23): on ``/approval`` (``on_expiry="cancel"``) a set whose last interrupt
expires is sent by the backend, as cancelled, with no tab open; the next visit shows the thread moved on."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from .conftest import EXPIRES_IN, Chat

pytestmark = pytest.mark.stage("prod", why="the backend's expiry with no tab open, as deployed")


def test_an_expired_set_is_sent_with_no_tab_open(page: Page, app_url: str, demo_agent):
    chat = Chat(page, app_url)
    chat.interrupt("expiring", path="/approval")
    thread = demo_agent.last_thread()
    page.close()  # nobody is looking
    deadline = time.monotonic() + EXPIRES_IN + 10
    sent: list[dict] = []
    while not sent:
        assert time.monotonic() < deadline, "the expired set was not sent"
        sent = [r for r in demo_agent.records(thread) if r.get("resume")]
        time.sleep(0.2)
    assert [entry["status"] for entry in sent[0]["resume"]] == ["cancelled"]
    time.sleep(0.5)
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == 1
    again = Chat(page.context.new_page(), app_url).open("/approval")
    expect(again.page.get_by_test_id("approval-question")).to_have_count(0)
    again.wait("idle")
