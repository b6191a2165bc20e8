"""Approvals between people on two workers with Redis (issue 41, docs/decisions/0025 §3): the last of two
approvals, clicked at once in two tabs whose websockets are on different workers, resumes exactly once.

alice asks to pay 12,000 (two approvals from ``role:finance``); bob approves; dave's two tabs then approve
at the same moment, each through its own worker: the thread's claim lets one of them resume the run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import Chat, DemoAgent
from tests.e2e.people import SYNC_MS, SignIn, approve_at_once, ask, audit, inbox_item, ready, signing_in, wait_resumes
from tests.scale.conftest import ScaleApp
from tests.scale.test_scale_out import RELOADS, _wait_for, pause

LOAD = 60_000


@pytest.fixture
def people(browser: Browser, scale_app: ScaleApp) -> Iterator[SignIn]:
    with signing_in(browser, scale_app.url) as person:
        yield person


def _new_socket(app: ScaleApp, before: frozenset[int]) -> tuple[int, int]:
    """The one websocket opened since ``before`` (the proxy's upstream ports then): its port and worker."""
    def single() -> tuple[int, int] | None:
        new = [(port, worker) for port, worker in app.websockets().items() if port not in before]
        return new[0] if len(new) == 1 else None
    return _wait_for(single, "the new tab's websocket")


def _inbox_on_another_worker(people: SignIn, app: ScaleApp) -> tuple[Page, Page, dict[int, int]]:
    """Dave's ``/inbox`` in two tabs of his browser, their websockets on different workers (reloaded until so).

    Returns the two tabs and their websockets (the proxy's upstream port -> the worker).
    """
    before = frozenset(app.websockets())
    first = people("dave", "/inbox")
    port, worker = _new_socket(app, before)
    second = first.context.new_page()
    before = frozenset(app.websockets())
    second.goto(app.url + "/inbox")
    for _ in range(RELOADS):
        ready(second)
        other_port, other_worker = _new_socket(app, before)
        if other_worker != worker:
            return first, second, {port: worker, other_port: other_worker}
        pause()
        before = frozenset(app.websockets())
        second.reload()
    raise AssertionError(f"{RELOADS} reloads all landed on worker {worker}")


def test_the_last_approval_from_two_workers_at_once_resumes_once(people: SignIn, scale_app: ScaleApp,
                                                                 scale_agent: DemoAgent):
    alice, bob = people("alice"), people("bob", "/inbox")
    dave, dave_again, sockets = _inbox_on_another_worker(people, scale_app)
    asked = ask(alice, scale_app.url, "pay invoice 12000")
    row = inbox_item(bob, asked)
    expect(row).to_be_visible(timeout=SYNC_MS)
    row.get_by_test_id("interrupt-approve").click()
    progress = Chat(alice, scale_app.url).card().get_by_test_id("approval-progress")
    expect(progress).to_have_attribute("data-have", "1", timeout=SYNC_MS)
    for page in (dave, dave_again):  # each tab's worker heard of bob's approval (through Redis for one of them)
        expect(inbox_item(page, asked).get_by_test_id("approval-progress")).to_have_attribute("data-have", "1",
                                                                                                timeout=SYNC_MS)
    assert scale_app.websockets().items() >= sockets.items()  # dave's tabs are still on their two workers
    approve_at_once([dave, dave_again], asked)
    chat = Chat(alice, scale_app.url)
    expect(chat.cards()).to_have_count(0, timeout=SYNC_MS)
    chat.wait("idle", timeout=LOAD)
    resumed = wait_resumes(scale_agent, asked, settle=1.0)
    assert len(resumed) == 1, resumed
    assert [e["payload"] for e in resumed[0]["resume"]] == [{"approved": True}]
    expect(audit(alice, asked, "resolved")).to_have_count(1, timeout=SYNC_MS)
    expect(audit(alice, asked, "resolved")).to_have_attribute("data-actor", "dave")
    expect(audit(alice, asked, "approved-partly")).to_have_count(1)
    expect(audit(alice, asked, "approved-partly")).to_have_attribute("data-actor", "bob")
    for page in (bob, dave, dave_again):
        expect(inbox_item(page, asked)).to_have_count(0, timeout=SYNC_MS)
