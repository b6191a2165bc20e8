"""Approvals between people in the browser (issue 41, contracts §6.2): four people in four browsers.

alice (staff) asks the demo agent to pay an invoice on ``/``; the request goes to ``role:finance`` (bob and
dave), one above 10,000 needs two of them. Her card is read-only and follows every step live; they decide it
in their ``/inbox``; the audit on her chat says who decided and for whom. Each test makes its own thread.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from playwright.sync_api import Page, expect

from .conftest import ARTIFACTS, Chat, DemoAgent
from .people import (
    LOAD,
    REPLY_MS,
    SYNC_MS,
    Hook,
    SignIn,
    approve_at_once,
    ask,
    audit,
    events,
    hook_fixture,  # noqa: F401 - the fixture hook
    inbox,
    inbox_item,
    people_fixture,  # noqa: F401 - the fixture people
    resumes,
    wait_resumes,
)

pytestmark = pytest.mark.stage("prod", why="assignments, the two-person rule and escalation, as deployed")

ESCALATING_IN = 30  # seconds to expiry: reminded at 15 s, escalated at 24 s, 6 s left to decide it


def _read_only(card) -> None:
    """A card the viewer may not decide: no approve, reject or rule controls; "Withdraw" only."""
    expect(card).to_have_attribute("data-can-decide", "false")
    for control in ("interrupt-approve", "interrupt-reject", "interrupt-allow-always", "interrupt-edit-args"):
        expect(card.get_by_test_id(control)).to_have_count(0)
    expect(card.get_by_test_id("interrupt-cancel")).to_have_text("Withdraw")


def _replies(page: Page, text: str):
    """The agent's answers saying ``text`` (not the message holding the tool call, whose result says it too)."""
    return Chat(page, "").messages("assistant").filter(has_text=text, has_not=page.get_by_test_id("tool-call"))


def _answered(page: Page, app_url: str, reply: str) -> None:
    """The asker's chat, live: the card is gone and the agent answers ``reply``, once."""
    chat = Chat(page, app_url)
    expect(chat.cards()).to_have_count(0, timeout=SYNC_MS)
    chat.wait("idle", timeout=REPLY_MS)
    expect(_replies(page, reply)).to_have_count(1, timeout=SYNC_MS)


def _paid(page: Page, app_url: str, invoice: str) -> None:
    _answered(page, app_url, f"Paid {invoice}")


def _shoot(locator, name: str, **options) -> None:
    """A screenshot into the artifacts (docs/guides/people.md shows a copy from docs/screenshots)."""
    ARTIFACTS.mkdir(exist_ok=True)
    locator.screenshot(path=str(ARTIFACTS / name), **options)


def test_a_payment_waits_for_finance_and_both_sides_follow_live(people: SignIn, app_url: str,
                                                               demo_agent: DemoAgent):
    bob, carol, alice = people("bob", "/inbox"), people("carol", "/inbox"), people("alice")
    asked = ask(alice, app_url, "pay invoice 500")
    card = Chat(alice, app_url).card()
    _read_only(card)
    expect(card.get_by_test_id("request-assignee")).to_have_attribute("data-assignee", "role:finance")
    row = inbox_item(bob, asked)
    expect(row).to_be_visible(timeout=SYNC_MS)  # bob's inbox was open before alice asked: live
    expect(row.get_by_test_id("request-asker")).to_have_text("asked by Alice")
    expect(row.get_by_test_id("interrupt-card")).to_have_attribute("data-can-decide", "true")
    expect(inbox_item(carol, asked)).to_have_count(0)  # managers: not hers
    own = inbox(alice, app_url)
    expect(inbox_item(own, asked)).to_have_count(0)  # "Assigned to me": not hers either
    own.get_by_test_id("inbox-scope").select_option("asked")
    mine = inbox_item(own, asked)
    expect(mine).to_be_visible(timeout=SYNC_MS)
    _read_only(mine.get_by_test_id("interrupt-card"))
    expect(mine.get_by_test_id("inbox-select")).to_have_count(0)
    row.get_by_test_id("interrupt-approve").click()
    _paid(alice, app_url, "INV-500")
    expect(audit(alice, asked, "resolved")).to_have_attribute("data-actor", "bob", timeout=SYNC_MS)
    expect(inbox_item(bob, asked)).to_have_count(0, timeout=SYNC_MS)
    expect(inbox_item(own, asked)).to_have_count(0, timeout=SYNC_MS)
    assert len(wait_resumes(demo_agent, asked)) == 1


def test_two_approvals_and_the_last_one_racing_from_two_tabs_resume_once(people: SignIn, app_url: str,
                                                                        demo_agent: DemoAgent):
    bob, dave, alice = people("bob", "/inbox"), people("dave", "/inbox"), people("alice")
    dave_again = inbox(dave, app_url)
    asked = ask(alice, app_url, "pay invoice 12000")
    progress = Chat(alice, app_url).card().get_by_test_id("approval-progress")
    expect(progress).to_have_attribute("data-have", "0")
    expect(progress).to_have_attribute("data-need", "2")
    row = inbox_item(bob, asked)
    expect(row.get_by_test_id("approval-progress")).to_have_attribute("data-need", "2", timeout=SYNC_MS)
    _shoot(bob.locator(".ic-main"), "people-approver-inbox.png", style=".ic-nav { display: none !important; }")
    row.get_by_test_id("interrupt-approve").click()
    expect(progress).to_have_attribute("data-have", "1", timeout=SYNC_MS)  # alice's card, live
    expect(progress).to_have_attribute("data-need", "2")
    expect(progress).to_contain_text("Bob")
    expect(audit(alice, asked, "approved-partly")).to_have_attribute("data-actor", "bob", timeout=SYNC_MS)
    _shoot(Chat(alice, app_url).card(), "people-asker-card.png")
    expect(row.get_by_test_id("approval-progress")).to_have_attribute("data-have", "1", timeout=SYNC_MS)
    row.get_by_test_id("interrupt-approve").click()  # bob again: his approval counts once
    bob.wait_for_timeout(1_000)  # the click has been handled by now
    expect(progress).to_have_attribute("data-have", "1")
    expect(Chat(alice, app_url).cards()).to_have_count(1)
    assert resumes(demo_agent, asked) == []
    approve_at_once([dave, dave_again], asked)  # the second approval, from two tabs at once
    _paid(alice, app_url, "INV-12000")
    expect(audit(alice, asked, "resolved")).to_have_count(1, timeout=SYNC_MS)
    expect(audit(alice, asked, "resolved")).to_have_attribute("data-actor", "dave")
    expect(audit(alice, asked, "approved-partly")).to_have_count(1)
    expect(audit(alice, asked, "approved-partly")).to_have_attribute("data-actor", "bob")
    for page in (bob, dave, dave_again):
        expect(inbox_item(page, asked)).to_have_count(0, timeout=SYNC_MS)
    assert len(wait_resumes(demo_agent, asked)) == 1


def test_the_asker_never_approves_their_own_request(people: SignIn, app_url: str, demo_agent: DemoAgent):
    dave, bob = people("dave", "/inbox"), people("bob")
    asked = ask(bob, app_url, "pay invoice 500")  # bob holds finance, but he asked
    card = Chat(bob, app_url).card()
    _read_only(card)
    expect(card.get_by_test_id("request-assignee")).to_have_attribute("data-assignee", "role:finance")
    row = inbox_item(dave, asked)
    expect(row).to_be_visible(timeout=SYNC_MS)
    expect(row.get_by_test_id("request-asker")).to_have_text("asked by Bob")
    row.get_by_test_id("interrupt-approve").click()
    _paid(bob, app_url, "INV-500")
    expect(audit(bob, asked, "resolved")).to_have_attribute("data-actor", "dave", timeout=SYNC_MS)
    assert len(wait_resumes(demo_agent, asked)) == 1


def test_a_reassigned_request_moves_live_and_the_new_assignee_rejects_it(people: SignIn, app_url: str,
                                                                        demo_agent: DemoAgent):
    bob, dave, carol = people("bob", "/inbox"), people("dave", "/inbox"), people("carol", "/inbox")
    alice = people("alice")
    asked = ask(alice, app_url, "pay invoice 500")
    row = inbox_item(bob, asked)
    expect(inbox_item(dave, asked)).to_be_visible(timeout=SYNC_MS)
    row.get_by_test_id("inbox-reassign").click()
    expect(row.get_by_test_id("inbox-reassign")).to_have_attribute("aria-expanded", "true")
    row.get_by_test_id("reassign-to").select_option("carol")
    row.get_by_test_id("reassign-save").click()
    for page in (bob, dave):
        expect(inbox_item(page, asked)).to_have_count(0, timeout=SYNC_MS)
    theirs = inbox_item(carol, asked)
    expect(theirs).to_be_visible(timeout=SYNC_MS)
    assignee = Chat(alice, app_url).card().get_by_test_id("request-assignee")
    expect(assignee).to_have_attribute("data-assignee", "carol", timeout=SYNC_MS)
    expect(assignee).to_contain_text("Carol")
    theirs.get_by_test_id("interrupt-reject").click()
    _answered(alice, app_url, "Payment INV-500 was not made")
    expect(audit(alice, asked, "reassigned")).to_have_attribute("data-actor", "bob", timeout=SYNC_MS)
    expect(audit(alice, asked, "rejected")).to_have_attribute("data-actor", "carol", timeout=SYNC_MS)
    resumed = wait_resumes(demo_agent, asked)
    assert len(resumed) == 1 and [e["payload"] for e in resumed[0]["resume"]] == [{"approved": False}], resumed


def test_the_asker_withdraws_and_the_request_leaves_the_inbox(people: SignIn, app_url: str, demo_agent: DemoAgent):
    bob, alice = people("bob", "/inbox"), people("alice")
    asked = ask(alice, app_url, "pay invoice 500")
    expect(inbox_item(bob, asked)).to_be_visible(timeout=SYNC_MS)
    chat = Chat(alice, app_url)
    chat.card().get_by_test_id("interrupt-cancel").click()
    expect(inbox_item(bob, asked)).to_have_count(0, timeout=SYNC_MS)
    _answered(alice, app_url, "Payment INV-500 was not made")
    expect(audit(alice, asked, "cancelled")).to_have_count(1, timeout=SYNC_MS)
    resumed = wait_resumes(demo_agent, asked)
    assert len(resumed) == 1 and [e["status"] for e in resumed[0]["resume"]] == ["cancelled"], resumed


def test_an_anonymous_visitor_decides_their_own_payment(chat: Chat, demo_agent: DemoAgent):
    chat.interrupt("pay invoice 12000")
    expect(chat.page.get_by_test_id("whoami")).to_have_attribute("data-person", "")
    card = chat.card()
    expect(card).to_have_attribute("data-can-decide", "true")
    expect(card.get_by_test_id("request-assignee")).to_have_attribute("data-assignee", "")
    expect(card.get_by_test_id("approval-progress")).to_have_count(0)  # one approval: theirs
    card.get_by_test_id("interrupt-approve").click()
    _paid(chat.page, chat.base_url, "INV-12000")
    asked_thread = demo_agent.last_thread()
    assert len([r for r in demo_agent.records(asked_thread) if r.get("resume")]) == 1


def test_a_delegate_decides_on_behalf_of_the_person_away(people: SignIn, app_url: str, demo_agent: DemoAgent):
    dave, carol, alice = people("dave", "/inbox"), people("carol", "/inbox"), people("alice")
    dave.get_by_test_id("delegate-to").select_option("carol")
    dave.get_by_test_id("delegate-until").fill((date.today() + timedelta(days=3)).isoformat())
    dave.get_by_test_id("delegate-save").click()
    expect(dave.get_by_test_id("delegate-active")).to_contain_text("Carol")
    try:
        asked = ask(alice, app_url, "pay invoice 500")
        theirs = inbox_item(carol, asked)  # carol is no assignee: she has it as dave's delegate
        expect(theirs).to_be_visible(timeout=SYNC_MS)
        expect(theirs.get_by_test_id("interrupt-card")).to_have_attribute("data-can-decide", "true")
        theirs.get_by_test_id("interrupt-approve").click()
        _paid(alice, app_url, "INV-500")
        resolved = audit(alice, asked, "resolved")
        expect(resolved).to_have_attribute("data-actor", "carol", timeout=SYNC_MS)
        expect(resolved).to_have_attribute("data-on-behalf-of", "dave")
        assert len(wait_resumes(demo_agent, asked)) == 1
    finally:  # the delegation ends here, whatever happened (the other tests' carol is not dave's delegate)
        dave.get_by_test_id("delegate-clear").click()
        expect(dave.get_by_test_id("delegate-active")).to_have_count(0)
        expect(dave.get_by_test_id("delegate-to")).to_be_visible()


def test_a_request_nobody_answers_is_reminded_then_escalated_to_managers(people: SignIn, app_url: str,
                                                                       demo_agent: DemoAgent, hook: Hook):
    carol, alice = people("carol", "/inbox"), people("alice")
    asked = ask(alice, app_url, f"pay invoice 500 expires {ESCALATING_IN}")  # reminded at 50 %, escalated at 80 %
    assert [e["assignees"] for e in events(hook, asked, "assigned")] == [["role:finance"]]
    theirs = inbox_item(carol, asked)
    expect(theirs).to_have_count(0)
    expect(theirs).to_be_visible(timeout=ESCALATING_IN * 1_000)  # live, when it is escalated
    assignee = Chat(alice, app_url).card().get_by_test_id("request-assignee")
    expect(assignee).to_have_attribute("data-assignee", "role:finance role:managers", timeout=SYNC_MS)
    expect(audit(alice, asked, "escalated")).to_have_count(1, timeout=SYNC_MS)
    theirs.get_by_test_id("interrupt-approve").click()  # before it expires
    _paid(alice, app_url, "INV-500")
    expect(audit(alice, asked, "resolved")).to_have_attribute("data-actor", "carol", timeout=SYNC_MS)
    assert [e["assignees"] for e in events(hook, asked, "reminder")] == [["role:finance"]]
    assert [e["assignees"] for e in events(hook, asked, "escalated")] == [["role:finance", "role:managers"]]
    assert len(wait_resumes(demo_agent, asked)) == 1


def test_a_decision_link_answers_as_the_signed_in_assignee_only(people: SignIn, app_url: str,
                                                                demo_agent: DemoAgent, hook: Hook):
    alice = people("alice")
    asked = ask(alice, app_url, "pay invoice 500")
    path = hook.link_for(asked.interrupt_id)
    carol = people("carol")
    carol.goto(app_url + path)
    expect(carol.get_by_test_id("decide-login")).to_be_visible(timeout=LOAD)  # managers: not hers
    expect(carol.get_by_test_id("decide-approve")).to_have_count(0)
    bob = people("bob")
    bob.goto(app_url + path)
    card = bob.get_by_test_id("decide-card")
    expect(card).to_have_attribute("data-interrupt-id", asked.interrupt_id, timeout=LOAD)
    expect(card.get_by_test_id("request-assignee")).to_have_attribute("data-assignee", "role:finance")
    assert resumes(demo_agent, asked) == []  # carol's visit decided nothing
    bob.get_by_test_id("decide-approve").click()
    expect(bob.get_by_test_id("decide-done")).to_have_attribute("data-action", "resolved")
    _paid(alice, app_url, "INV-500")
    resolved = audit(alice, asked, "resolved")
    expect(resolved).to_have_attribute("data-actor", "bob", timeout=SYNC_MS)
    expect(resolved).to_have_attribute("data-by", "link")
    assert len(wait_resumes(demo_agent, asked)) == 1
