"""Tool-based human in the loop on /steps (rules S26-S31): the agent calls the frontend tool
``generate_task_steps``, the person ticks steps and confirms, and the result reaches the agent once.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from .conftest import Chat
from .test_restart import TabRestart

pytestmark = pytest.mark.stage("dev", why="the frontend tools' widgets, under React's development checks")


def _tool_results(demo_agent, thread: str) -> list[dict]:
    return [m for r in demo_agent.records(thread) for m in r["messages"][-1:] if m["role"] == "tool"]


@pytest.mark.dojo("/steps")
def test_s27_s28_steps_are_ticked_and_sent_once(chat: Chat, demo_agent):
    chat.interrupt("steps", "/steps")
    thread = demo_agent.last_thread()
    assert [t["name"] for t in demo_agent.records(thread)[0]["tools"]] == ["generate_task_steps"]  # S26
    wait = chat.page.get_by_test_id("tool-wait")
    expect(wait).to_have_count(1)
    expect(wait).to_have_attribute("data-tool-name", "generate_task_steps")
    expect(chat.input).to_be_disabled()  # S27: locked like S21
    steps = wait.get_by_test_id("task-step")
    expect(steps).to_have_count(4)
    steps.nth(1).uncheck()
    steps.nth(3).uncheck()
    chat.shot_content("steps-page")
    wait.get_by_test_id("tool-respond").dblclick()  # a double click sends one result (S28)
    chat.wait("idle")
    expect(chat.page.get_by_test_id("tool-wait")).to_have_count(0)
    expect(chat.messages("assistant").last).to_contain_text("Running 2 step(s)")
    chat.page.wait_for_timeout(500)
    [result] = _tool_results(demo_agent, thread)
    assert [s["status"] for s in json.loads(result["content"])["steps"]] == ["enabled", "disabled", "enabled",
                                                                           "disabled"]
    expect(chat.input).to_be_enabled()


def test_s27_a_waiting_call_survives_a_reload_and_a_backend_restart(page: Page, app_url, reflex_app, demo_agent):
    restart = TabRestart(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    chat = Chat(page, app_url)
    chat.interrupt("steps", "/steps")
    thread = demo_agent.last_thread()
    call_id = page.get_by_test_id("tool-wait").get_attribute("data-tool-call-id")

    page.reload()
    chat.wait("interrupted")
    expect(page.get_by_test_id("tool-wait")).to_have_attribute("data-tool-call-id", call_id)

    restart(reflex_app)  # the tab reconnects to a fresh backend state
    chat.wait("interrupted")
    expect(page.get_by_test_id("tool-wait")).to_have_attribute("data-tool-call-id", call_id)
    expect(chat.input).to_be_disabled()

    page.get_by_test_id("tool-cancel").click()  # S31: decline
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_have_text("All right, I will not do any of it.")
    [result] = _tool_results(demo_agent, thread)
    assert result["toolCallId"] == call_id and json.loads(result["content"])["cancelled"] is True



def test_s27_a_waiting_call_is_in_the_inbox_until_it_is_answered(chat: Chat, demo_agent):
    chat.interrupt("steps", "/steps")
    thread = demo_agent.last_thread()
    page = chat.page
    page.goto(chat.base_url + "/inbox")
    item = page.get_by_test_id("inbox-tool-wait")
    expect(item).to_have_count(1, timeout=120_000)
    expect(item).to_have_attribute("data-thread-id", thread)
    expect(item).to_have_attribute("data-tool-name", "generate_task_steps")
    expect(item).to_contain_text("Delete the old reports")  # the call's arguments
    expect(page.get_by_test_id("inbox-empty")).to_have_count(0)
    item.get_by_test_id("inbox-tool-open-thread").click()  # to the thread, on the page whose chat declares the tool
    expect(page).to_have_url(chat.base_url + "/steps")
    wait = page.get_by_test_id("tool-wait")
    expect(wait).to_have_count(1, timeout=120_000)
    wait.get_by_test_id("tool-respond").click()
    chat.wait("idle")
    page.goto(chat.base_url + "/inbox")
    expect(page.get_by_test_id("inbox-empty")).to_be_visible(timeout=120_000)
    expect(page.get_by_test_id("inbox-tool-wait")).to_have_count(0)


def test_an_approval_asked_through_a_tool_is_answered_on_its_card(chat: Chat, demo_agent):
    """/confirm: the agent calls the chat's ``delete_files`` tool; Approve / Reject send {accepted}."""
    chat.open("/confirm")
    for button, answer, accepted in (("tool-approve", "Deleted 3 files in /tmp/demo.", True),
                                     ("tool-reject", "All right, I will not delete them.", False)):
        chat.send("confirm")  # on the same page: a reload restores the thread while the test counts its messages
        chat.wait("interrupted")
        wait = chat.page.get_by_test_id("tool-wait")
        expect(wait).to_have_attribute("data-tool-name", "delete_files")
        expect(wait).to_contain_text("Delete 3 files in /tmp/demo.")
        wait.get_by_test_id(button).click()
        chat.wait("idle")
        expect(chat.messages("assistant").last).to_have_text(answer)
        result = _tool_results(demo_agent, demo_agent.last_thread())[-1]
        assert json.loads(result["content"]) == {"accepted": accepted}
