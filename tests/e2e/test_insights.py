"""/insights in the browser (issue 44, contracts §6.5): a person's decisions in the summary and the four charts
(drawn by rx.recharts), the period select, and nobody else's figures."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from .conftest import ARTIFACTS, Chat

pytestmark = pytest.mark.stage("dev", why="the recharts charts and the period select, under React's development checks")

LOAD_MS = 30_000
METRICS = ("time-to-decide", "waiting", "outcomes", "by-tool")


def _insights(page: Page, base_url: str) -> Page:
    page.goto(base_url + "/insights")
    return page


def test_a_persons_decisions_show_in_the_summary_and_the_charts(chat: Chat):
    chat.interrupt("approval")
    time.sleep(1.2)  # a wait the summary can see (the time to decide is measured from the card surfacing)
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    chat.send("approval")
    chat.wait("interrupted")
    chat.card().get_by_test_id("interrupt-reject").click()
    chat.wait("idle")
    page = _insights(chat.page.context.new_page(), chat.base_url)
    summary = page.get_by_test_id("insights-summary")
    expect(summary).to_have_attribute("data-period", "7d", timeout=LOAD_MS)
    expect(summary).to_have_attribute("data-count", "2")
    expect(summary).to_have_attribute("data-expired-rate", "0")
    p50, p95 = int(summary.get_attribute("data-p50-ms") or "0"), int(summary.get_attribute("data-p95-ms") or "0")
    assert 0 <= p50 <= p95 and 1000 <= p95 < 120_000, (p50, p95)  # the approval waited more than a second
    for metric in METRICS:
        expect(page.locator(f'[data-testid="insights-chart"][data-metric="{metric}"]')).to_have_count(1)
    outcomes = page.locator('[data-testid="insights-chart"][data-metric="outcomes"]')
    expect(outcomes.locator(".recharts-surface").first).to_be_visible()  # drawn by recharts, not a placeholder
    expect(page.get_by_test_id("insights-period")).to_have_value("7d")
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".ic-main").screenshot(path=str(ARTIFACTS / "insights-page.png"))
    page.get_by_test_id("insights-period").select_option("24h")
    expect(summary).to_have_attribute("data-period", "24h", timeout=LOAD_MS)
    expect(summary).to_have_attribute("data-count", "2")
    page.get_by_test_id("insights-period").select_option("30d")
    expect(summary).to_have_attribute("data-period", "30d", timeout=LOAD_MS)
    expect(summary).to_have_attribute("data-count", "2")


def test_another_person_sees_none_of_them(chat: Chat, browser):
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    mine = _insights(chat.page.context.new_page(), chat.base_url).get_by_test_id("insights-summary")
    expect(mine).to_have_attribute("data-count", "1", timeout=LOAD_MS)
    other = browser.new_context()  # another browser: another anonymous person
    try:
        theirs = _insights(other.new_page(), chat.base_url).get_by_test_id("insights-summary")
        expect(theirs).to_have_attribute("data-count", "0", timeout=LOAD_MS)
        expect(theirs).to_have_attribute("data-p50-ms", "0")
    finally:
        other.close()


def test_metrics_and_the_audit_export_count_the_decisions_and_name_nobody(chat: Chat, thread_db_url: str, tmp_path):
    import subprocess
    import sys
    import urllib.request

    import reflex as rx

    from interrupt_chat.demo.agent.interrupts import DELETE_ARGS
    from interrupt_chat.tab.identity import COOKIE

    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    [cookie] = [c["value"] for c in chat.page.context.cookies() if c["name"] == COOKIE]
    identity = [cookie, *[part for part in cookie.split(".") if len(part) >= 16]]
    with urllib.request.urlopen(rx.config.get_config().api_url.rstrip("/") + "/metrics", timeout=30) as answer:
        assert answer.status == 200 and answer.headers["Content-Type"].startswith("text/plain")
        body = answer.read().decode()
    for family in ("interrupt_chat_pending", "interrupt_chat_decisions_total", "interrupt_chat_decision_seconds",
                   "interrupt_chat_runs_active"):
        assert f"\n{family}" in body or body.startswith(family), family
    resolved = [line for line in body.splitlines()
                if line.startswith('interrupt_chat_decisions_total{action="resolved",by="person"}')]
    assert resolved and float(resolved[0].rsplit(" ", 1)[1]) >= 1
    export = tmp_path / "audit.jsonl"
    made = subprocess.run([sys.executable, "-m", "interrupt_chat", "audit", "export", "--out", str(export),
                           "--db", thread_db_url], capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made
    checked = subprocess.run([sys.executable, "-m", "interrupt_chat", "audit", "verify", "--file", str(export)],
                             capture_output=True, text=True, timeout=120, check=False)
    assert checked.returncode == 0 and checked.stdout.startswith("OK "), checked
    written = export.read_text()
    assert str(DELETE_ARGS["path"]) not in body, "an argument value in a metric"
    for key in identity:  # the export may hold answers (an edited call's arguments): never an identity
        assert key not in body and key not in written, "an identity leaked"
    whole = subprocess.run([sys.executable, "-m", "interrupt_chat", "audit", "verify", "--db", thread_db_url],
                           capture_output=True, text=True, timeout=120, check=False)
    assert whole.returncode == 0 and whole.stdout.strip() == checked.stdout.strip(), whole
