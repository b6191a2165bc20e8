"""Scale-out (issue 10): with Redis and two granian workers, every feature works whichever worker a
request lands on — stop, resolve and cancel, a reload mid-interrupt, a worker killed mid-stream.

A reload opens a new websocket, which lands on either worker; the tests reload until the tab's
websocket is on the worker they want (psutil, see conftest), so each cross-worker path is taken for
certain, not by chance.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import pytest
from playwright.sync_api import expect

from interrupt_chat.tab.orphans import ORPHANED_MESSAGE
from interrupt_chat.workers import runs
from tests.e2e.conftest import Chat, DemoAgent
from tests.scale.conftest import ScaleAgent, ScaleApp

# Tries to land a websocket on a given worker. Each try should be even odds, but which worker accepts is
# the kernel's choice, and one CI run saw 12 tries in a row land on the same worker: 24, with a short
# random pause between tries so that they do not fall in step with the workers' own timers.
RELOADS = 24


def _resumes(agent: DemoAgent, thread: str) -> list[dict]:
    return [r for r in agent.records(thread) if "resume" in r]


def _wait_for(check, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}", pytrace=False)


def websocket_worker(app: ScaleApp, old: frozenset[int] = frozenset()) -> int:
    """The worker serving the only open tab's websocket (a new one: not among ``old``)."""
    def single() -> int | None:
        found = app.websockets()
        return next(iter(found.values())) if len(found) == 1 and not found.keys() & old else None
    return _wait_for(single, "exactly one websocket")


def run_worker(app: ScaleApp, agent: ScaleAgent) -> int:
    """The worker driving the only run in flight."""
    return _wait_for(lambda: len(found := app.run_workers(agent)) == 1 and next(iter(found)),
                     "exactly one worker driving a run")


def pause() -> None:
    """A short random pause before another try at landing a websocket on a given worker."""
    time.sleep(random.uniform(0.05, 0.5))


def reload_onto_another_worker(tab: Chat, app: ScaleApp, avoid: int, status: str) -> int:
    """Reload until the tab's new websocket is on a worker other than ``avoid``; the tab then shows ``status``."""
    for _ in range(RELOADS):
        before = frozenset(app.websockets())
        tab.page.reload()
        expect(tab.input).to_be_visible(timeout=60_000)
        worker = websocket_worker(app, old=before)
        if worker != avoid:
            tab.wait(status)
            return worker
        pause()
    pytest.fail(f"{RELOADS} reloads all landed on worker {avoid}", pytrace=False)


def test_both_workers_serve_tabs_and_runs(browser, scale_app: ScaleApp):
    contexts, tabs = [], []
    try:
        for _ in range(10):  # a new connection lands on either worker: open tabs until both serve some
            context = browser.new_context()
            contexts.append(context)
            tabs.append(Chat(context.new_page(), scale_app.url).open())
            seen = _wait_for(lambda: (found := scale_app.websocket_workers()).total() == len(tabs) and found,
                             "every tab's websocket")
            if len(seen) == 2:
                break
        assert len(scale_app.workers()) == 2 and len(seen) == 2, seen
        for tab in (tabs[0], tabs[-1]):  # the first and the last tab are on different workers
            tab.send("markdown")
            tab.wait("idle")
            expect(tab.messages("assistant")).to_have_count(1)
    finally:
        for context in contexts:
            context.close()


def test_stop_reaches_a_run_that_another_worker_drives(tab: Chat, scale_app: ScaleApp, scale_agent: ScaleAgent):
    tab.open()
    tab.send("long")
    tab.wait("running")
    driver = run_worker(scale_app, scale_agent)
    reload_onto_another_worker(tab, scale_app, avoid=driver, status="running")
    assert scale_app.run_workers(scale_agent) == {driver}  # the run goes on where it started
    tab.page.get_by_test_id("chat-stop").click()
    expect(tab.status).not_to_have_attribute("data-status", "running", timeout=10_000)
    _wait_for(lambda: not scale_agent.store.active_runs, "the agent to see the disconnect", timeout=10)
    expect(tab.input).to_be_enabled()
    tab.send("markdown again")  # the thread goes on, on this worker
    tab.wait("idle")
    tab.shot("scale-stop-from-another-worker")


def test_resolve_and_cancel_after_a_reload_onto_the_other_worker(tab: Chat, scale_app: ScaleApp,
                                                                 scale_agent: ScaleAgent):
    tab.interrupt("approval")
    thread = scale_agent.last_thread()
    interrupt_id = tab.card().get_attribute("data-interrupt-id")
    reload_onto_another_worker(tab, scale_app, avoid=websocket_worker(scale_app), status="interrupted")
    expect(tab.card()).to_have_attribute("data-interrupt-id", interrupt_id or "")
    tab.card().get_by_test_id("interrupt-approve").click()
    tab.wait("idle")
    [resolved] = _resumes(scale_agent, thread)
    assert [(e["interruptId"], e["status"]) for e in resolved["resume"]] == [(interrupt_id, "resolved")]

    tab.send("approval again")  # the same thread's next turn, asked on this worker
    tab.wait("interrupted")
    interrupt_id = tab.card().get_attribute("data-interrupt-id")
    reload_onto_another_worker(tab, scale_app, avoid=websocket_worker(scale_app), status="interrupted")
    tab.card().get_by_test_id("interrupt-cancel").click()
    tab.wait("idle")
    cancelled = _resumes(scale_agent, thread)[-1]
    assert cancelled["resume"] == [{"interruptId": interrupt_id, "status": "cancelled"}]


def test_a_reload_mid_interrupt_keeps_the_answers_given_on_the_other_worker(tab: Chat, scale_app: ScaleApp,
                                                                             scale_agent: ScaleAgent):
    tab.interrupt("multi")
    expect(tab.cards()).to_have_count(3)
    ids = [tab.card(i).get_attribute("data-interrupt-id") for i in range(3)]
    tab.card(2).get_by_test_id("interrupt-cancel").click()
    expect(tab.card(2)).to_contain_text("cancelled")
    reload_onto_another_worker(tab, scale_app, avoid=websocket_worker(scale_app), status="interrupted")
    expect(tab.cards()).to_have_count(3)
    expect(tab.card(2)).to_contain_text("cancelled")  # the answer given on the first worker
    tab.card(1).locator('select[name="color"]').select_option("blue")
    tab.card(1).get_by_test_id("interrupt-submit").click()
    expect(tab.card(1)).to_contain_text("resolved")
    reload_onto_another_worker(tab, scale_app, avoid=websocket_worker(scale_app), status="interrupted")
    expect(tab.card(1)).to_contain_text("resolved")
    assert _resumes(scale_agent, scale_agent.last_thread()) == []  # S7: still waiting for the first
    tab.card(0).get_by_test_id("interrupt-approve").click()
    tab.wait("idle")
    [sent] = _resumes(scale_agent, scale_agent.last_thread())
    assert [e["interruptId"] for e in sent["resume"]] == ids
    assert [e["status"] for e in sent["resume"]] == ["resolved", "resolved", "cancelled"]


def restart_after_kill(app: ScaleApp) -> None:
    """Reflex 0.10 runs granian without respawning a failed worker, so the whole app stops: start it
    again, as a supervisor would, on the build it has (the tab reconnects to it).

    Returns once the killed worker's run reads as dead: its liveness lasts ``runs.TTL_SECONDS`` after
    its last refresh, and until then its thread is busy (a send is refused with a notice).
    """
    assert app.process is not None
    lapsed = time.monotonic() + runs.TTL_SECONDS
    try:
        app.process.wait(60)
    except subprocess.TimeoutExpired:
        return  # a granian that respawns the worker: nothing to restart
    app.start(again=True)
    time.sleep(max(0.0, lapsed - time.monotonic()))


def long_run_after_an_answer(tab: Chat, scale_app: ScaleApp, scale_agent: ScaleAgent) -> int:
    """One answered question, then a long run streaming: the pid of the worker that drives it."""
    tab.open()
    tab.send("first question")
    tab.wait("idle")
    tab.send("long")
    tab.wait("running")
    return run_worker(scale_app, scale_agent)


def test_a_worker_killed_mid_stream_ends_its_run_as_failed(tab: Chat, scale_app: ScaleApp, scale_agent: ScaleAgent):
    driver = long_run_after_an_answer(tab, scale_app, scale_agent)
    reload_onto_another_worker(tab, scale_app, avoid=driver, status="running")
    os.kill(driver, signal.SIGKILL)
    restart_after_kill(scale_app)
    expect(tab.status).not_to_have_attribute("data-status", "running", timeout=60_000)
    # Reflex 0.10 restarts every worker when one dies, so the tab's socket dies too. Usually the tab
    # keeps its session and the orphaned run ends as failed; when Reflex still holds the dead socket's
    # record in Redis it gives the tab a fresh session instead, which shows the thread as last saved.
    if tab.status.get_attribute("data-status") == "error":
        expect(tab.page.get_by_test_id("chat-error")).to_have_text(ORPHANED_MESSAGE)
        expect(tab.messages("user")).to_have_count(2)  # the thread so far is kept, the unanswered question too
    else:
        expect(tab.messages("assistant")).to_have_count(1)  # the saved answer to the first question
    expect(tab.input).to_be_enabled()
    tab.shot("scale-killed-worker")
    tab.send("markdown after the restart")
    tab.wait("idle")


def test_a_tab_on_the_killed_worker_is_not_left_running(tab: Chat, scale_app: ScaleApp, scale_agent: ScaleAgent):
    """The tab's own websocket dies with the worker. Reflex then sees the dead worker's socket record in
    Redis and gives the reconnecting tab a new token (a fresh state): the thread comes back as saved."""
    driver = long_run_after_an_answer(tab, scale_app, scale_agent)
    assert websocket_worker(scale_app) == driver  # the run started on the tab's worker
    os.kill(driver, signal.SIGKILL)
    restart_after_kill(scale_app)
    expect(tab.status).not_to_have_attribute("data-status", "running", timeout=60_000)
    expect(tab.messages("assistant")).to_have_count(1)  # the saved answer to the first question
    tab.send("markdown after the restart")
    tab.wait("idle")


def test_i2_a_page_served_on_its_backend_s_origin_keeps_its_person_across_reloads(page, scale_app: ScaleApp):
    """Issue 38's identity cookie on a single-origin deploy: the page comes from the backend's own address.

    Its request for the cookie is then same-origin, which a browser sends without ``Origin`` (it says
    ``Sec-Fetch-Site: same-origin``). It was refused: the cookie never stuck, and every reload was a new
    person who saw none of their threads (found by benchmarks/long_thread.py, which serves one port).
    """
    tab = Chat(page, scale_app.env["REFLEX_API_URL"]).open()  # the proxy: the page and its backend, one origin
    tab.send("remember me across a reload")
    tab.wait("idle")
    thread = page.get_by_test_id("thread-item").first.get_attribute("data-thread-id")
    _wait_for(lambda: any(c["name"] == "interrupt_chat_id" for c in page.context.cookies()), "the identity cookie")
    for _ in range(2):
        page.reload()
        expect(tab.input).to_be_visible(timeout=60_000)
        expect(page.locator(f'[data-testid="thread-item"][data-thread-id="{thread}"]')).to_have_count(1)
        expect(tab.messages("user").filter(has_text="remember me across a reload")).to_have_count(1)
