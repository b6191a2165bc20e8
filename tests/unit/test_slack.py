"""Slack for approvals between people (issue 42 §2, contracts §6.3): direct messages, signed clicks, updates.

A local Slack Web API on loopback (uvicorn) implements ``chat.postMessage`` and ``chat.update`` and records
every call (the SDK's client talks to it through ``INTERRUPT_CHAT_SLACK_API_URL``), and a ``response_url`` for
the replies to clicks. Clicks are Slack-signed form posts to the real endpoint (``ic.slack_routes()``), driven
with httpx. The demo agent's ``approval`` asks ``delete_files``, which the team here routes to role:finance:
bob and dave.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import interrupt_chat as ic
from interrupt_chat.approvals import links, notifier
from interrupt_chat.approvals.channels import slack
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.model.people import Escalation, People, Person
from interrupt_chat.store import channels as store_channels
from interrupt_chat.store import outbox
from interrupt_chat.store import requests as store_requests
from tests.unit.agents import serve_in_thread
from tests.unit.people import (  # noqa: F401 - fixtures
    NEED,
    Tab,
    _actions,
    _ask,
    _decided,
    _login,
    _resumes,
    _settle,
    agent_fixture,
    one_approval_fixture,
)
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures

pytestmark = pytest.mark.loopback

SECRET = "slack-signing-secret-for-tests"
TOKEN = "xoxb-bot-token-for-tests"
TEAM = People(
    [Person("alice", "Alice", slack="UALICE", roles=("staff",)),
     Person("bob", "Bob", slack="UBOB", roles=("finance",)),
     Person("dave", "Dave", slack="UDAVE", roles=("finance",)),
     Person("carol", "Carol", slack="UCAROL", roles=("managers",))],
    assign=lambda r: ["role:finance"] if r.tool == "delete_files" and r.asker else [],
    approvals=lambda r: NEED["count"] if r.tool == "delete_files" else 1,
    escalation=lambda r: Escalation(0.5, 0.8, ("role:managers",)) if r.tool == "delete_files" and r.asker else None,
)


class SlackAPI:
    """Slack's Web API as the tests need it: records each call; ``fail`` answers 500 or ``{"ok": false}``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], str]] = []  # (method, JSON body, Authorization)
        self.replies: list[dict[str, Any]] = []  # what reached a response_url
        self.answered: list[tuple[str, str]] = []  # (channel, ts) of each message posted
        self.fail = ""  # "" | "500" | "not-ok"
        self.lock = threading.Lock()
        self.count = 0
        self.base = ""  # where it listens
        self.gate = threading.Event()  # cleared: chat.postMessage waits (a message in flight while it is decided)
        self.gate.set()
        self.waiting = 0

    async def method(self, request: Request) -> JSONResponse:
        name = request.path_params["method"]
        body = await request.json()
        if name == "chat.postMessage" and not self.gate.is_set():
            with self.lock:
                self.waiting += 1
            await asyncio.to_thread(self.gate.wait, 10)
        with self.lock:
            self.calls.append((name, body, request.headers.get("authorization", "")))
            self.count += 1
            count = self.count
        if self.fail == "500":
            return JSONResponse({"ok": False, "error": "internal_error"}, status_code=500)
        if self.fail == "not-ok":
            return JSONResponse({"ok": False, "error": "ratelimited"})
        if name == "chat.postMessage":
            answer = {"ok": True, "channel": "D" + body["channel"], "ts": f"1700000000.{count:06d}"}
            with self.lock:
                self.answered.append((answer["channel"], answer["ts"]))
            return JSONResponse(answer)
        return JSONResponse({"ok": True, "channel": body.get("channel"), "ts": body.get("ts")})

    async def respond(self, request: Request) -> JSONResponse:
        with self.lock:
            self.replies.append(await request.json())
        return JSONResponse({"ok": True})

    def of(self, name: str) -> list[dict[str, Any]]:
        with self.lock:
            return [body for method, body, _ in self.calls if method == name]


@pytest.fixture(scope="module", name="api_server")
def api_server_fixture() -> Iterator[tuple[SlackAPI, str]]:
    api = SlackAPI()
    app = Starlette(routes=[Route("/api/{method}", api.method, methods=["POST"]),
                            Route("/respond", api.respond, methods=["POST"])])
    with serve_in_thread(app) as base:
        api.base = base
        yield api, base


@pytest.fixture(name="api")
def api_fixture(api_server, monkeypatch) -> Iterator[SlackAPI]:
    api, base = api_server
    with api.lock:
        api.calls.clear()
        api.replies.clear()
        api.answered.clear()
        api.gate.set()
        api.waiting = 0
        api.fail = ""
    monkeypatch.setenv(slack.TOKEN_ENV, TOKEN)
    monkeypatch.setenv(slack.SIGNING_SECRET_ENV, SECRET)
    monkeypatch.setenv(slack.API_URL_ENV, f"{base}/api/")
    monkeypatch.setattr(notifier, "BACKOFF_SECONDS", 0.05)
    yield api
    api.gate.set()


@pytest.fixture(scope="module", name="chat_cls")
def chat_cls_fixture(agent) -> type[ChatState]:
    cls = new_chat_state("people-slack", agent_url=agent[0], configs=[], owner=_login)
    cls.people = TEAM
    return cls


@pytest.fixture(name="backend")
async def backend_fixture() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=Starlette(routes=ic.slack_routes()))
    async with httpx.AsyncClient(transport=transport, base_url="http://backend") as client:
        yield client


async def until(found, what: str, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = found()
        if value:
            return value
        assert time.monotonic() < deadline, f"waited in vain for {what}"
        await asyncio.sleep(0.02)


def sign(body: bytes, at: float | None = None, secret: str = SECRET) -> dict[str, str]:
    """Slack's headers for ``body``: ``v0=`` and the hex HMAC-SHA256 of ``v0:<timestamp>:<body>``."""
    stamp = str(int(time.time() if at is None else at))
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
            "Content-Type": "application/x-www-form-urlencoded"}


def click(token: str, user: str, verb: str = "approve", response_url: str = "") -> bytes:
    """A ``block_actions`` payload as Slack posts it (form-encoded JSON)."""
    payload = {"type": "block_actions", "user": {"id": user, "username": user.lower(), "team_id": "T1"},
               "api_app_id": "A1", "container": {"type": "message", "message_ts": "1700000000.000001"},
               "trigger_id": "1.2.3", "response_url": response_url,
               "actions": [{"action_id": verb, "block_id": "decide", "value": token, "type": "button",
                            "action_ts": "1700000001.000001"}]}
    return urlencode({"payload": json.dumps(payload)}).encode()


async def post_click(backend: httpx.AsyncClient, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    return await backend.post(slack.INTERACTIONS_PATH, content=body, headers=sign(body) if headers is None
                              else headers)


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for b in message.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]]


def token_of(api: SlackAPI, user: str) -> str:
    message = next(m for m in api.of("chat.postMessage") if m["channel"] == user)
    return next(b["value"] for b in buttons(message) if b["action_id"] == "approve")


async def asked(chat_cls: type[ChatState], api: SlackAPI) -> Tab:
    alice = await _ask(chat_cls)
    await until(lambda: len(api.of("chat.postMessage")) >= 2, "the direct messages")
    return alice


def still_open(database, alice: Tab) -> bool:
    rows = store_requests.of_thread(database, alice.chat._owner_key, alice.chat.thread_id)
    return [r.state for r in rows.values()] == ["open"]


# -- the direct messages -----------------------------------------------------------------------------

async def test_each_recipient_gets_one_direct_message_with_buttons_and_no_key(chat_cls, agent, api, database):
    alice = await asked(chat_cls, api)
    await asyncio.sleep(0.3)  # a second message, if any, would have been posted by now
    posted = api.of("chat.postMessage")
    assert sorted(m["channel"] for m in posted) == ["UBOB", "UDAVE"]  # not alice, who asked
    assert {auth for _, _, auth in api.calls} == {f"Bearer {TOKEN}"}
    for message in posted:
        assert "Alice asks you to approve delete_files" in message["text"]
        said = json.dumps(message)
        assert "delete_files" in said and "Waits for finance" in said
        approve, reject, open_app = buttons(message)
        assert (approve["action_id"], approve["style"], reject["action_id"], reject["style"]) == \
            ("approve", "primary", "reject", "danger")
        assert approve["value"] == reject["value"] and open_app["url"].endswith("/inbox")
        link = links.parse(approve["value"])
        assert link is not None and link.person == {"UBOB": "bob", "UDAVE": "dave"}[message["channel"]]
        assert alice.chat._owner_key not in said and alice.browser not in said and "_owner" not in said
        fields = next(b for b in message["blocks"] if "fields" in b)["fields"]
        assert fields and all(f["type"] == "mrkdwn" for f in fields)
    [interrupt_id] = store_requests.of_thread(database, alice.chat._owner_key, alice.chat.thread_id)
    kept = store_channels.slack_messages(database, alice.chat._owner_key, alice.chat.thread_id, interrupt_id)
    assert sorted((m.person, m.kind, m.channel) for m in kept) == [("bob", "assigned", "DUBOB"),
                                                                    ("dave", "assigned", "DUDAVE")]


def test_a_masked_request_says_only_that_one_waits_in_the_app():
    body = {"event": "assigned", "masked": True, "tool": "", "args": {}, "message": "type the API key",
            "open_url": "https://app.example.test/inbox", "asker": "Alice"}
    blocks = slack.blocks_for(body)
    assert blocks == [{"type": "section", "text": {"type": "mrkdwn", "text":
                       "A request waits for you: <https://app.example.test/inbox|open the app>"}}]
    assert slack.fallback_text(body) == "A request waits for you: open the app"


def test_what_an_agent_says_becomes_no_link_and_no_mention():
    body = {"event": "reminder", "masked": False, "tool": "pay", "asker": "Eve <!channel>", "title": "<@U1>",
            "args": {"to": "<https://evil.example|click>", **{f"a{n}": n for n in range(12)}},
            "message": "<!here> now", "expires_at": "2030-01-01T00:00:00+00:00", "assignee_names": ["finance"],
            "need": 2, "have": 1, "decide_url": "https://app.example.test/decide/abc.def",
            "open_url": "https://app.example.test/inbox"}
    blocks = slack.blocks_for(body)
    mrkdwn = [t["text"] for b in blocks for t in [b.get("text") or {}, *(b.get("fields") or []),
                                                   *(b.get("elements") or [])] if t.get("type") == "mrkdwn"]
    assert not [t for t in mrkdwn if "<!channel>" in t or "<@U1>" in t or "<https://evil" in t]
    assert any("&lt;!channel&gt;" in t for t in mrkdwn)
    assert len(next(b for b in blocks if "fields" in b)["fields"]) == 10  # Block Kit's limit: the last counts the rest
    message = next(b for b in blocks if (b.get("text") or {}).get("type") == "plain_text" and b["type"] == "section")
    assert message["text"]["text"] == "<!here> now"  # plain text: shown as typed, never parsed
    assert blocks[0]["text"]["text"].startswith("Reminder")
    said = json.dumps(blocks)
    assert "1 of 2 approvals so far" in said and "<!date^1893456000^" in said
    assert [b["value"] for b in buttons({"blocks": blocks}) if "value" in b] == ["abc.def", "abc.def"]


# -- clicks --------------------------------------------------------------------------------------------

async def test_a_signed_click_from_bob_approves_once_and_every_message_is_updated(chat_cls, agent, api, database,
                                                                                   backend):
    alice = await asked(chat_cls, api)
    response = await post_click(backend, click(token_of(api, "UBOB"), "UBOB", response_url=f"{api.base}/respond"))
    assert response.status_code == 200
    assert response.json()["response_type"] == "ephemeral"
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    assert ("resolved", "bob", "") in await _decided(database, alice.chat._owner_key, alice.chat.thread_id)
    updates = await until(lambda: len(api.of("chat.update")) >= 2 and api.of("chat.update"), "the updates")
    assert sorted((u["channel"], u["ts"]) for u in updates) == sorted(api.answered)
    assert sorted(c for c, _ in api.answered) == ["DUBOB", "DUDAVE"]
    for u in updates:
        assert not buttons(u) and "Approved by Bob" in u["text"] and "Approved by Bob" in json.dumps(u["blocks"])
    await until(lambda: api.replies, "the reply to the click")
    assert api.replies[0]["text"] == slack.DONE["approve"] and api.replies[0]["response_type"] == "ephemeral"


async def test_a_reject_click_rejects(chat_cls, agent, api, database, backend):
    alice = await asked(chat_cls, api)
    response = await post_click(backend, click(token_of(api, "UDAVE"), "UDAVE", "reject"))
    assert response.status_code == 200
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    assert ("rejected", "dave", "") in await _decided(database, alice.chat._owner_key, alice.chat.thread_id)
    await until(lambda: len(api.of("chat.update")) >= 2, "the updates")
    assert all("Rejected by Dave" in u["text"] for u in api.of("chat.update"))


async def test_what_does_not_verify_is_refused_with_401_and_changes_nothing(chat_cls, agent, api, database, backend,
                                                                            monkeypatch):
    alice = await asked(chat_cls, api)
    body = click(token_of(api, "UBOB"), "UBOB")
    now = time.time()
    refused = [
        sign(body, secret="another secret"),  # a bad signature
        sign(body, at=now - 360),  # 6 minutes old
        sign(body, at=now + 360),  # 6 minutes ahead
        {**sign(body), "X-Slack-Signature": ""},
        {"Content-Type": "application/x-www-form-urlencoded"},  # no headers at all
        {**sign(body), "X-Slack-Request-Timestamp": "yesterday"},
        {**sign(body + b"&x=1")},  # signed for another body
    ]
    for headers in refused:
        assert (await post_click(backend, body, headers)).status_code == 401, headers
    monkeypatch.delenv(slack.SIGNING_SECRET_ENV)  # no secret: nothing verifies
    assert (await post_click(backend, body)).status_code == 401
    monkeypatch.setenv(slack.SIGNING_SECRET_ENV, SECRET)
    large = click("x" * (slack.MAX_BODY + 1), "UBOB")
    assert (await post_click(backend, large)).status_code == 413
    await asyncio.sleep(0.3)
    assert _resumes(agent[1], alice.chat.thread_id) == [] and still_open(database, alice)
    assert api.of("chat.update") == []


def test_the_signature_window_is_five_minutes_either_way():
    body, now = b"payload=%7B%7D", 1_800_000_000.0
    for offset, ok in ((0, True), (-299, True), (299, True), (-301, False), (301, False)):
        headers = sign(body, at=now + offset)
        got = slack.verified(SECRET, body, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"], now=now)
        assert got is ok, offset


async def test_a_user_who_may_not_decide_gets_a_reply_and_nothing_changes(chat_cls, agent, api, database, backend):
    alice = await asked(chat_cls, api)
    token = token_of(api, "UBOB")
    for user, says in (("UCAROL", "you may not decide it"), ("UALICE", "you may not decide it"),
                       ("UNOBODY", slack.UNKNOWN)):
        response = await post_click(backend, click(token, user, response_url=f"{api.base}/respond"))
        assert response.status_code == 200 and says in response.json()["text"], user
    bad = await post_click(backend, click(token[:-2] + "AA", "UBOB"))  # a tampered token
    assert bad.status_code == 200 and bad.json()["text"] == slack.INVALID
    await until(lambda: len(api.replies) >= 3, "the replies")
    await asyncio.sleep(0.3)
    assert _resumes(agent[1], alice.chat.thread_id) == [] and still_open(database, alice)
    assert api.of("chat.update") == []


async def test_a_click_that_is_not_a_decision_is_acknowledged(api, backend):
    body = urlencode({"payload": json.dumps({"type": "block_actions", "user": {"id": "UBOB"},
                                             "actions": [{"action_id": "open", "type": "button"}]})}).encode()
    response = await post_click(backend, body)
    assert response.status_code == 200 and response.content == b""


async def test_a_double_click_resumes_once(chat_cls, agent, api, database, backend):
    alice = await asked(chat_cls, api)
    body = click(token_of(api, "UBOB"), "UBOB")
    first, second = await asyncio.gather(post_click(backend, body), post_click(backend, body))
    assert first.status_code == second.status_code == 200
    texts = [r.json()["text"] for r in (first, second)]
    assert texts.count(slack.DONE["approve"]) <= 1  # the other: already decided (or still on its way, on a slow box)
    assert set(texts) <= {slack.DONE["approve"], "This request was already decided.", slack.WORKING}
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    decided = [a for a in await _decided(database, alice.chat._owner_key, alice.chat.thread_id) if a[0] == "resolved"]
    assert decided == [("resolved", "bob", "")]
    again = await post_click(backend, body)
    assert again.status_code == 200 and again.json()["text"] == "This request was already decided."


async def test_a_race_with_the_web_inbox_resumes_once(chat_cls, agent, api, database, backend):
    alice = await asked(chat_cls, api)
    dave = await Tab(chat_cls, "dave").load()
    card = (await dave.inbox())[0]
    await asyncio.gather(post_click(backend, click(token_of(api, "UBOB"), "UBOB")), dave.approve(card))
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    decided = [a for a in await _decided(database, alice.chat._owner_key, alice.chat.thread_id) if a[0] == "resolved"]
    assert len(decided) == 1 and decided[0][1] in ("bob", "dave")
    await until(lambda: len(api.of("chat.update")) >= 2, "the updates")
    assert all(not buttons(u) for u in api.of("chat.update"))


async def test_a_message_posted_while_the_request_is_decided_is_updated_too(chat_cls, agent, api, database):
    api.gate.clear()
    alice = await _ask(chat_cls)
    await until(lambda: api.waiting == 1, "a message in flight")  # the courier posts one at a time
    dave = await Tab(chat_cls, "dave").load()
    await dave.approve((await dave.inbox())[0])  # decided before Slack answered: no message kept yet
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    await _decided(database, alice.chat._owner_key, alice.chat.thread_id)  # written after the resume leaves
    assert api.of("chat.update") == []
    api.gate.set()
    updates = await until(lambda: api.of("chat.update"), "the update")
    await asyncio.sleep(0.3)
    assert len(api.answered) == 1  # the other one, not sent yet, is not sent at all: the request is decided
    assert [(u["channel"], u["ts"]) for u in api.of("chat.update")] == api.answered  # updated, once
    assert all("Approved by Dave" in u["text"] and not buttons(u) for u in updates)


async def test_two_approvals_needed_a_click_counts_one(chat_cls, agent, api, database, backend):
    NEED["count"] = 2
    alice = await asked(chat_cls, api)
    assert all("0 of 2 approvals so far" in json.dumps(m) for m in api.of("chat.postMessage"))
    response = await post_click(backend, click(token_of(api, "UBOB"), "UBOB"))
    assert response.status_code == 200
    await asyncio.sleep(0.3)
    assert _resumes(agent[1], alice.chat.thread_id) == [] and still_open(database, alice)
    await post_click(backend, click(token_of(api, "UDAVE"), "UDAVE"))
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1


# -- failures ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fail", ["500", "not-ok"])
async def test_slack_failing_is_retried_then_given_up_with_one_log_line(chat_cls, agent, api, database, caplog, fail):
    caplog.set_level(logging.INFO)
    api.fail = fail
    alice = await _ask(chat_cls)

    def rows() -> list[tuple[str, int]]:
        with database.engine.connect() as conn:
            return [(r.state, r.attempts) for r in conn.execute(outbox.outbox_table.select()).all()
                    if r.body.get("channel") == "slack"]

    settled = await until(lambda: (found := rows()) and all(s == "failed" for s, _ in found) and found, "giving up")
    assert settled == [("failed", notifier.MAX_ATTEMPTS)] * 2
    assert len(api.of("chat.postMessage")) == 2 * notifier.MAX_ATTEMPTS
    gave_up = [r for r in caplog.records if "gave up" in r.getMessage()]
    assert len(gave_up) == 2 and all(r.levelno == logging.WARNING for r in gave_up)  # one line per message
    tried = [r for r in caplog.records if r.name == slack.log.name]
    assert tried and all(r.levelno == logging.INFO for r in tried)
    assert TOKEN not in caplog.text
    assert _resumes(agent[1], alice.chat.thread_id) == [] and still_open(database, alice)  # nothing else broke


# -- the demo's backend --------------------------------------------------------------------------------

async def test_the_demo_backend_serves_the_endpoint_at_slack_interactions(monkeypatch):
    from interrupt_chat.demo import site

    monkeypatch.setenv(slack.SIGNING_SECRET_ENV, SECRET)
    transport = httpx.ASGITransport(app=site._api())
    async with httpx.AsyncClient(transport=transport, base_url="http://backend") as client:
        unsigned = await client.post("/slack/interactions", content=b"payload=%7B%7D")
        body = b"payload=%7B%7D"
        signed = await client.post("/slack/interactions", content=body, headers=sign(body))
    assert unsigned.status_code == 401 and signed.status_code == 200
