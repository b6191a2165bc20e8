"""Server-side notifications (issue 23): the chat's ``notify`` function and a signed webhook, through the outbox.

A real webhook receiver on loopback checks every request's signature the way the README tells a
receiver to (``interrupt_chat.approvals.notifier.verify``); tabs are ``rx.State`` trees against the demo agent.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import interrupt_chat as ic
from interrupt_chat.approvals import links, notifier
from interrupt_chat.store import outbox
from interrupt_chat.store.threads_db import ThreadDB
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

pytestmark = pytest.mark.loopback

SECRET = "webhook-secret-for-tests"
BEARER = "Bearer agent-token-never-notified"


class Receiver:
    """A webhook endpoint: keeps what it got, refuses the first ``fail`` requests with a 500."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.verified: list[bool] = []
        self.fail = 0
        self.lock = threading.Lock()

    async def __call__(self, request: Request) -> JSONResponse:
        raw = await request.body()
        ok = notifier.verify(SECRET, request.headers.get(notifier.TIMESTAMP_HEADER, ""), raw,
                             request.headers.get(notifier.SIGNATURE_HEADER, ""))
        with self.lock:
            if self.fail > 0:
                self.fail -= 1
                return JSONResponse({"error": "try later"}, status_code=500)
            self.bodies.append(raw)
            self.verified.append(ok)
        return JSONResponse({"ok": True})

    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(b) for b in self.bodies]


@pytest.fixture
def receiver(monkeypatch) -> Iterator[Receiver]:
    hook = Receiver()
    with serve_in_thread(Starlette(routes=[Route("/hook", hook.__call__, methods=["POST"])])) as base:
        monkeypatch.setenv(notifier.WEBHOOK_URL_ENV, f"{base}/hook")
        monkeypatch.setenv(notifier.WEBHOOK_SECRET_ENV, SECRET)
        monkeypatch.setattr(notifier, "BACKOFF_SECONDS", 0.05)
        yield hook




async def until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_a_signature_verifies_only_the_body_and_time_it_was_made_for():
    body, stamp = b'{"event":"pending"}', str(int(time.time()))
    signature = notifier.sign(SECRET, stamp, body)
    assert signature.startswith("sha256=") and notifier.verify(SECRET, stamp, body, signature)
    assert not notifier.verify(SECRET, stamp, body + b" ", signature)
    assert not notifier.verify("another secret", stamp, body, signature)
    old = str(int(time.time()) - 3600)
    assert not notifier.verify(SECRET, old, body, notifier.sign(SECRET, old, body))  # a replay, an hour later
    assert not notifier.verify(SECRET, "not a time", body, signature)


async def test_pending_and_decided_reach_the_webhook_signed_and_without_secrets(receiver, agent):
    url, store = agent
    chat = ic.Chat(url, headers={"Authorization": BEARER}, name="notify-hook")
    tab = await Tab(chat.state, store).load()
    await tab.send("credential")
    await until(lambda: any(e["event"] == "pending" for e in receiver.events()))
    [pending] = [e for e in receiver.events() if e["event"] == "pending"]
    [interrupt_id] = tab.ids()
    assert pending["interrupt_id"] == interrupt_id and pending["thread_id"] == tab.chat.thread_id
    assert pending["reason"] == "input_required" and pending["message"] == "Enter your API key"
    assert pending["owner"].startswith("anon-") and pending["decide_url"] == ""  # a secret: no link (S23)
    assert pending["owner"] == links.public_person(tab.chat._owner_key)  # never the key (contracts 6.1)
    assert set(pending) == {"id", "event", "owner", "thread_id", "interrupt_id", "tool_call_id", "reason", "message",
                            "tool", "expires_at", "created_at", "decide_url"}
    await tab.resolve({"api_key": "hunter2-typed-secret"}, interrupt_id)
    await until(lambda: any(e["event"] == "decided" for e in receiver.events()))
    assert all(receiver.verified)
    raw = b"".join(receiver.bodies).decode()
    assert "hunter2" not in raw and "agent-token" not in raw and "Bearer" not in raw


async def test_a_tool_approval_gets_a_decision_link_and_each_notification_is_sent_once(receiver, agent):
    url, store = agent
    chat = ic.Chat(url, name="notify-link")
    tab = await Tab(chat.state, store).load()
    await tab.send("approval")
    await until(lambda: len(receiver.events()) >= 1)
    await asyncio.sleep(0.3)
    [pending] = receiver.events()
    assert pending["decide_url"].startswith("http://localhost:3000/decide/") and pending["tool"] == "delete_files"
    await tab.cls.on_load_chat.fn(tab.chat)  # a reload: nothing new to notify
    await asyncio.sleep(0.3)
    assert len(receiver.events()) == 1


async def test_a_failing_receiver_gets_the_notification_again_until_it_takes_it(receiver, agent, database):
    url, store = agent
    receiver.fail = 2
    chat = ic.Chat(url, name="notify-retry")
    tab = await Tab(chat.state, store).load()
    await tab.send("approval")
    await until(lambda: len(receiver.events()) == 1)

    def stored() -> list[tuple[str, int]]:
        with database.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(outbox.outbox_table.select().with_only_columns(
                outbox.outbox_table.c.state, outbox.outbox_table.c.attempts)).all()]

    await until(lambda: stored() != [("pending", 3)])  # the receiver answered; the outbox is written just after
    assert stored() == [("delivered", 3)]


async def test_the_chats_notify_function_gets_each_event(agent, monkeypatch):
    monkeypatch.delenv(notifier.WEBHOOK_URL_ENV, raising=False)
    url, store = agent
    got: list[dict[str, Any]] = []

    async def notify(body: dict[str, Any]) -> None:
        got.append(body)

    chat = ic.Chat(url, notify=notify, name="notify-fn")
    tab = await Tab(chat.state, store).load()
    await tab.send("approval")
    await until(lambda: [g["event"] for g in got] == ["pending"])
    await tab.resolve({"approved": False}, tab.ids()[0])
    await until(lambda: [g["event"] for g in got] == ["pending", "decided"])
    assert got[1]["interrupt_id"] == got[0]["interrupt_id"] and got[1]["id"] != got[0]["id"]


def test_two_workers_claim_each_due_notification_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'outbox.db'}"
    first, second = ThreadDB(url), ThreadDB(url)
    try:
        for n in range(30):
            assert outbox.enqueue(first, f"n{n}", "chat", {"n": n})
        assert not outbox.enqueue(second, "n0", "chat", {"n": 0})  # the same id: queued once
        claimed: list[list[outbox.OutboxItem]] = [[], []]

        def drain(db: ThreadDB, into: list[outbox.OutboxItem]) -> None:
            while batch := outbox.claim_due(db, limit=3):
                into.extend(batch)

        workers = [threading.Thread(target=drain, args=(db, into)) for db, into in zip((first, second), claimed,
                                                                                        strict=True)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        ids = [item.id for batch in claimed for item in batch]
        assert sorted(ids) == sorted(f"n{n}" for n in range(30))  # every one, once
    finally:
        first.close()
        second.close()
