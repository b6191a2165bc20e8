"""Mail for approvals between people (issue 42 §1, contracts §6.3), through a real SMTP server on loopback.

The people of :mod:`tests.unit.people`, with mail addresses: alice (staff) asks, bob and dave (finance)
decide ``delete_files`` and the ``credential`` request, carol (managers) is escalated to. An aiosmtpd
``Controller`` on 127.0.0.1 receives what the outbox's courier sends; the decision page is driven as a
browser opening the mail's link would (``DecideState``), with nobody signed in.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import logging
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from sqlalchemy import select, update

from interrupt_chat.approvals import links, notifier
from interrupt_chat.approvals.channels import mail, reach
from interrupt_chat.approvals.decide import DecideState
from interrupt_chat.approvals.people import sweep
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.model.people import Escalation, People, Person
from interrupt_chat.store.schema import outbox_table, requests_table
from interrupt_chat.store.threads_db import ThreadDB
from tests.unit.people import (  # noqa: F401 - fixtures
    _PERSON,
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

PUBLIC = "https://app.example.test"
SENDER = "Approvals <approvals@example.test>"
ADDRESS = {pid: f"{pid}@example.test" for pid in ("alice", "bob", "carol", "dave")}


def _routed(r: Any) -> bool:
    return bool(r.asker) and (r.tool == "delete_files" or r.message == "Enter your API key")


MAIL_TEAM = People(
    [Person("alice", "Alice", ADDRESS["alice"], roles=("staff",)),
     Person("bob", "Bob", ADDRESS["bob"], roles=("finance",)),
     Person("dave", "Dave", ADDRESS["dave"], roles=("finance",)),
     Person("carol", "Carol", ADDRESS["carol"], roles=("managers",))],
    assign=lambda r: ["role:finance"] if _routed(r) else [],
    approvals=lambda r: NEED["count"] if r.tool == "delete_files" else 1,
    escalation=lambda r: Escalation(0.5, 0.8, ("role:managers",)) if _routed(r) else None,
)


class Mailbox:
    """What the SMTP server received: each mail with its envelope, and the session's TLS and login."""

    def __init__(self) -> None:
        self.got: list[tuple[list[str], EmailMessage, bool, bool]] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        with self.lock:
            encrypted = server.transport.get_extra_info("ssl_object") is not None  # STARTTLS or TLS from the start
            self.got.append((list(envelope.rcpt_tos), parsed, encrypted, bool(session.authenticated)))
        return "250 OK"

    def mails(self) -> list[EmailMessage]:
        with self.lock:
            return [m for _, m, _, _ in self.got]

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.mails() if m["To"] == address]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module", name="chat_cls")
def chat_cls_fixture(agent) -> type[ChatState]:
    cls = new_chat_state("people-test-mail", agent_url=agent[0], configs=[], owner=_login)
    cls.people = MAIL_TEAM
    return cls


@pytest.fixture(autouse=True)
def mail_env(monkeypatch) -> None:
    monkeypatch.setenv(reach.MAIL_FROM_ENV, SENDER)
    monkeypatch.setenv(links.PUBLIC_URL_ENV, PUBLIC)
    monkeypatch.delenv(reach.SLACK_TOKEN_ENV, raising=False)
    monkeypatch.delenv(notifier.WEBHOOK_URL_ENV, raising=False)
    monkeypatch.setattr(notifier, "BACKOFF_SECONDS", 0.05)


@pytest.fixture(name="smtp")
def smtp_fixture(monkeypatch) -> Iterator[Mailbox]:
    box, port = Mailbox(), _free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    monkeypatch.setenv(reach.SMTP_URL_ENV, f"smtp://127.0.0.1:{port}")
    try:
        yield box
    finally:
        controller.stop()


async def _until(found, what: str, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = found()
        if value:
            return value
        assert time.monotonic() < deadline, f"waited in vain for {what}"
        await asyncio.sleep(0.02)


def _text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def _html(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


def _link(message: EmailMessage, label: str) -> str:
    return next(line.split(": ", 1)[1] for line in _text(message).splitlines() if line.startswith(f"{label}: "))


def _token(url: str) -> str:
    return urlsplit(url).path.rsplit("/", 1)[-1]


def _outbox(db: ThreadDB) -> list[tuple[str, int, dict[str, Any]]]:
    t = outbox_table
    with db.engine.connect() as conn:
        return [(r.state, r.attempts, dict(r.body)) for r in conn.execute(select(t.c.state, t.c.attempts, t.c.body))]


def _mail_items(db: ThreadDB) -> list[tuple[str, int, dict[str, Any]]]:
    return [item for item in _outbox(db) if item[2].get("channel") == "mail"]


async def test_each_finance_person_gets_one_mail_that_says_it_all(chat_cls, smtp):
    NEED["count"] = 2
    alice = await _ask(chat_cls)
    got = await _until(lambda: len(smtp.mails()) >= 2 and smtp.mails(), "two mails")
    await asyncio.sleep(0.2)  # nothing more comes
    assert sorted(m["To"] for m in smtp.mails()) == [ADDRESS["bob"], ADDRESS["dave"]]  # not the asker
    assert sorted(rcpt[0] for rcpt, *_ in smtp.got) == [ADDRESS["bob"], ADDRESS["dave"]]
    for message in got:
        person = "bob" if message["To"] == ADDRESS["bob"] else "dave"
        assert message["Subject"] == "Approval needed: delete_files asked by Alice"
        assert message["From"] == SENDER and message["Auto-Submitted"] == "auto-generated"
        assert message["Message-ID"].startswith("<interrupt-chat.") and message["Message-ID"].endswith("@example.test>")
        text, page = _text(message), _html(message)
        for said in (f"Hello {person.capitalize()},", "Alice asks in the chat “approval”", "Tool: delete_files",
                     "  path: /tmp/reports", "  count: 3", "Delete 3 files in /tmp/reports?",
                     "It does not expire.", "It waits for: finance.", "Approvals: 0 of 2."):
            assert said in text, said
        approve, reject = _link(message, "Approve"), _link(message, "Reject")
        opened = _link(message, "Open it in the app")
        assert approve.startswith(f"{PUBLIC}/decide/") and approve.endswith("?answer=approve")
        assert reject == approve.replace("?answer=approve", "?answer=reject") and opened == f"{PUBLIC}/inbox"
        link = links.parse(_token(approve))
        assert link is not None and link.person == person and link.thread_id == alice.chat.thread_id
        assert link.interrupt_id == alice.card().id
        assert f'href="{approve}"' in page and f'href="{reject}"' in page and f'href="{opened}"' in page
        assert "<code>path</code>: /tmp/reports" in page and "Delete 3 files in /tmp/reports?" in page
        assert "<script" not in page and "<img" not in page and "src=" not in page
    ids = {m["Message-ID"] for m in got}
    assert len(ids) == 2
    raw = "".join(m.as_string() for m in got)
    assert alice.chat._owner_key not in raw and alice.browser not in raw


async def test_a_mails_link_shows_first_and_decides_as_its_recipient(chat_cls, agent, database, smtp, monkeypatch):
    alice = await _ask(chat_cls)
    [bob_mail] = await _until(lambda: smtp.to(ADDRESS["bob"]), "bob's mail")
    token = _token(_link(bob_mail, "Approve"))
    nobody = Tab(chat_cls, "")
    _PERSON.pop(nobody.token, None)  # nobody is signed in on the browser that opens the link
    decide = nobody.root.get_substate(DecideState.get_full_name().split("."))
    monkeypatch.setattr(DecideState, "_token", lambda self: token)
    await DecideState.load.fn(decide)  # a mail scanner's GET: shows it, decides nothing
    await DecideState.load.fn(decide)
    assert decide.phase == "open" and decide.card.assignee == "role:finance"
    await asyncio.sleep(0.2)
    assert _resumes(agent[1], alice.chat.thread_id) == []
    assert _actions(database, alice.chat._owner_key, alice.chat.thread_id) == []
    await DecideState.approve.fn(decide)
    await DecideState.approve.fn(decide)  # a second click: nothing more
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    assert decide.phase == "done"
    assert await _decided(database, alice.chat._owner_key, alice.chat.thread_id) == [("resolved", "bob", "")]


async def test_a_request_for_a_secret_gets_only_open_the_app(chat_cls, smtp):
    alice = await Tab(chat_cls, "alice").load()
    await chat_cls.send.fn(alice.chat, {"text": "credential"})
    assert alice.chat.status == "interrupted"
    got = await _until(lambda: len(smtp.mails()) >= 2 and smtp.mails(), "two mails")
    assert sorted(m["To"] for m in got) == [ADDRESS["bob"], ADDRESS["dave"]]
    for message in got:
        assert message["Subject"] == "Approval needed: a request waits for you"
        text, page = _text(message), _html(message)
        assert "A request waits for you: open the app" in text and f"{PUBLIC}/inbox" in text
        assert f'href="{PUBLIC}/inbox"' in page
        raw = message.as_string()
        for never in ("/decide/", "api_key", "Enter your API key", "credential", "Approve", "Reject",
                      alice.chat._owner_key, alice.browser):
            assert never not in raw, never


async def test_a_reminder_and_an_escalation_send_again_and_a_decided_request_no_more(chat_cls, agent, database,
                                                                                     sweeps_by_hand, smtp):
    alice = await _ask(chat_cls)
    await _until(lambda: len(smtp.mails()) >= 2, "the assigned mails")
    past = datetime.now(UTC) - timedelta(seconds=1)
    t = requests_table
    with database._transaction("test", write=True) as conn:  # the request surfaced long ago
        conn.execute(update(t).where(t.c.thread_id == alice.chat.thread_id).values(
            remind_at=past, escalate_at=past, escalate_to=["role:managers"]))
    assert await sweep.remind() == 2
    await _until(lambda: len(smtp.mails()) >= 5, "the reminders and the escalation")
    subjects = sorted((m["To"], m["Subject"]) for m in smtp.mails()[2:])
    assert subjects == [(ADDRESS["bob"], "Reminder: delete_files asked by Alice"),
                        (ADDRESS["carol"], "Escalated: delete_files asked by Alice"),
                        (ADDRESS["dave"], "Reminder: delete_files asked by Alice")]
    [carol_mail] = smtp.to(ADDRESS["carol"])
    assert "This request was escalated to you." in _text(carol_mail)
    assert links.parse(_token(_link(carol_mail, "Approve"))).person == "carol"  # type: ignore[union-attr]
    assert len({m["Message-ID"] for m in smtp.mails()}) == 5
    carol = await Tab(chat_cls, "carol").load()
    await carol.approve((await carol.inbox())[0])
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    with database._transaction("test", write=True) as conn:
        conn.execute(update(t).where(t.c.thread_id == alice.chat.thread_id).values(reminded=False, remind_at=past))
    assert await sweep.remind() == 0  # a decided request is not reminded
    await asyncio.sleep(0.3)
    assert len(smtp.mails()) == 5


async def test_a_server_that_is_down_is_retried_then_given_up_once_and_the_chat_goes_on(
        chat_cls, agent, database, monkeypatch, caplog):
    monkeypatch.setenv(reach.SMTP_URL_ENV, f"smtp://127.0.0.1:{_free_port()}")  # nothing listens there
    caplog.set_level(logging.INFO, logger="interrupt_chat")
    alice = await _ask(chat_cls)
    done = await _until(lambda: (items := _mail_items(database)) and len(items) == 2
                        and all(state == "failed" for state, _, _ in items) and items, "the mails given up")
    assert [attempts for _, attempts, _ in done] == [notifier.MAX_ATTEMPTS] * 2
    gave_up = [r for r in caplog.records if "gave up" in r.getMessage()]
    assert len(gave_up) == 2  # one line per mail
    assert len([r for r in caplog.records if r.getMessage().startswith("mail: sending")]) == 2 * notifier.MAX_ATTEMPTS
    bob = await Tab(chat_cls, "bob").load()
    await bob.approve((await bob.inbox())[0])
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    assert await _decided(database, alice.chat._owner_key, alice.chat.thread_id) == [("resolved", "bob", "")]


async def test_mail_waiting_for_a_server_is_not_sent_once_the_request_is_decided(chat_cls, agent, database,
                                                                                  monkeypatch):
    port = _free_port()
    monkeypatch.setenv(reach.SMTP_URL_ENV, f"smtp://127.0.0.1:{port}")
    monkeypatch.setattr(notifier, "BACKOFF_SECONDS", 0.3)
    alice = await _ask(chat_cls)
    await _until(lambda: (items := _mail_items(database)) and all(a >= 1 for _, a, _ in items) and len(items) == 2,
                 "a first failed try")
    dave = await Tab(chat_cls, "dave").load()
    await dave.reject((await dave.inbox())[0])
    assert len(await _settle(agent[1], alice.chat.thread_id, 1)) == 1
    await _decided(database, alice.chat._owner_key, alice.chat.thread_id)  # written after the resume leaves
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()  # the server is back: the mails are dropped unsent
    try:
        await _until(lambda: all(s == "delivered" for s, _, _ in _mail_items(database)), "the mails dropped")
        await asyncio.sleep(0.1)
        assert box.mails() == []
    finally:
        controller.stop()


BODY: dict[str, Any] = {
    "id": "0123456789abcdef", "channel": "mail", "to": "bob@example.test", "event": "assigned", "person": "bob",
    "person_name": "Bob <b>", "asker": "Alice\r\nBcc: evil@example.test", "title": "<script>alert(1)</script>",
    "tool": "pay_invoice", "args": {"amount": 12_500, "to": {"iban": "DE00", "name": "<img src=x>"},
                                    "note": "x" * 1_000},
    "message": "Pay it?\n<a href='https://evil.example'>now</a>", "masked": False,
    "expires_at": "2030-01-02T03:04:05+02:00", "assignee_names": ["finance"], "need": 2, "have": 1,
    "open_url": f"{PUBLIC}/inbox", "decide_url": f"{PUBLIC}/decide/t.s",
    "approve_url": f"{PUBLIC}/decide/t.s?answer=approve",
    "reject_url": f"{PUBLIC}/decide/t.s?answer=reject", "_owner": "the-owner-key|chat", "asker_id": "alice",
}


def test_compose_escapes_everything_cuts_long_values_and_never_writes_the_owner(monkeypatch):
    monkeypatch.setenv(reach.MAIL_FROM_ENV, SENDER)
    message = mail.compose(BODY)
    assert message["Subject"] == "Approval needed: pay_invoice asked by Alice Bcc: evil@example.test"
    assert message["Bcc"] is None and message["Message-ID"] == "<interrupt-chat.0123456789abcdef@example.test>"
    text, page = _text(message), _html(message)
    assert '  to: {"iban": "DE00", "name": "<img src=x>"}' in text and "  amount: 12500" in text
    assert "It expires at 2030-01-02 01:04 UTC." in text and "Approvals: 1 of 2." in text
    note = next(line for line in text.splitlines() if line.startswith("  note: "))
    assert len(note) < 320 and note.endswith("…")
    assert "<script" not in page and "<img" not in page and "<a href='https" not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x&gt;" in page
    assert "the-owner-key" not in message.as_string()
    masked = mail.compose({**BODY, "masked": True, "event": "reminder"})
    assert masked["Subject"] == "Reminder: a request waits for you"
    raw = masked.as_string()
    assert "pay_invoice" not in raw and "/decide/" not in raw and "12500" not in raw and "Pay it" not in raw
    assert f"{PUBLIC}/inbox" in raw


async def test_a_malformed_url_is_logged_once_and_drops_the_mail(monkeypatch, caplog):
    monkeypatch.setattr(mail, "_warned", set())
    monkeypatch.setenv(reach.SMTP_URL_ENV, "http://user:hunter2-secret@mail.example.test:25")
    with caplog.at_level(logging.ERROR, logger="interrupt_chat"):
        assert await mail.send(BODY) is True
        assert await mail.send(BODY) is True
    lines = [r.getMessage() for r in caplog.records if r.name == mail.__name__]
    assert len(lines) == 1 and "INTERRUPT_CHAT_SMTP_URL" in lines[0] and "hunter2" not in lines[0]
    monkeypatch.setenv(reach.SMTP_URL_ENV, "smtp://mail.example.test:notaport")
    assert await mail.send(BODY) is True
    with pytest.raises(ValueError):
        mail.config()


@pytest.fixture(scope="module", name="certificate")
def certificate_fixture(tmp_path_factory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


def _login_as(user: str, password: str):
    def check(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user \
            and auth_data.password.decode() == password
        return AuthResult(success=ok, handled=False)  # failed: the server answers 535
    return check


@pytest.mark.parametrize("scheme", ["smtp", "smtps"])
async def test_starttls_or_tls_from_the_start_and_a_url_decoded_login(scheme, certificate, monkeypatch):
    cert, key = certificate
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts the test's certificate, and checks it
    box, port = Mailbox(), _free_port()
    user, password = "mail@example.test", "p@ss:w/rd %"
    tls: dict[str, Any] = {"ssl_context": server, "auth_require_tls": False} if scheme == "smtps" \
        else {"tls_context": server, "require_starttls": True, "auth_require_tls": True}  # (aiosmtpd: only STARTTLS)
    controller = Controller(box, hostname="127.0.0.1", port=port, authenticator=_login_as(user, password), **tls)
    controller.start()
    try:
        monkeypatch.setenv(reach.SMTP_URL_ENV, f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}"
                                               f"@127.0.0.1:{port}")
        assert await mail.send(BODY) is True
        [(rcpt, message, encrypted, authenticated)] = box.got
        assert rcpt == ["bob@example.test"] and encrypted and authenticated
        assert message["Subject"].startswith("Approval needed: pay_invoice")
        monkeypatch.setenv(reach.SMTP_URL_ENV, f"{scheme}://{quote(user, safe='')}:wrong@127.0.0.1:{port}")
        assert await mail.send(BODY) is False  # refused: tried again later
        assert len(box.got) == 1
    finally:
        controller.stop()
