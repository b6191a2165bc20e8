"""Issue 38 §1: a person's identity key never leaves the server (contracts §6.1).

Whatever reaches the outside (a signed webhook received by a real loopback server, the chat's
``notify`` function, ``on_feedback``, a decision link, the thread and audit exports) names a
person by the app's ``owner=`` id, or else by ``anon-`` and an HMAC of the key under the server
secret. Tabs are ``rx.State`` trees against the demo agent on loopback (the harness of
``test_consistency.py``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
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
from interrupt_chat.tab import threads
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

pytestmark = pytest.mark.loopback

HOOK_SECRET = "sec-keys-webhook-secret"
ANONYMOUS = re.compile(r"anon-[0-9a-f]{32}")
USER = {"id": "alice@example.test"}  # the app's logged-in user, for the chat with owner=fn


class Receiver:
    """A webhook endpoint on loopback: keeps every body it was sent, and whether its signature held."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.verified: list[bool] = []
        self.lock = threading.Lock()

    async def __call__(self, request: Request) -> JSONResponse:
        raw = await request.body()
        ok = notifier.verify(HOOK_SECRET, request.headers.get(notifier.TIMESTAMP_HEADER, ""), raw,
                             request.headers.get(notifier.SIGNATURE_HEADER, ""))
        with self.lock:
            self.bodies.append(raw + b"\n" + json.dumps(dict(request.headers)).encode())
            self.verified.append(ok)
        return JSONResponse({"ok": True})

    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(b.split(b"\n", 1)[0]) for b in self.bodies]

    def raw(self) -> str:
        with self.lock:
            return b"".join(self.bodies).decode()


@pytest.fixture
def receiver(monkeypatch) -> Iterator[Receiver]:
    hook = Receiver()
    with serve_in_thread(Starlette(routes=[Route("/hook", hook.__call__, methods=["POST"])])) as base:
        monkeypatch.setenv(notifier.WEBHOOK_URL_ENV, f"{base}/hook")
        monkeypatch.setenv(notifier.WEBHOOK_SECRET_ENV, HOOK_SECRET)
        monkeypatch.setattr(notifier, "BACKOFF_SECONDS", 0.05)
        yield hook


NOTIFIED: list[dict[str, Any]] = []  # the chats' notify function
FEEDBACK: list[dict[str, Any]] = []  # the chats' on_feedback function


@pytest.fixture(scope="module")
def chats(agent) -> dict[str, ic.Chat]:
    return {
        "anonymous": ic.Chat(agent[0], name="sec-keys-anon", notify=NOTIFIED.append, on_feedback=FEEDBACK.append),
        "login": ic.Chat(agent[0], name="sec-keys-login", owner=lambda chat: USER["id"], notify=NOTIFIED.append,
                         on_feedback=FEEDBACK.append),
    }


async def until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def _key_of(tab: Tab) -> tuple[str, str]:
    """The tab's owner key and its owner part (for an anonymous tab: the browser's secret)."""
    key = tab.chat._owner_key
    assert key and "|" in key
    return key, key.rsplit("|", 1)[0]


def _token_payload(decide_url: str) -> dict[str, Any]:
    body = decide_url.rsplit("/", 1)[-1].split(".")[0]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


async def _approve_and_rate(tab: Tab, receiver: Receiver) -> None:
    """An approval waits (pending), is answered (decided), and its answer is rated with a comment."""
    await tab.send("approval")
    await until(lambda: any(e["event"] == "pending" for e in receiver.events()))
    [interrupt_id] = tab.ids()
    await tab.resolve({"approved": True}, interrupt_id)
    await until(lambda: any(e["event"] == "decided" for e in receiver.events()))
    answer = next(m.id for m in reversed(tab.session.transcript.messages) if m.role == "assistant")
    await tab.cls.rate_message.fn(tab.chat, answer, "up")
    await tab.cls.comment_message.fn(tab.chat, {"message_id": answer, "comment": "fine"})


async def test_an_anonymous_key_reaches_no_webhook_notify_feedback_or_link(chats, agent, receiver):
    NOTIFIED.clear()
    FEEDBACK.clear()
    chat = chats["anonymous"]
    tab = await Tab(chat.state, agent[1]).load()
    await _approve_and_rate(tab, receiver)
    await until(lambda: len(NOTIFIED) >= 2)
    key, secret = _key_of(tab)
    left = receiver.raw() + json.dumps(NOTIFIED) + json.dumps(FEEDBACK)
    assert all(receiver.verified) and secret not in left and key not in left
    people = {e["owner"] for e in [*receiver.events(), *NOTIFIED, *FEEDBACK]}
    assert len(people) == 1 and ANONYMOUS.fullmatch(people.pop() or "")  # one opaque id, the same everywhere
    [pending] = [e for e in receiver.events() if e["event"] == "pending"]
    payload = _token_payload(pending["decide_url"])
    assert secret not in json.dumps(payload)
    assert payload["h"] != hashlib.sha256(key.encode()).hexdigest()[:32]  # no unsalted hash to guess keys against
    for event in receiver.events():  # nor an id that hashes the key with what the body shows
        request = event["interrupt_id"] or event["tool_call_id"]
        for run_id in {"", *(r.get("runId", "") for r in agent[1].records(tab.chat.thread_id))}:
            guess = json.dumps([event["event"], key, event["thread_id"], run_id, request]).encode()
            assert event["id"] != hashlib.sha256(guess).hexdigest()[:32]


async def test_an_app_login_names_the_person_by_the_apps_own_id(chats, agent, receiver):
    NOTIFIED.clear()
    FEEDBACK.clear()
    tab = await Tab(chats["login"].state, agent[1]).load()
    await _approve_and_rate(tab, receiver)
    await until(lambda: len(NOTIFIED) >= 2)
    people = {e["owner"] for e in [*receiver.events(), *NOTIFIED, *FEEDBACK]}
    assert people == {USER["id"]}  # the app's user id is its own to send
    assert all(chats["login"].state.get_full_name() not in e["owner"] for e in receiver.events())


async def test_the_anonymous_id_is_keyed_by_the_server_secret(chats, monkeypatch):
    key = f"browser-secret-1|{chats['anonymous'].state.get_full_name()}"
    monkeypatch.setenv(links.SECRET_ENV, "one server secret")
    first = links.public_person(key)
    assert ANONYMOUS.fullmatch(first) and links.public_person(key) == first  # stable while the secret is
    assert "browser-secret-1" not in first and links.public_person(key, chats["anonymous"].state) == first
    monkeypatch.setenv(links.SECRET_ENV, "another server secret")
    assert links.public_person(key) != first  # nobody without the secret can test a guess against it
    assert links.owner_hash(key) != hashlib.sha256(key.encode()).hexdigest()[:32]
    login = f"bob|{chats['login'].state.get_full_name()}"
    assert links.public_person(login) == "bob" == links.public_person(login, chats["login"].state)


async def test_the_thread_and_audit_exports_carry_no_key(chats, agent, receiver, database):
    tab = await Tab(chats["anonymous"].state, agent[1]).load()
    await _approve_and_rate(tab, receiver)
    key, secret = _key_of(tab)
    files = [database.export(key, tab.chat.thread_id, fmt) or "" for fmt in ("markdown", "json")]
    files.append(database.export_jsonl(key))
    files += [text for _, text in await threads.export(tab.chat, tab.cls, tab.chat.thread_id)]  # thread-export
    assert all(files) and all(secret not in text and key not in text for text in files)
