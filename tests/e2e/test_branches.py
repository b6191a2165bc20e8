"""Edit, versions and regenerate in the browser (issue 25 §1–2, contracts §5.3).

The demo agent's ``history`` scenario answers with what the run received: the number of messages, the user's
texts in order and the run's number on the thread, so the page itself shows which branch's history went out.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .a11y import assert_axe_clean
from .conftest import Chat

pytestmark = pytest.mark.stage("dev", why="edit, versions and regenerate, under React's development checks")


def _user(chat: Chat, text: str):
    return chat.messages("user").filter(has_text=text)


def test_an_edit_makes_a_version_and_the_agent_receives_the_shown_branch(chat: Chat):
    chat.open()
    chat.send("history one")
    chat.wait("idle")
    chat.send("history two")
    chat.wait("idle")
    second = _user(chat, "history two")
    second.get_by_test_id("message-edit").click()
    box = second.get_by_test_id("message-edit-input")
    expect(box).to_have_value("history two")
    second.get_by_test_id("message-edit-cancel").click()
    expect(box).to_have_count(0)
    second.get_by_test_id("message-edit").click()
    assert_axe_clean(chat.page, "a message's edit box")
    second.get_by_test_id("message-edit-input").fill("history 2b")
    second.get_by_test_id("message-edit-save").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("I received 3 messages")
    expect(chat.messages("assistant").last).to_contain_text("“history one” · “history 2b”")
    edited = _user(chat, "history 2b")
    nav = edited.get_by_test_id("branch-nav")
    expect(nav).to_have_attribute("data-branch", "2/2")
    expect(nav.get_by_test_id("branch-next")).to_be_disabled()
    assert_axe_clean(chat.page, "a message with two versions")
    chat.shot_content("branches")  # the README's
    nav.get_by_test_id("branch-prev").click()
    old = _user(chat, "history two")
    expect(old.get_by_test_id("branch-nav")).to_have_attribute("data-branch", "1/2")
    expect(chat.messages("user")).to_have_count(2)
    expect(chat.messages("assistant").last).to_contain_text("“history one” · “history two”")
    chat.send("history three")  # continues the branch shown
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("“history one” · “history two” · “history three”")
    chat.page.reload()
    old = _user(chat, "history two")
    expect(old.get_by_test_id("branch-nav")).to_have_attribute("data-branch", "1/2", timeout=20_000)
    expect(chat.messages("user")).to_have_count(3)
    chat.page.get_by_test_id("thread-search").fill("history 2b")  # search covers every branch
    expect(chat.page.get_by_test_id("thread-item")).to_have_count(1)
    chat.page.get_by_test_id("thread-search").fill("")
    old.get_by_test_id("branch-next").click()
    expect(_user(chat, "history 2b").get_by_test_id("branch-nav")).to_have_attribute("data-branch", "2/2")
    expect(chat.messages("user")).to_have_count(2)
    expect(chat.messages("assistant").last).to_contain_text("“history one” · “history 2b”")


def test_regenerate_answers_again_on_the_same_history_and_keeps_the_old_answer(chat: Chat):
    chat.open()
    chat.send("history again")
    chat.wait("idle")
    first = chat.messages("assistant").last
    expect(first).to_contain_text("run 1 on this thread")
    first.get_by_test_id("message-regenerate").click()
    chat.wait("idle")
    answer = chat.messages("assistant").last
    expect(answer).to_contain_text("run 2 on this thread")
    expect(answer).to_contain_text("I received 1 messages")  # the same history, without the old answer
    expect(chat.messages("assistant")).to_have_count(1)
    expect(answer.get_by_test_id("branch-nav")).to_have_attribute("data-branch", "2/2")
    answer.get_by_test_id("branch-prev").click()
    expect(chat.messages("assistant").last).to_contain_text("run 1 on this thread")
    expect(chat.messages("assistant").last.get_by_test_id("branch-nav")).to_have_attribute("data-branch", "1/2")


def test_edit_and_regenerate_are_not_offered_while_a_request_is_open(chat: Chat):
    chat.open()
    chat.send("history first")
    chat.wait("idle")
    expect(chat.messages("assistant").last.get_by_test_id("message-regenerate")).to_have_count(1)
    chat.send("approval")
    chat.wait("interrupted")
    expect(chat.page.get_by_test_id("message-edit")).to_have_count(0)
    expect(chat.page.get_by_test_id("message-regenerate")).to_have_count(0)
    chat.card().get_by_test_id("interrupt-reject").click()
    chat.wait("idle")
    expect(chat.page.get_by_test_id("message-edit")).to_have_count(2)
