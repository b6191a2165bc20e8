"""Every scripted scenario through the real site: what the person sees, what the agent receives."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from .conftest import EXPIRES_IN


def resumes(agent, thread: str) -> list[dict]:
    return [r for r in agent.records(thread) if "resume" in r or r.get("forwardedProps", {}).get("command")]


@pytest.mark.parametrize("scenario", ["approval", "choice", "credential", "multi", "expiring", "legacy",
                                      "legacy-string", "question", "both"])
def test_s03_card_appears_only_after_the_run_finalizes(chat, demo_agent, scenario):
    chat.open()
    # every DOM commit is recorded (status, cards): a run shorter than any polling interval is still seen
    chat.page.evaluate("""() => {
      window.__s03 = [];
      const record = () => window.__s03.push([
        document.querySelector('[data-testid="run-status"]').dataset.status,
        document.querySelectorAll('[data-testid="interrupt-card"]').length]);
      new MutationObserver(record).observe(document.body, {subtree: true, childList: true, attributes: true});
    }""")
    chat.send(scenario)
    chat.wait("interrupted")
    seen = chat.page.evaluate("() => window.__s03")
    assert ["running", 0] in seen  # the run was shown as running...
    assert not [cards for status, cards in seen if status == "running" and cards]  # S3: ...and no card then
    expect(chat.input).to_be_disabled()  # S21
    if scenario != "approval":
        return
    card = chat.card()
    expect(card).to_have_attribute("data-reason", "tool_call")
    expect(card.get_by_test_id("interrupt-prompt")).to_have_text("Delete 3 files in /tmp/reports?")
    expect(chat.page.get_by_test_id("tool-call")).to_have_attribute("data-status", "awaiting_approval")
    expect(chat.input).to_be_disabled()  # S21
    chat.shot("approval-card")


def test_s06_approve_resumes_with_the_exact_entry(chat, demo_agent):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    first_run = demo_agent.records(demo_agent.last_thread())
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    thread = demo_agent.last_thread()
    sent = resumes(demo_agent, thread)
    assert len(sent) == 1
    assert sent[0]["resume"] == [{"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}]
    assert sent[0]["threadId"] == thread and sent[0]["protocolVersion"] == "1.0"  # S12
    assert sent[0]["runId"] != first_run[0]["runId"]
    assistant = [m for m in sent[0]["messages"] if m["role"] == "assistant"]
    assert assistant and assistant[-1]["toolCalls"][0]["function"]["name"] == "delete_files"
    expect(chat.page.get_by_test_id("interrupt-slot")).to_have_count(0)
    expect(chat.page.get_by_test_id("tool-call")).to_have_attribute("data-status", "complete")
    expect(chat.messages("assistant").last).to_contain_text("Approved")
    expect(chat.input).to_be_enabled()
    chat.shot("approval-approved")


def test_s22_reject_is_an_answer_not_a_cancel(chat, demo_agent):
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-reject").click()
    chat.wait("idle")
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert sent[0]["resume"][0]["status"] == "resolved"
    assert sent[0]["resume"][0]["payload"] == {"approved": False}
    expect(chat.messages("assistant").last).to_contain_text("Rejected")


def test_s22_edit_and_approve_sends_edited_args(chat, demo_agent):
    chat.interrupt("approval")
    card = chat.card()
    editor = card.get_by_test_id("interrupt-edit-args")
    assert json.loads(editor.input_value()) == {"path": "/tmp/reports", "count": 3}  # prefilled
    editor.fill("{not json")
    card.get_by_test_id("interrupt-approve-edited").click()
    expect(card.get_by_test_id("interrupt-error")).to_be_visible()
    assert resumes(demo_agent, demo_agent.last_thread()) == []  # invalid JSON: nothing sent
    editor.fill('{"path": "/tmp/old", "count": 1}')
    card.get_by_test_id("interrupt-approve-edited").click()
    chat.wait("idle")
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert sent[0]["resume"][0]["payload"] == {"approved": True, "editedArgs": {"path": "/tmp/old", "count": 1}}
    expect(chat.page.get_by_test_id("tool-call")).to_contain_text("/tmp/old")


def test_s22_choice_form_validates_then_submits(chat, demo_agent):
    chat.interrupt("choice")
    card = chat.card()
    expect(card).to_have_attribute("data-reason", "input_required")
    card.get_by_test_id("interrupt-submit").click()
    expect(card.get_by_test_id("interrupt-error")).to_contain_text("required")
    assert resumes(demo_agent, demo_agent.last_thread()) == []
    card.locator('select[name="color"]').select_option("green")
    chat.shot("choice-card")
    card.get_by_test_id("interrupt-submit").click()
    chat.wait("idle")
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert sent[0]["resume"][0]["payload"] == {"color": "green"}
    expect(chat.messages("assistant").last).to_contain_text("You picked green.")


def test_s23_secret_goes_to_the_agent_and_nowhere_else(chat, demo_agent, log_capture):
    secret = "sk-SECRET-7c1f9d2e"
    received: list[str] = []
    chat.page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(str(f))))
    chat.interrupt("credential")
    card = chat.card()
    field = card.locator('input[name="api_key"]')
    expect(field).to_have_attribute("type", "password")
    field.fill(secret)
    chat.shot("credential-card")
    card.get_by_test_id("interrupt-submit").click()
    chat.wait("idle")
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert sent[0]["resume"][0]["payload"] == {"api_key": f"<redacted:{len(secret)}>"}  # it arrived, whole
    expect(chat.messages("assistant").last).to_contain_text(f"Credential received ({len(secret)} characters)")
    assert secret not in chat.page.content()
    assert not [f for f in received if secret in f], "the secret came back over the websocket"
    assert not [line for line in log_capture.lines if secret in line], "the secret was logged"
    history = sent[0]["messages"]
    assert secret not in json.dumps(history)


def test_s07_three_interrupts_resume_once_in_array_order(chat, demo_agent):
    chat.interrupt("multi")
    expect(chat.cards()).to_have_count(3)
    ids = [chat.card(i).get_attribute("data-interrupt-id") for i in range(3)]
    chat.shot("multi-cards")
    chat.card(2).get_by_test_id("interrupt-cancel").click()
    expect(chat.card(2)).to_contain_text("cancelled")
    chat.card(1).locator('select[name="color"]').select_option("blue")
    chat.card(1).get_by_test_id("interrupt-submit").click()
    expect(chat.card(1)).to_contain_text("resolved")
    assert resumes(demo_agent, demo_agent.last_thread()) == []  # S7: still waiting for the first
    chat.card(0).get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert len(sent) == 1
    assert [e["interruptId"] for e in sent[0]["resume"]] == ids
    assert [e["status"] for e in sent[0]["resume"]] == ["resolved", "resolved", "cancelled"]
    assert "payload" not in sent[0]["resume"][2]


def test_s11_expired_card_refuses_approval_and_is_sent_cancelled(chat, demo_agent):
    chat.interrupt("expiring")
    card = chat.card()
    expect(card).to_have_attribute("data-expired", "false")
    expect(card.get_by_test_id("interrupt-expiry")).to_contain_text("expires in")
    expect(card).to_have_attribute("data-expired", "true", timeout=(EXPIRES_IN + 5) * 1000)
    expect(card.get_by_test_id("interrupt-expiry")).to_have_text("expired")
    card.get_by_test_id("interrupt-approve").click()  # refused, and the card says why
    expect(card.get_by_test_id("interrupt-error")).to_contain_text("expired")
    assert resumes(demo_agent, demo_agent.last_thread()) == []
    chat.shot("expired-card")
    interrupt_id = card.get_attribute("data-interrupt-id")
    card.get_by_test_id("interrupt-cancel").click()
    chat.wait("idle")
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert sent[0]["resume"] == [{"interruptId": interrupt_id, "status": "cancelled"}]


def test_s13_legacy_resolve_sends_forwarded_props_command(chat, demo_agent):
    chat.interrupt("legacy")
    card = chat.card()
    expect(card).to_have_attribute("data-interrupt-id", "")
    expect(card.get_by_test_id("interrupt-prompt")).to_have_text("Send the weekly report?")
    chat.shot("legacy-card")
    card.get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    sent = resumes(demo_agent, demo_agent.last_thread())
    assert len(sent) == 1 and "resume" not in sent[0]
    command = sent[0]["forwardedProps"]["command"]
    assert command["resume"] == {"approved": True}
    assert json.loads(command["interruptEvent"])["question"] == "Send the weekly report?"  # as received
    expect(chat.messages("assistant").last).to_contain_text("Legacy answer")


def test_s14_legacy_cancel_only_dismisses(chat, demo_agent):
    chat.interrupt("legacy-string")
    expect(chat.card().get_by_test_id("interrupt-prompt")).to_have_text("approval: publish the draft?")
    before = len(demo_agent.records(demo_agent.last_thread()))
    chat.card().get_by_test_id("interrupt-cancel").click()
    expect(chat.page.get_by_test_id("interrupt-slot")).to_have_count(0)
    chat.wait("idle")
    expect(chat.input).to_be_enabled()
    time.sleep(0.5)
    assert len(demo_agent.records(demo_agent.last_thread())) == before  # nothing was sent


def test_s02_standard_wins_over_legacy(chat, demo_agent):
    chat.interrupt("both")
    expect(chat.cards()).to_have_count(1)
    assert chat.card().get_attribute("data-interrupt-id")  # a standard interrupt has an id


def test_s05_run_error_after_interrupt_discards_it(chat):
    chat.open()
    chat.send("error")
    chat.wait("error")
    expect(chat.page.get_by_test_id("chat-error")).to_contain_text("Simulated failure after interrupt")
    expect(chat.page.get_by_test_id("interrupt-slot")).to_have_count(0)
    expect(chat.input).to_be_enabled()
    chat.shot("error-after-interrupt")


def test_s24_agent_html_never_runs(chat):
    chat.open()
    chat.send("xss")
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("click")
    time.sleep(0.5)
    assert chat.page.evaluate("window.__xss") is None
    assert chat.page.locator('[data-testid="message"] script').count() == 0
    assert chat.page.locator('[data-testid="message"] img[onerror]').count() == 0
    hrefs = chat.page.locator('[data-testid="message"] a').evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert not [h for h in hrefs if h and h.strip().lower().startswith("javascript:")]
    chat.shot("xss")


def test_stop_cancels_a_long_stream(chat, demo_agent):
    chat.open()
    chat.send("long")
    chat.wait("running")
    expect(chat.page.locator('[data-testid="message"][data-role="assistant"]')).to_have_count(1)
    chat.page.get_by_test_id("chat-stop").click()
    expect(chat.status).not_to_have_attribute("data-status", "running", timeout=5_000)
    deadline = time.monotonic() + 5
    while demo_agent.store.active_runs and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not demo_agent.store.active_runs  # the agent saw the disconnect
    expect(chat.input).to_be_enabled()
    chat.send("markdown again")  # the session keeps working
    chat.wait("idle")


def test_s25_reload_keeps_a_pending_interrupt(chat, demo_agent):
    chat.interrupt("approval")
    interrupt_id = chat.card().get_attribute("data-interrupt-id")
    chat.page.reload()
    expect(chat.card()).to_have_attribute("data-interrupt-id", interrupt_id, timeout=60_000)
    chat.wait("interrupted")
    chat.card().get_by_test_id("interrupt-approve").click()
    chat.wait("idle")
    assert resumes(demo_agent, demo_agent.last_thread())[0]["resume"][0]["interruptId"] == interrupt_id


def test_composer_enter_sends_and_shift_enter_is_a_newline(chat, demo_agent):
    chat.open()
    chat.input.click()
    chat.input.type("first line")
    chat.input.press("Shift+Enter")
    chat.input.type("second line")
    assert chat.input.input_value() == "first line\nsecond line"
    chat.input.press("Enter")
    expect(chat.messages("user").last).to_have_text("first line\nsecond line")
    chat.wait("idle")
    expect(chat.input).to_have_value("")


def test_markdown_answer_and_tool_call_cards(chat):
    chat.open()
    chat.send("tools")
    chat.wait("idle")
    expect(chat.page.get_by_test_id("tool-call")).to_have_attribute("data-status", "complete")
    chat.send("markdown")
    chat.wait("idle")
    expect(chat.messages("assistant").last.locator("h1, h2, h3").first).to_be_visible()
    # the unpaced answer came as a burst, drawn as plain text first; the render that ends it formats it all
    assert chat.messages("assistant").last.locator(".ic-stream-plain").count() == 0
    expect(chat.messages("assistant").last.locator("strong").first).to_be_visible()
    chat.shot("markdown")


def test_s25_switching_threads_shows_that_threads_interrupts_only(chat, demo_agent):
    chat.interrupt("approval")
    first_id = chat.card().get_attribute("data-interrupt-id")
    chat.page.get_by_test_id("thread-new").click()
    expect(chat.page.get_by_test_id("interrupt-slot")).to_have_count(0)
    chat.wait("idle")
    expect(chat.input).to_be_enabled()
    chat.send("choice")
    chat.wait("interrupted")
    expect(chat.card()).to_have_attribute("data-reason", "input_required")
    threads = chat.page.get_by_test_id("thread-item")
    expect(threads).to_have_count(2)
    chat.page.locator('[data-testid="thread-item"][data-current="false"]').click()  # the first thread
    expect(chat.card()).to_have_attribute("data-interrupt-id", first_id)
    expect(chat.cards()).to_have_count(1)
    expect(chat.messages("user")).to_have_count(1)
    chat.shot("threads")


def test_enter_during_ime_composition_does_not_send(chat):
    chat.open()
    chat.input.fill("変換中")
    chat.input.evaluate("""el => el.dispatchEvent(new KeyboardEvent('keydown',
        {key: 'Enter', code: 'Enter', keyCode: 229, isComposing: true, bubbles: true, cancelable: true}))""")
    chat.page.wait_for_timeout(300)
    expect(chat.messages("user")).to_have_count(0)
    assert chat.input.input_value() == "変換中"
    chat.input.press("Enter")  # composition over: Enter sends
    expect(chat.messages("user")).to_have_text(["変換中"])


def test_auto_scroll_follows_unless_the_reader_scrolled_up(chat):
    chat.open()
    chat.send("long")
    box = chat.page.get_by_test_id("chat-messages")
    at_bottom = "el => el.scrollHeight - el.scrollTop - el.clientHeight < 80"
    chat.page.wait_for_function("""() => { const el = document.querySelector('[data-testid="chat-messages"]');
        return el.scrollHeight > el.clientHeight + 200; }""", timeout=30_000)
    follows = f"""() => ({at_bottom})(document.querySelector('[data-testid="chat-messages"]'))"""
    chat.page.wait_for_function(follows, timeout=1_000)  # following the stream (the scroll follows once a frame)
    box.evaluate("el => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); }")
    chat.page.wait_for_timeout(600)
    assert box.evaluate("el => el.scrollTop") < 50  # not yanked back down while reading
    box.evaluate("el => { el.scrollTop = el.scrollHeight; el.dispatchEvent(new Event('scroll')); }")
    chat.page.wait_for_timeout(600)
    chat.page.wait_for_function(follows, timeout=1_000)  # back at the bottom: following again
    chat.page.get_by_test_id("chat-stop").click()
    expect(chat.status).not_to_have_attribute("data-status", "running")
