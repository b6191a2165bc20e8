"""Rules that fit in the browser (issue 43, contracts §6.4): the rule editor, reasons and options for a "no",
risk on the card, the policy file's allow / deny / ask / shadow rules, the pause and the denial limit.

Each test has a browser context of its own (a person of its own: the pause is theirs). The session's policy
file (``conftest.POLICY_FILE``) speaks only for payees no other test pays: Smallco, Blockco, Riskco, Shadowco.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from .conftest import ARTIFACTS, Chat, DemoAgent

pytestmark = pytest.mark.stage("dev", why="the rule editor's and the cards' widgets, under React's development checks")

SYNC_MS = 5_000


def _resumes(demo_agent: DemoAgent, thread: str) -> list[list[dict]]:
    return [r["resume"] for r in demo_agent.records(thread) if r.get("resume")]


def _payloads(demo_agent: DemoAgent, thread: str) -> list[dict]:
    return [entry["payload"] for resume in _resumes(demo_agent, thread) for entry in resume]


def _policies(chat: Chat) -> Page:
    page = chat.page.context.new_page()
    page.goto(chat.base_url + "/policies")
    expect(page.get_by_test_id("pause-all")).to_be_visible(timeout=120_000)
    return page


def test_the_rule_editor_makes_a_narrow_time_boxed_rule(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("pay invoice 500 to Acme")
    card = chat.card()
    card.get_by_test_id("interrupt-allow-similar").click()
    editor = card.get_by_test_id("rule-editor")
    expect(editor).to_be_visible()
    rows = editor.get_by_test_id("rule-arg")
    expect(rows).to_have_count(4)  # invoice, payee, amount, currency
    amount = editor.locator('[data-testid="rule-arg"][data-arg="amount"]')
    expect(amount.get_by_test_id("rule-arg-op")).to_have_value("equals")
    expect(amount.get_by_test_id("rule-arg-value")).to_have_value("500")
    amount.get_by_test_id("rule-arg-op").select_option("at-most")
    amount.get_by_test_id("rule-arg-value").fill("1000")
    editor.locator('[data-testid="rule-arg"][data-arg="invoice"]').get_by_test_id("rule-arg-op").select_option("any")
    editor.get_by_test_id("rule-duration").select_option("8h")
    ARTIFACTS.mkdir(exist_ok=True)
    card.screenshot(path=str(ARTIFACTS / "rule-editor.png"))
    editor.get_by_test_id("rule-save").click()
    chat.wait("idle")
    thread = demo_agent.last_thread()
    assert _payloads(demo_agent, thread) == [{"approved": True}]  # the shown call, approved once
    chat.send("pay invoice 700 to Acme")  # meets every condition: no card
    chat.wait("idle")
    expect(chat.cards()).to_have_count(0)
    assert _payloads(demo_agent, thread) == [{"approved": True}, {"approved": True}]
    expect(chat.page.get_by_test_id("policy-note")).to_have_count(1, timeout=SYNC_MS)
    chat.send("pay invoice 5000 to Acme")  # above the rule's limit: the person decides
    chat.wait("interrupted")
    listing = _policies(chat)
    item = listing.locator('[data-testid="policy-item"][data-source="person"]')
    expect(item).to_have_count(1, timeout=SYNC_MS)
    conditions = json.loads(item.get_attribute("data-conditions") or "")
    assert conditions == {"payee": {"equals": "Acme"}, "amount": {"at-most": 1000}, "currency": {"equals": "EUR"}}
    expires = datetime.fromisoformat(item.get_attribute("data-expires") or "")
    assert expires.tzinfo is not None
    assert timedelta(hours=7, minutes=50) < expires - datetime.now(UTC) <= timedelta(hours=8)
    expect(item.get_by_test_id("policy-revoke")).to_have_count(1)


def test_a_no_says_why(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("approval")
    card = chat.card()
    card.get_by_test_id("interrupt-reject-reason").fill("Not those files")
    card.get_by_test_id("interrupt-reject").click()
    chat.wait("idle")
    thread = demo_agent.last_thread()
    assert _payloads(demo_agent, thread) == [{"approved": False, "reason": "Not those files"}]
    expect(chat.messages("assistant").last).to_contain_text("Not those files")  # the model learned why
    chat.send("approval")
    chat.wait("interrupted")
    chat.card().get_by_test_id("interrupt-reject").click()  # an empty box: no reason at all
    chat.wait("idle")
    assert _payloads(demo_agent, thread)[-1] == {"approved": False}
    chat.send("pay invoice 300 to Acme")
    chat.wait("interrupted")
    options = chat.card().get_by_test_id("interrupt-reject-option")
    expect(options).to_have_count(3)
    options.filter(has_text="Wrong amount").click()
    chat.wait("idle")
    assert _payloads(demo_agent, thread)[-1] == {"approved": False, "reason": "Wrong amount"}


def test_the_inbox_and_a_decision_link_take_a_reason_too(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("pay invoice 250 to Acme")
    thread = demo_agent.last_thread()
    inbox = chat.page.context.new_page()
    inbox.goto(chat.base_url + "/inbox")
    item = inbox.get_by_test_id("inbox-item")
    expect(item).to_have_count(1, timeout=120_000)
    item.get_by_test_id("interrupt-reject-reason").fill("Paid already")
    item.get_by_test_id("interrupt-reject").click()
    chat.wait("idle", timeout=20_000)
    assert _payloads(demo_agent, thread) == [{"approved": False, "reason": "Paid already"}]


def test_the_policy_file_allows_denies_asks_and_shadows(chat: Chat, demo_agent: DemoAgent):
    chat.open()
    chat.send("pay invoice 50 to Smallco")  # allowed by the file: no card
    chat.wait("idle")
    thread = demo_agent.last_thread()
    assert _payloads(demo_agent, thread) == [{"approved": True}]
    chat.send("pay invoice 50 to Blockco")  # denied by the file
    chat.wait("idle")
    assert _payloads(demo_agent, thread)[-1] == {"approved": False}
    chat.send("pay invoice 50 to Riskco")  # asked: a card with its risk
    chat.wait("interrupted")
    risk = chat.card().get_by_test_id("interrupt-risk")
    expect(risk).to_have_attribute("data-level", "high")
    expect(risk).to_contain_text("new payee")
    chat.card().screenshot(path=str(ARTIFACTS / "rule-risk-card.png"))
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    chat.send("pay invoice 50 to Shadowco")  # a shadow deny: the person decides; the audit says what it would do
    chat.wait("interrupted")
    shadow = chat.page.locator('[data-testid="audit-entry"][data-action="shadow"]')
    expect(shadow).to_have_count(1, timeout=SYNC_MS)
    expect(shadow).to_have_attribute("data-shadow", "deny")
    expect(shadow).to_have_attribute("data-by", "policy")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    expect(shadow).to_have_attribute("data-interrupt-id", interrupt_id or "")
    listing = _policies(chat)
    files = listing.locator('[data-testid="policy-item"][data-source="file"]')
    expect(files).to_have_count(4, timeout=SYNC_MS)
    expect(files.get_by_test_id("policy-revoke")).to_have_count(0)
    expect(files.nth(2)).to_have_attribute("data-effect", "ask")
    expect(files.nth(3)).to_have_attribute("data-mode", "shadow")


def test_pause_all_stops_everything_until_it_is_turned_off(chat: Chat, demo_agent: DemoAgent):
    chat.open()
    chat.send("approval")
    chat.wait("interrupted")
    thread = demo_agent.last_thread()
    listing = _policies(chat)
    pause = listing.get_by_test_id("pause-all")
    expect(pause).to_have_attribute("aria-pressed", "false")
    pause.click()
    expect(pause).to_have_attribute("aria-pressed", "true", timeout=SYNC_MS)
    expect(chat.page.get_by_test_id("pause-banner")).to_be_visible(timeout=SYNC_MS)  # live on the chat page
    chat.card().get_by_test_id("interrupt-approve").click()  # an open card may still be answered
    chat.wait("idle")
    sent = len(demo_agent.records(thread))
    chat.input.fill("hello while paused")
    chat.input.press("Enter")
    expect(chat.page.get_by_test_id("pause-banner")).to_be_visible()
    chat.page.wait_for_timeout(1_000)
    assert len(demo_agent.records(thread)) == sent  # nothing reached the agent
    chat.page.reload()
    expect(chat.page.get_by_test_id("pause-banner")).to_be_visible(timeout=120_000)  # stored: survives a reload
    listing.reload()
    pause = listing.get_by_test_id("pause-all")
    expect(pause).to_have_attribute("aria-pressed", "true", timeout=120_000)
    pause.click()
    expect(pause).to_have_attribute("aria-pressed", "false", timeout=SYNC_MS)
    expect(chat.page.get_by_test_id("pause-banner")).to_have_count(0, timeout=SYNC_MS)
    chat.send("hello again")
    chat.wait("idle")
    assert len(demo_agent.records(thread)) == sent + 1


def test_pause_stops_a_running_run(chat: Chat, demo_agent: DemoAgent):
    chat.open()
    chat.send("long")
    chat.wait("running")
    listing = _policies(chat)
    listing.get_by_test_id("pause-all").click()
    expect(listing.get_by_test_id("pause-all")).to_have_attribute("aria-pressed", "true", timeout=SYNC_MS)
    expect(chat.status).not_to_have_attribute("data-status", "running", timeout=SYNC_MS)
    listing.get_by_test_id("pause-all").click()  # the person's own session: leave it unpaused
    expect(listing.get_by_test_id("pause-all")).to_have_attribute("aria-pressed", "false", timeout=SYNC_MS)


def test_three_rejections_in_a_row_stop_the_agent(chat: Chat, demo_agent: DemoAgent):
    chat.open()
    for _ in range(3):
        chat.send("approval")
        chat.wait("interrupted")
        chat.card().get_by_test_id("interrupt-reject").click()
        chat.wait("idle")
    thread = demo_agent.last_thread()
    assert _payloads(demo_agent, thread) == [{"approved": False}] * 3  # the third is still sent
    notice = chat.page.get_by_test_id("denial-limit")
    expect(notice).to_be_visible(timeout=SYNC_MS)
    expect(notice).to_contain_text(re.compile("3 requests in a row"))
    chat.page.reload()
    expect(chat.page.get_by_test_id("denial-limit")).to_be_visible(timeout=120_000)
