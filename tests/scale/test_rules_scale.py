"""Rules that fit on two workers with Redis (issue 43): a rule saved in one tab while the person approves the same
card in another tab, their websockets on different workers, resumes the agent exactly once.

"Allow similar" stores the rule, then answers the card as Approve does; the other tab's Approve races it for the
thread's claim (docs/decisions/0016): one of them resumes, the other is told the thread moved on.
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import Chat, DemoAgent
from tests.e2e.people import SYNC_MS
from tests.scale.conftest import ScaleApp
from tests.scale.test_people_scale import _new_socket
from tests.scale.test_scale_out import RELOADS, _resumes, pause, websocket_worker

LOAD = 60_000


def _on_another_worker(tab: Chat, app: ScaleApp, avoid: int) -> Chat:
    """A second tab of the same browser showing the same thread, its websocket on a worker other than ``avoid``."""
    other = Chat(tab.page.context.new_page(), app.url)
    for _ in range(RELOADS):
        before = frozenset(app.websockets())
        other.page.goto(app.url + "/")
        other.wait("interrupted", timeout=LOAD)
        _port, worker = _new_socket(app, before)
        if worker != avoid:
            return other
        pause()
    raise AssertionError(f"{RELOADS} loads all landed on worker {avoid}")


def test_a_rule_saved_on_one_worker_and_an_approve_on_the_other_resume_once(tab: Chat, scale_app: ScaleApp,
                                                                            scale_agent: DemoAgent):
    tab.interrupt("approval")
    other = _on_another_worker(tab, scale_app, websocket_worker(scale_app))
    tab.card().get_by_test_id("interrupt-allow-similar").click()
    expect(tab.card().get_by_test_id("rule-editor")).to_be_visible()
    expect(other.card().get_by_test_id("interrupt-approve")).to_be_enabled()
    for page, testid in ((tab.page, "rule-save"), (other.page, "interrupt-approve")):  # at once, no wait between
        page.evaluate("(id) => document.querySelector(`[data-testid=\"${id}\"]`).click()", testid)
    for chat in (tab, other):
        expect(chat.cards()).to_have_count(0, timeout=SYNC_MS)
        chat.wait("idle", timeout=LOAD)
    thread = scale_agent.last_thread()
    tab.page.wait_for_timeout(1_000)  # a second resume would have arrived by now
    resumed = _resumes(scale_agent, thread)
    assert len(resumed) == 1, resumed
    assert [e["payload"] for e in resumed[0]["resume"]] == [{"approved": True}]
    policies = tab.page.context.new_page()
    policies.goto(scale_app.url + "/policies")
    expect(policies.locator('[data-testid="policy-item"][data-source="person"]')).to_have_count(1, timeout=LOAD)
