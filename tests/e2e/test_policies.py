"""Policies in the browser (issue 24, contracts §5.2, docs/semantics.md P1–P5): "always allow" answers the next
run's request with no card and a ``policy-note``, the agent receiving the approval once; a thread rule ends with
its thread; a deny rule rejects; a revoke brings the card back; a rule never answers a form or a credential."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import ARTIFACTS, Chat, DemoAgent

pytestmark = pytest.mark.stage("dev", why="rules and their notes on the page, under React's development checks")

SYNC_MS = 2_000


def _resumes(demo_agent: DemoAgent, thread: str) -> list[list[dict]]:
    return [r["resume"] for r in demo_agent.records(thread) if r.get("resume")]


def _ask_again(chat: Chat) -> None:
    """The next run asks for the same tool's approval; wait until the run (and a rule's resume) is over."""
    chat.send("approval")
    chat.wait("idle", timeout=20_000)


def _policies(page: Page, base_url: str) -> Page:
    page.goto(base_url + "/policies")
    return page


def test_p2_always_allow_answers_the_next_request_with_no_card_and_a_note(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-allow-always").click()
    chat.wait("idle")
    thread = demo_agent.last_thread()
    assert [entry["payload"] for entry in _resumes(demo_agent, thread)[0]] == [{"approved": True}]
    _ask_again(chat)
    expect(chat.cards()).to_have_count(0)
    resumes = _resumes(demo_agent, thread)
    assert len(resumes) == 2, resumes  # the rule's resume, sent once
    assert [entry["payload"] for entry in resumes[1]] == [{"approved": True}]
    note = chat.page.get_by_test_id("policy-note")
    expect(note).to_have_count(1, timeout=SYNC_MS)
    expect(note).to_have_attribute("data-effect", "allow")
    expect(note).to_contain_text("delete_files")
    expect(note).to_contain_text("always allow")
    chat.shot_content("policy-note")
    interrupt_id = note.get_attribute("data-interrupt-id")
    assert interrupt_id == resumes[1][0]["interruptId"]
    entry = chat.page.locator(f'[data-testid="audit-entry"][data-interrupt-id="{interrupt_id}"]')
    expect(entry).to_have_attribute("data-by", "policy", timeout=SYNC_MS)
    chat.page.reload()  # the note is the thread's: it survives a reload
    expect(chat.page.get_by_test_id("policy-note")).to_have_count(1, timeout=20_000)


def test_p4_a_revoke_brings_the_card_back(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-allow-always").click()
    chat.wait("idle")
    listing = _policies(chat.page.context.new_page(), chat.base_url)
    item = listing.locator('[data-testid="policy-item"][data-source="person"]')
    expect(item).to_have_count(1, timeout=20_000)
    expect(item).to_have_attribute("data-tool", "delete_files")
    expect(item).to_have_attribute("data-scope", "always")
    expect(item).to_have_attribute("data-effect", "allow")
    ARTIFACTS.mkdir(exist_ok=True)
    listing.locator(".ic-main").screenshot(path=str(ARTIFACTS / "policies-page.png"))
    item.get_by_test_id("policy-revoke").click()
    expect(listing.get_by_test_id("policy-empty")).to_be_visible()
    chat.send("approval")
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(1)
    expect(chat.page.get_by_test_id("policy-note")).to_have_count(0)


def test_p3_a_thread_rule_ends_with_its_thread(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-allow-thread").click()
    chat.wait("idle")
    thread = demo_agent.last_thread()
    listing = _policies(chat.page.context.new_page(), chat.base_url)
    item = listing.locator('[data-testid="policy-item"][data-source="person"]')
    expect(item).to_have_attribute("data-scope", "thread", timeout=20_000)
    expect(item).to_have_attribute("data-thread-id", thread)
    _ask_again(chat)
    expect(chat.cards()).to_have_count(0)
    assert len(_resumes(demo_agent, thread)) == 2
    chat.page.get_by_test_id("thread-new").click()
    expect(chat.messages("user")).to_have_count(0)
    chat.send("approval")
    chat.wait("interrupted")  # another thread: the card again
    expect(chat.cards()).to_have_count(1)


def test_p2_a_deny_rule_rejects(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-deny-always").click()
    chat.wait("idle")
    thread = demo_agent.last_thread()
    assert [entry["payload"] for entry in _resumes(demo_agent, thread)[0]] == [{"approved": False}]
    _ask_again(chat)
    expect(chat.cards()).to_have_count(0)
    resumes = _resumes(demo_agent, thread)
    assert [entry["payload"] for entry in resumes[1]] == [{"approved": False}]
    expect(chat.page.get_by_test_id("policy-note")).to_have_attribute("data-effect", "deny", timeout=SYNC_MS)


def test_p5_a_rule_never_answers_a_form_or_a_credential_and_a_partly_covered_set_shows_the_rest(
        chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("credential")
    expect(chat.card().get_by_test_id("interrupt-allow-always")).to_have_count(0)  # no tool: nothing to remember
    chat.card().get_by_test_id("interrupt-cancel").click()
    chat.wait("idle")
    chat.send("approval")
    chat.wait("interrupted")
    chat.card().get_by_test_id("interrupt-allow-always").click()
    chat.wait("idle")
    chat.send("multi")  # a tool approval (the rule's), a choice and a confirmation
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(2)  # only the rest
    expect(chat.page.locator('[data-testid="interrupt-card"][data-reason="tool_call"]')).to_have_count(0)
    expect(chat.page.locator('[data-testid="interrupt-card"][data-reason="input_required"]')).to_have_count(1)
    expect(chat.page.get_by_test_id("policy-note")).to_have_count(1, timeout=SYNC_MS)
    thread = demo_agent.last_thread()
    resumes_before = len(_resumes(demo_agent, thread))
    chat.page.reload()  # stored: the rule's answer stays, the rest is still asked
    expect(chat.cards()).to_have_count(2, timeout=20_000)
    choice = chat.page.locator('[data-testid="interrupt-card"][data-reason="input_required"]')
    choice.locator("select").select_option("blue")
    choice.get_by_test_id("interrupt-submit").click()
    chat.page.locator('[data-testid="interrupt-card"][data-reason="confirmation"]').get_by_test_id(
        "interrupt-approve").click()
    chat.wait("idle")
    resumes = _resumes(demo_agent, thread)
    assert len(resumes) == resumes_before + 1  # one resume for the whole set
    payloads = {entry["interruptId"]: entry["payload"] for entry in resumes[-1]}
    assert sorted(map(str, payloads.values())) == sorted(map(str, [{"approved": True}, {"color": "blue"},
                                                                   {"approved": True}]))
