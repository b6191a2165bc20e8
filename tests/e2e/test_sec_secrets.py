"""Issue 38 §2 in the real browser: a nested secret and a whole-answer password are masked inputs (S23).

A scripted agent asks for a secret inside an object and for a response that is itself a password.
The default form draws both as ``<input type="password">`` (no JSON textarea), a validation error
names the field and the rule without the typed secret, and neither the page nor any websocket
frame the browser receives ever holds it; the agent gets both answers whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from starlette.requests import Request
from starlette.responses import Response

from tests.unit.agents import finished, sse, started, text

from .conftest import Chat

SHORT = "hunter2-SECRET-e2e"  # under the schemas' minLength
LONG = "hunter2-SECRET-e2e-long-enough-to-pass-0123456789"
NESTED = {"type": "object", "required": ["creds"], "properties": {
    "creds": {"type": "object", "required": ["auth"], "properties": {
        "auth": {"type": "string", "format": "password", "minLength": 40}, "user": {"type": "string"}}}}}
WHOLE = {"type": "string", "writeOnly": True, "minLength": 40}

resumes: list[dict[str, Any]] = []


async def _app(scope: Any, receive: Any, send: Any) -> None:
    body = json.loads(await Request(scope, receive).body() or b"{}")
    run, thread = body["runId"], body["threadId"]
    if body.get("resume"):
        resumes.append(body)
        events = [started(run, thread), *text(f"{run}-done", "Resumed."), finished(run, thread)]
    else:
        events = [started(run, thread), *text(f"{run}-m", "I need two secrets."), finished(run, thread, interrupts=[
            {"id": "nested", "reason": "input_required", "message": "Credentials", "responseSchema": NESTED},
            {"id": "whole", "reason": "input_required", "message": "Your PIN", "responseSchema": WHOLE}])]
    await Response(sse(*events), media_type="text/event-stream")(scope, receive, send)


@pytest.fixture(scope="module")
def secret_agent() -> Iterator[str]:
    from tests.unit.agents import serve_in_thread

    with serve_in_thread(_app) as base:
        yield base + "/"


def test_nested_and_whole_answer_secrets_are_masked_and_never_come_back(chat: Chat, agent_url, secret_agent):
    agent_url(secret_agent)
    received: list[str] = []
    chat.page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(str(f))))
    chat.open()
    chat.send("secrets please")
    chat.wait("interrupted")
    expect(chat.cards()).to_have_count(2)
    nested, whole = chat.card(0), chat.card(1)
    expect(nested.locator('input[name="creds"]')).to_have_attribute("type", "password")
    expect(nested.locator('textarea[name="creds"]')).to_have_count(0)
    expect(whole.locator('input[name="__answer"]')).to_have_attribute("type", "password")

    nested.locator('input[name="creds"]').fill(json.dumps({"auth": SHORT, "user": "bob"}))
    nested.get_by_test_id("interrupt-submit").click()
    expect(nested.get_by_test_id("interrupt-error")).to_contain_text("creds.auth is not valid (minLength)")
    whole.locator('input[name="__answer"]').fill(SHORT)
    whole.get_by_test_id("interrupt-submit").click()
    expect(whole.get_by_test_id("interrupt-error")).to_contain_text("(minLength)")
    assert SHORT not in chat.page.content()

    nested.locator('input[name="creds"]').fill(json.dumps({"auth": LONG, "user": "bob"}))
    nested.get_by_test_id("interrupt-submit").click()
    expect(nested).to_have_attribute("data-answered", "resolved")
    whole.locator('input[name="__answer"]').fill(LONG + "-pin")
    whole.get_by_test_id("interrupt-submit").click()
    chat.wait("idle")
    expect(chat.messages("assistant").last).to_contain_text("Resumed.")
    assert [entry["payload"] for entry in resumes[-1]["resume"]] == [{"creds": {"auth": LONG, "user": "bob"}},
                                                                     LONG + "-pin"]  # the agent gets them whole
    assert SHORT not in chat.page.content() and LONG not in chat.page.content()
    assert not [f for f in received if SHORT in f or LONG in f], "a secret came back over the websocket"
