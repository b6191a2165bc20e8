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


def _policy_answered(chat: Chat, text: str, expected: str) -> None:
    """Ask again: the rule answers the request before any card is drawn (one ``policy-note``), the agent goes on."""
    chat.send(text)
    chat.wait("idle", timeout=30_000)
    expect(chat.cards()).to_have_count(0)
    expect(chat.page.get_by_test_id("policy-note")).to_have_count(1, timeout=10_000)
    expect(chat.messages("assistant").last).to_contain_text(expected)
    expect(chat.page.get_by_test_id("chat-error")).to_have_count(0)


def allow_in_thread(chat: Chat, expected: str, text: str = "clean up") -> None:
    """"Allow in this thread" on the producer's approval; the thread's next request for the tool is answered by it."""
    card = ask(chat, text)
    answer(chat, card, "interrupt-allow-thread", expected)
    _policy_answered(chat, text, expected)


def allow_always(chat: Chat, expected: str, text: str = "clean up") -> None:
    """"Always allow" on the producer's approval; the same request in a new thread is answered by the rule."""
    answer(chat, ask(chat, text), "interrupt-allow-always", expected)
    chat.page.get_by_test_id("thread-new").click()
    expect(chat.messages("user")).to_have_count(0)
    _policy_answered(chat, text, expected)


def bulk_approve(chat: Chat, expected: str, text: str = "clean up", path: str = "/") -> None:
    """Two threads wait for the producer's approval; the inbox approves both at once (``by="bulk"``)."""
    chat.interrupt(text, path)
    threads = [chat.page.locator('[data-testid="thread-item"][data-current="true"]').get_attribute("data-thread-id")]
    chat.page.get_by_test_id("thread-new").click()
    expect(chat.messages("user")).to_have_count(0)
    chat.send(text)
    chat.wait("interrupted")
    inbox = chat.page.context.new_page()
    inbox.goto(chat.base_url + "/inbox")
    expect(inbox.get_by_test_id("inbox-item")).to_have_count(2, timeout=20_000)
    inbox.get_by_test_id("inbox-select-all").click()
    inbox.get_by_test_id("inbox-approve-selected").click()
    expect(inbox.get_by_test_id("inbox-bulk-confirm")).to_have_attribute("data-count", "2")
    inbox.get_by_test_id("inbox-bulk-confirm-yes").click()
    result = inbox.get_by_test_id("inbox-bulk-result")
    expect(result).to_have_attribute("data-done", "2", timeout=20_000)
    expect(result).to_have_attribute("data-skipped", "0")
    expect(inbox.get_by_test_id("inbox-item")).to_have_count(0, timeout=30_000)  # both resumed, nothing waits
    inbox.close()
    for thread in [None, *threads]:  # the second thread (still shown), then the first
        if thread:
            chat.page.locator(f'[data-testid="thread-item"][data-thread-id="{thread}"]').click()
        expect(chat.messages("assistant").last).to_contain_text(expected, timeout=20_000)
        expect(chat.page.get_by_test_id("audit-entry").last).to_have_attribute("data-by", "bulk", timeout=10_000)
