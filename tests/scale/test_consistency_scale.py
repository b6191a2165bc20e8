"""One thread, one truth with two workers on Redis (issue 21, findings 2, 6 and 7; docs/decisions/0016).

Two tabs of one browser (one owner) whose websockets are on different workers: a stale tab's rename
keeps the other tab's turn, a delete stops the thread's run on the other worker and the thread stays
deleted, and stop and liveness belong to the thread, not the tab.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Chat, DemoAgent
from tests.scale.conftest import EXPIRES_IN, ScaleAgent, ScaleApp
from tests.scale.test_scale_out import RELOADS, _wait_for, pause, run_worker, websocket_worker


def second_tab_on_another_worker(first: Chat, app: ScaleApp) -> tuple[Chat, int]:
    """A second tab of the same browser whose websocket is not on the first tab's worker."""
    first_worker = websocket_worker(app)
    first_socket = frozenset(app.websockets())
    page = first.page.context.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    second = Chat(page, app.url).open()
    for _ in range(RELOADS):
        worker = _wait_for(lambda: next((w for port, w in app.websockets().items() if port not in first_socket),
                                        None), "the second tab's websocket")
        if worker != first_worker:
            return second, worker
        pause()
        page.reload()
        expect(second.input).to_be_visible(timeout=60_000)
    raise AssertionError(f"{RELOADS} reloads all landed on worker {first_worker}")


def start_long_run(tab: Chat, agent: DemoAgent) -> str:
    """Send ``long`` and wait until the agent streams it; its thread."""
    runs = len(agent.store.active_runs)
    tab.send("long")
    tab.wait("running")
    _wait_for(lambda: len(agent.store.active_runs) > runs, "the agent to stream the run")
    thread = current_item(tab).get_attribute("data-thread-id")
    assert thread
    return thread


def current_item(tab: Chat):
    return tab.page.locator('[data-testid="thread-item"][data-current="true"]')


def test_finding02_a_stale_tab_on_the_other_worker_renaming_keeps_the_turn(tab: Chat, scale_app: ScaleApp,
                                                                           scale_agent: ScaleAgent):
    tab.open()
    tab.send("first words")
    tab.wait("idle")
    thread = scale_agent.last_thread()
    stale, _ = second_tab_on_another_worker(tab, scale_app)
    expect(current_item(stale)).to_have_attribute("data-thread-id", thread)
    tab.send("second words")  # the other tab does not see this turn
    tab.wait("idle")
    expect(tab.messages("user")).to_have_count(2)
    current_item(stale).locator("xpath=..").get_by_test_id("thread-rename").click()
    stale.page.get_by_test_id("thread-rename-input").fill("Renamed on the other worker")
    stale.page.get_by_test_id("thread-rename-confirm").click()
    expect(current_item(stale)).to_contain_text("Renamed on the other worker")
    stale.page.wait_for_timeout(700)  # the title's write follows the view's update
    tab.page.reload()
    tab.wait("idle")
    expect(tab.messages("user")).to_have_count(2)
    expect(tab.messages("assistant")).to_have_count(2)
    expect(current_item(tab)).to_contain_text("Renamed on the other worker")


def test_finding06_a_thread_deleted_on_the_other_worker_while_it_runs_stays_deleted(
        tab: Chat, scale_app: ScaleApp, scale_agent: ScaleAgent):
    thread = start_long_run(tab.open(), scale_agent)
    driver = run_worker(scale_app, scale_agent)
    other, worker = second_tab_on_another_worker(tab, scale_app)
    if worker == driver:  # the run is driven where the first tab's socket is; the deleting tab must be elsewhere
        other.page.close()
        other, worker = second_tab_on_another_worker(tab, scale_app)
    item = other.page.locator(f'[data-testid="thread-item"][data-thread-id="{thread}"]')
    expect(item).to_have_count(1)
    item.locator("xpath=..").get_by_test_id("thread-delete").click()
    other.page.get_by_test_id("thread-delete-confirm").click()
    _wait_for(lambda: not scale_app.run_workers(scale_agent), "the run to be stopped", timeout=15)
    _wait_for(lambda: not scale_agent.store.active_runs, "the agent to see the disconnect", timeout=10)
    other.page.wait_for_timeout(1500)  # the stopped run's last save would land now
    for page in (tab.page, other.page):
        page.reload()
        expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=60_000)
        expect(page.locator(f'[data-testid="thread-item"][data-thread-id="{thread}"]')).to_have_count(0)


def test_finding07_stop_and_liveness_belong_to_the_thread(tab: Chat, page: Page, scale_app: ScaleApp,
                                                          scale_agent: ScaleAgent):
    first_thread = start_long_run(tab.open(), scale_agent)
    other, _ = second_tab_on_another_worker(tab, scale_app)
    other.page.get_by_test_id("thread-new").click()
    expect(other.messages("user")).to_have_count(0)  # the new thread is shown (the first one streams live here)
    second_thread = start_long_run(other, scale_agent)
    assert second_thread != first_thread
    _wait_for(lambda: len(scale_agent.store.active_runs) == 2, "two runs streaming")
    other.page.get_by_test_id("chat-stop").click()  # the second thread's run only
    expect(other.status).not_to_have_attribute("data-status", "running", timeout=10_000)
    _wait_for(lambda: len(scale_agent.store.active_runs) == 1, "one run left")
    other.page.wait_for_timeout(3000)  # longer than a run's liveness grace: the first run is not read as dead
    expect(tab.status).to_have_attribute("data-status", "running")
    expect(tab.page.get_by_test_id("chat-error")).to_have_count(0)
    tab.page.get_by_test_id("chat-stop").click()
    expect(tab.status).not_to_have_attribute("data-status", "running", timeout=10_000)
    _wait_for(lambda: not scale_agent.store.active_runs, "no run left", timeout=10)


# -- issue 23: live everywhere, across workers -----------------------------------------------------------------

def test_a_decision_on_worker_b_reaches_the_tab_held_by_worker_a_live(tab: Chat, scale_app: ScaleApp,
                                                                      scale_agent: ScaleAgent):
    tab.open()
    tab.send("approval")
    tab.wait("interrupted")
    interrupt_id = tab.card().get_attribute("data-interrupt-id")
    other, _ = second_tab_on_another_worker(tab, scale_app)
    expect(other.card()).to_have_attribute("data-interrupt-id", interrupt_id)
    other.card().get_by_test_id("interrupt-approve").click()
    expect(tab.cards()).to_have_count(0, timeout=2_000)  # through Redis, no reload
    tab.wait("idle", timeout=10_000)
    expect(tab.page.get_by_test_id("audit-entry")).to_have_attribute("data-action", "resolved", timeout=2_000)
    thread = scale_agent.last_thread()
    assert len([r for r in scale_agent.records(thread) if r.get("resume")]) == 1


def test_the_expiry_sweeper_sends_once_with_two_workers(tab: Chat, scale_agent: ScaleAgent):
    tab.open("/approval")  # on_expiry="cancel"; both workers run a sweeper, one holds the lock
    tab.send("expiring")
    tab.wait("interrupted")
    thread = scale_agent.last_thread()
    tab.page.close()
    _wait_for(lambda: [r for r in scale_agent.records(thread) if r.get("resume")], "the expired set to be sent",
              timeout=EXPIRES_IN + 15)
    tab.page.context.new_page().wait_for_timeout(2_000)  # a second sweeper's send would be here by now
    resumes = [r for r in scale_agent.records(thread) if r.get("resume")]
    assert len(resumes) == 1 and [e["status"] for e in resumes[0]["resume"]] == ["cancelled"]
