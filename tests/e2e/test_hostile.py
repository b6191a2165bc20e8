"""Hostile agents and hostile clients in the real browser.

S24: every string an agent controls carries an XSS payload and renders as text. Forged websocket
events (handlers not meant to be called, a forged interrupt id, a wrong or oversized payload) and
a hundred rapid clicks lead to exactly one resume or a clear card error (S9, S10, S15). Two users
never see each other's state (S25).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.unit.agents import serve_in_thread

from . import hostile_agent
from .conftest import Chat

pytestmark = pytest.mark.stage("prod", why="hostile agents and forged events against the build a deployment runs")

INERT = """() => {
  const chat = document.querySelector('.ic-chat');
  const hrefs = [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href').trim().toLowerCase());
  return {
    xss: window.__xss ?? null,
    scripts: chat.querySelectorAll('script').length,
    handlers: chat.querySelectorAll('[onerror], [onload], [onclick], iframe, object, embed').length,
    javascript: hrefs.filter(h => h.startsWith('javascript:')).length,
  };
}"""
CLEAN = {"xss": None, "scripts": 0, "handlers": 0, "javascript": 0}


@pytest.fixture(scope="module")
def hostile_url() -> Iterator[str]:
    with serve_in_thread(hostile_agent.app) as base:
        yield base + "/"


def assert_inert(chat: Chat) -> None:
    time.sleep(0.3)  # let any injected handler fire
    assert chat.page.evaluate(INERT) == CLEAN


def test_s24_every_agent_string_renders_as_text(chat, agent_url, hostile_url):
    agent_url(hostile_url)
    chat.open()
    payload_text = "<script>window.__xss=1</script>"

    chat.send("xss-text")
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text(payload_text)
    expect(chat.page.get_by_test_id("tool-call").first).to_contain_text(payload_text)
    assert_inert(chat)

    chat.send("xss-interrupt")
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(2)
    expect(chat.card(0).get_by_test_id("interrupt-prompt")).to_contain_text(payload_text)
    expect(chat.card(1)).to_contain_text(payload_text)  # field title and description
    options = chat.card(1).locator("select option").all_inner_texts()
    assert any(payload_text in option for option in options), options
    expect(chat.card(0).get_by_test_id("interrupt-edit-args")).to_have_value(re.compile(re.escape(payload_text)))
    assert_inert(chat)
    chat.card(0).get_by_test_id("interrupt-cancel").click()
    chat.card(1).get_by_test_id("interrupt-cancel").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("Resumed: " + payload_text)
    assert_inert(chat)

    for legacy in ("xss-legacy", "xss-legacy-object"):
        chat.send(legacy)
        chat.wait("interrupted")
        expect(chat.card().get_by_test_id("interrupt-prompt")).to_contain_text(payload_text)
        assert_inert(chat)
        chat.card().get_by_test_id("interrupt-cancel").click()  # a legacy cancel dismisses (S14)
        chat.wait("idle")

    error = chat.page.get_by_test_id("chat-error")
    for failing, shown in (("xss-error", "window.__xss=1"),
                           ("xss-http", "HTTP 500 Internal Server Error: agent failed: "),
                           ("xss-html", "HTTP 502 Bad Gateway: an HTML page")):
        chat.send(failing)
        chat.wait("error")
        expect(error).to_contain_text(shown)
        assert error.locator("script, img, iframe, a, [onload], [onerror]").count() == 0  # text only (the icon is ours)
        assert len(error.inner_text()) <= 320  # short; any <…> in it is text (escaped), never markup
        assert_inert(chat)
    expect(error).not_to_contain_text("<h1>")
    chat.shot("hostile-xss")


def _event_frame(frames: list[str], handler: str) -> tuple[str, dict]:
    """The socket.io frame the page sent for ``handler``: its prefix and its event object."""
    for frame in reversed(frames):
        match = re.match(r"^(\d+(?:/[^,\[]*,)?)(\[.*)$", frame, re.S)  # 42/_event,["event", {...}]
        if match:
            name, event = json.loads(match.group(2))[:2]
            if name == "event" and isinstance(event, dict) and str(event.get("name", "")).endswith("." + handler):
                return match.group(1), event
    raise AssertionError(f"the page sent no {handler} event; frames: {[f[:80] for f in frames]}")


def test_forged_events_and_rapid_clicks_make_exactly_one_resume(page: Page, app_url, demo_agent):
    frames: list[str] = []
    servers = []

    def route(ws) -> None:
        server = ws.connect_to_server()
        servers.append(server)

        def forward(message) -> None:
            if isinstance(message, str):
                frames.append(message)
            server.send(message)

        ws.on_message(forward)

    page.context.route_web_socket(re.compile(r"/_event"), route)
    page.set_viewport_size({"width": 1280, "height": 900})
    chat = Chat(page, app_url)
    chat.interrupt("approval")
    chat.card().get_by_test_id("interrupt-reject").click()  # a real answer: its frame is the template
    chat.wait("idle")
    prefix, template = _event_frame(frames, "resolve")
    config = template["name"].rsplit(".", 1)[0]

    chat.send("approval")
    chat.wait("interrupted")
    thread = demo_agent.last_thread()
    answered = len([r for r in demo_agent.records(thread) if r.get("resume")])
    interrupt_id = chat.card().get_attribute("data-interrupt-id")

    def forge(handler: str, payload: dict) -> None:
        event = {**template, "name": f"{config}.{handler}", "payload": payload}
        servers[-1].send(prefix + json.dumps(["event", event]))

    forge("enabled", {"event": {"name": "on_interrupt", "value": {}}})  # hooks are not event handlers
    forge("handler", {"props": {"event": {}, "interrupt": None, "interrupts": []}})
    forge("resolve", {"payload": {"approved": True}, "interrupt_id": "forged-id"})  # S9: ignored
    forge("resolve", {"payload": {"approved": True, "deep": json.loads("[" * 500 + "]" * 500)},
                      "interrupt_id": interrupt_id})  # too deep: a card error, nothing sent
    expect(chat.card().get_by_test_id("interrupt-error")).to_contain_text("nested deeper than 100 levels")
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == answered
    forge("resolve", {"payload": "yes", "interrupt_id": interrupt_id})  # the wrong type: sent once, rejected
    chat.wait("error")
    expect(chat.page.get_by_test_id("chat-error")).to_contain_text("INVALID_PAYLOAD")
    expect(chat.cards()).to_have_count(1)  # S15: offered again
    answered += 1
    connections = len(servers)
    forge("resolve", {"payload": {"approved": True, "note": "x" * 10_000_000}, "interrupt_id": interrupt_id})
    deadline = time.monotonic() + 15  # a 10 MB frame is over the websocket's limit: the page reconnects
    while len(servers) == connections and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    expect(chat.cards()).to_have_count(1)
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == answered

    expect(chat.card().get_by_test_id("interrupt-approve")).to_be_enabled()
    page.evaluate("""() => { const b = document.querySelector('[data-testid="interrupt-approve"]');
                             for (let i = 0; i < 100; i++) b.click(); }""")
    chat.wait("idle")
    page.wait_for_timeout(1000)
    assert len([r for r in demo_agent.records(thread) if r.get("resume")]) == answered + 1  # S10
    assert_inert(chat)


def test_s25_two_users_never_see_each_others_state(browser, app_url, demo_agent):
    alice_context, bob_context = browser.new_context(), browser.new_context()
    try:
        alice = Chat(alice_context.new_page(), app_url)
        bob = Chat(bob_context.new_page(), app_url)
        alice.interrupt("approval")
        alice_thread = demo_agent.last_thread()
        bob.open()
        expect(bob.cards()).to_have_count(0)
        expect(bob.messages("user")).to_have_count(0)
        assert alice_thread not in bob.page.content()
        bob.interrupt("choice")
        expect(bob.cards()).to_have_count(1)
        expect(bob.card().locator("select")).to_have_count(1)
        bob_inbox = bob_context.new_page()
        bob_inbox.goto(app_url + "/inbox")
        expect(bob_inbox.get_by_test_id("inbox-item")).to_have_count(1)  # Bob's own request only
        expect(bob_inbox.get_by_test_id("inbox-item")).to_have_attribute("data-reason", "input_required")
        alice.page.reload()
        alice.wait("interrupted")
        expect(alice.cards()).to_have_count(1)
        expect(alice.card().get_by_test_id("interrupt-approve")).to_be_visible()
        assert demo_agent.last_thread() not in alice.page.content()
    finally:
        alice_context.close()
        bob_context.close()
