"""What a person sees while ``/policies`` and ``/inbox`` load (issue 38 §6): a loading state, never
"No rules yet" or "Nothing is waiting" before the first load answered (a new person reads those as
"my rules are gone").

The backend runs in this process (the dev harness), so each test holds its page's first load back
until it has looked at the page, then lets it answer.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from interrupt_chat.approvals import inbox, rule_answers

HELD_S = 15  # at most: a load is let go by the test, or after this


@pytest.fixture
def held(monkeypatch) -> Iterator[Callable[[Any, str], threading.Event]]:
    """Hold one module's async function back until the returned event is set."""
    gates: list[threading.Event] = []

    def hold(module: Any, name: str) -> threading.Event:
        gate, real = threading.Event(), getattr(module, name)

        async def slow(*args: Any, **kwargs: Any) -> Any:
            await asyncio.to_thread(gate.wait, HELD_S)
            return await real(*args, **kwargs)

        monkeypatch.setattr(module, name, slow)
        gates.append(gate)
        return gate

    yield hold
    for gate in gates:
        gate.set()


def test_policies_say_they_load_until_the_list_answers(page: Page, app_url: str, held):
    gate = held(rule_answers, "rows")
    page.goto(app_url + "/policies")
    expect(page.get_by_test_id("policy-loading")).to_be_visible(timeout=120_000)
    page.wait_for_timeout(1_000)  # the page has drawn, connected and asked: still loading
    expect(page.get_by_test_id("policy-empty")).to_have_count(0, timeout=1)  # before: "No rules yet" at once
    expect(page.get_by_test_id("policy-loading")).to_be_visible()
    gate.set()
    expect(page.get_by_test_id("policy-empty")).to_be_visible()
    expect(page.get_by_test_id("policy-loading")).to_have_count(0)


def test_the_inbox_says_it_loads_until_its_first_load_answers(page: Page, app_url: str, held):
    gate = held(inbox, "fill")
    page.goto(app_url + "/inbox")
    expect(page.get_by_test_id("inbox-loading")).to_be_visible(timeout=120_000)
    page.wait_for_timeout(1_000)
    expect(page.get_by_test_id("inbox-empty")).to_have_count(0, timeout=1)  # before: "Nothing is waiting" at once
    gate.set()
    expect(page.get_by_test_id("inbox-empty")).to_be_visible()
    expect(page.get_by_test_id("inbox-loading")).to_have_count(0)
