"""The human-in-the-loop flows every producer module runs, through the demo site's DOM contract.

The new producers' example servers share one script (examples/README.md): ``hello`` answers text,
``clean up`` calls ``delete_files`` behind the producer's approval, ``steps`` calls the page's frontend
tool ``generate_task_steps`` on ``/steps``. The follow-up text proves the answer reached the agent.
"""

from __future__ import annotations

from playwright.sync_api import Locator, expect

from ..conftest import Chat

STEPS_RUN = "Running 2 of 3 steps: Back up the files, Email the team."


def ask(chat: Chat, text: str = "clean up") -> Locator:
    """Send ``text`` on the home page; returns the interrupt card the agent's request draws."""
    chat.interrupt(text)
    expect(chat.cards()).to_have_count(1)
    return chat.card()


def answer(chat: Chat, card: Locator, button: str, expected: str) -> None:
    """Click ``button`` on ``card``; the resumed run ends idle with ``expected`` in its last answer."""
    card.get_by_test_id(button).click()
    chat.wait("idle")
    expect(chat.cards()).to_have_count(0)
    expect(chat.messages("assistant").last).to_contain_text(expected)
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


def edit(chat: Chat, card: Locator, arguments: str, expected: str) -> None:
    """Approve with edited arguments (the card's JSON editor), then check the follow-up."""
    card.get_by_test_id("interrupt-edit-args").fill(arguments)
    answer(chat, card, "interrupt-approve-edited", expected)


def continues(chat: Chat, text: str = "hello again", expected: str | None = None) -> None:
    """A further plain message on the same thread runs clean (the history the chat sends is valid)."""
    chat.send(text)
    chat.wait("idle")
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)
    if expected:
        expect(chat.messages("assistant").last).to_contain_text(expected)


def steps(chat: Chat, *, decline: bool = False, expected: str = STEPS_RUN) -> None:
    """On ``/steps``: the agent calls ``generate_task_steps``; the person unticks step 2 and confirms (or
    skips all); the next run's answer shows what the agent got."""
    chat.interrupt("steps", "/steps")
    wait = chat.page.get_by_test_id("tool-wait")
    expect(wait).to_have_count(1)
    expect(wait).to_have_attribute("data-tool-name", "generate_task_steps")
    expect(chat.input).to_be_disabled()
    if decline:
        wait.get_by_test_id("tool-cancel").click()
    else:
        ticks = wait.get_by_test_id("task-step")
        expect(ticks).to_have_count(3)
        ticks.nth(1).uncheck()
        wait.get_by_test_id("tool-respond").click()
    chat.wait("idle")
    expect(chat.page.get_by_test_id("tool-wait")).to_have_count(0)
    expect(chat.messages("assistant").last).to_contain_text(expected)
    expect(chat.input).to_be_enabled()
