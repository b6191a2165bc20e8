"""Identity (issue 38 §1, contracts §6.1): a browser identity nobody can borrow.

The handshake (cookie, Origin, what Reflex may see) is checked through :func:`identity.admit` as the ASGI
server calls it; the tab's identity through chat states whose session ids are bound like sockets, against
the demo agent on loopback (which records what it received).
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import reflex as rx
from reflex.istate.data import SessionData

import interrupt_chat as ic
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.tab import identity, persistence
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures

pytestmark = pytest.mark.loopback

APP = "http://localhost:3000"
SECRET = b"k" * 32


@pytest.fixture(autouse=True)
def _a_browser_per_state_tree():
    """Here every state's identity comes from its bound socket, as in the app (no made-up browsers)."""
    yield
    identity._by_sid.clear()
    identity._legacy_by_sid.clear()


@pytest.fixture(autouse=True)
def _app_origins(monkeypatch):
    config = rx.config.get_config()
    monkeypatch.setattr(config, "deploy_url", APP)
    monkeypatch.setattr(config, "api_url", "http://localhost:8000")
    monkeypatch.setattr(identity, "_secret_value", SECRET)
    monkeypatch.delenv(identity.ALLOWED_ORIGINS_ENV, raising=False)


def handshake(origin: str | None = APP, cookie: str | None = None, scheme: str = "ws") -> dict[str, Any]:
    headers = [(b"host", b"localhost:8000")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if cookie is not None:
        headers.append((b"cookie", cookie.encode()))
    return {"type": "websocket", "scheme": scheme, "path": "/_event/", "headers": headers}


async def admitted(scope: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
    """The scope the server passes on, and the Set-Cookie headers of its accept."""
    sent: list[dict[str, Any]] = []

    async def send(message):
        sent.append(message)

    scope, wrapped = await identity.admit(scope, send)
    await wrapped({"type": "websocket.accept", "headers": []})
    return scope, [v for k, v in sent[0]["headers"] if k == b"set-cookie"]


def cookie_value(header: bytes) -> str:
    return header.decode().split(";")[0].split("=", 1)[1]


async def test_a_new_browser_gets_a_random_httponly_samesite_identity_of_128_bits():
    scope, cookies = await admitted(handshake())
    [header] = cookies
    attrs = [a.strip() for a in header.decode().split(";")]
    assert attrs[0].startswith(f"{identity.COOKIE}=") and "HttpOnly" in attrs and "SameSite=Lax" in attrs
    assert "Secure" not in attrs and "Path=/" in attrs
    person = scope[identity._SCOPE_KEY]
    assert identity.verify(SECRET, cookie_value(header)) == (person, pytest.approx(time.time(), abs=5))
    assert len(person) == 22  # 16 random bytes, base64url
    other, _ = await admitted(handshake())
    assert other[identity._SCOPE_KEY] != person
    foreign, none = await admitted(handshake(origin="https://app.example", scheme="wss"))
    assert foreign[identity._SCOPE_KEY] == "" and none == []  # not the app's origin
    _, [https] = await admitted({**handshake(), "scheme": "wss"})
    assert "Secure" in https.decode()


async def test_the_identity_cookie_never_reaches_reflex_and_other_cookies_do():
    value = identity.issue(SECRET)
    scope, cookies = await admitted(handshake(cookie=f"theme=dark; {identity.COOKIE}={value}; other=1"))
    assert scope[identity._SCOPE_KEY] == identity.verify(SECRET, value)[0] and cookies == []  # fresh: kept
    assert dict(scope["headers"])[b"cookie"] == b"theme=dark; other=1"
    assert value.encode() not in b"".join(v for _, v in scope["headers"])
    scope, _ = await admitted(handshake(cookie=f"{identity.COOKIE}={value}"))
    assert b"cookie" not in dict(scope["headers"])  # nothing else: no header at all


@pytest.mark.parametrize("origin", ["http://localhost:3001", "http://127.0.0.1:3001", "http://evil.example", "null", "",
                                    None, "http://localhost:3000.evil.example", "https://localhost:3000"])
async def test_a_socket_from_another_origin_gets_no_identity_even_with_the_cookie(origin):
    value = identity.issue(SECRET)
    scope, cookies = await admitted(handshake(origin=origin, cookie=f"{identity.COOKIE}={value}"))
    assert scope[identity._SCOPE_KEY] == "" and cookies == []
    assert value.encode() not in b"".join(v for _, v in scope["headers"])


async def test_the_app_s_own_origins_are_its_deploy_url_its_backend_and_the_listed_ones(monkeypatch):
    for origin in (APP, "http://localhost:8000", "HTTP://LOCALHOST:3000", "http://127.0.0.1:3000", "http://[::1]:3000"):
        scope, _ = await admitted(handshake(origin=origin))
        assert scope[identity._SCOPE_KEY], origin
    monkeypatch.setenv(identity.ALLOWED_ORIGINS_ENV, "https://chat.example.com, http://127.0.0.1:3000")
    scope, _ = await admitted(handshake(origin="https://chat.example.com"))
    assert scope[identity._SCOPE_KEY]


async def test_a_forged_an_old_or_a_foreign_cookie_is_replaced_and_a_day_old_one_reissued():
    now = time.time()
    person = "A" * 22
    forged = identity.issue(b"x" * 32, person)
    old = identity.issue(SECRET, person, now=now - identity.MAX_AGE - 60)
    for value in (forged, old, "v1.short.1.mac", "garbage"):
        scope, [fresh] = await admitted(handshake(cookie=f"{identity.COOKIE}={value}"))
        assert scope[identity._SCOPE_KEY] != person and cookie_value(fresh) != value
    day_old = identity.issue(SECRET, person, now=now - identity.REISSUE_AFTER - 60)
    scope, [rotated] = await admitted(handshake(cookie=f"{identity.COOKIE}={day_old}"))
    assert scope[identity._SCOPE_KEY] == person and cookie_value(rotated) != day_old
    assert identity.verify(SECRET, cookie_value(rotated))[0] == person


class Who:
    """Who ``owner=`` says the tab is: an app's login, changed by the test."""

    name: str | None = "alice"


@pytest.fixture(scope="module")
def chats(agent) -> dict[str, ic.Chat]:
    return {"anon": ic.Chat(agent[0], name="identity-anon"),
            "login": ic.Chat(agent[0], name="identity-login", owner=lambda chat: Who.name)}


class Socket:
    """One tab on one socket: a state tree whose session id is bound like a handshake binds it."""

    count = 0

    def __init__(self, chat_cls: type, person: str | None, store: DemoStore) -> None:
        Socket.count += 1
        self.cls, self.store, self.sid = chat_cls, store, f"sid-{Socket.count}"
        self.root = rx.State()
        self.root.rx_router_session = SessionData(client_token=f"tok-{Socket.count}", client_ip="", session_id=self.sid)
        self.chat: Any = self.root.get_substate(chat_cls.get_full_name().split("."))
        if person is not None:
            identity.bind(self.sid, person)

    async def load(self) -> Socket:
        await self.cls.on_load_chat.fn(self.chat)
        return self

    async def send(self, text: str) -> None:
        await self.cls.send.fn(self.chat, {"text": text})

    def sent(self) -> list[str]:
        return [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
                for r in self.store.records() for m in r["messages"] if m["role"] == "user"]


async def test_a_socket_without_identity_sends_lists_and_answers_nothing(chats, agent):
    alice = await Socket(chats["anon"].state, "alice-browser", agent[1]).load()
    await alice.send("approval")
    [interrupt_id] = alice.chat._session().tracker.pending.ids
    thread = alice.chat.thread_id
    stranger = await Socket(chats["anon"].state, "", agent[1]).load()  # another origin: bound, no identity
    assert stranger.chat.signed_out and stranger.chat.threads == [] and stranger.chat.thread_id != thread
    before = len(agent[1].records())
    await stranger.send("from another origin")
    await stranger.cls.switch_thread.fn(stranger.chat, thread)
    assert stranger.chat.thread_id != thread
    config = await stranger.chat.get_state(stranger.cls.default_config)
    await stranger.cls.default_config.resolve.fn(config, {"approved": True}, interrupt_id)
    assert len(agent[1].records()) == before and "from another origin" not in stranger.sent()


async def test_a_tab_whose_socket_is_unknown_keeps_its_owner_and_is_never_given_a_new_one(chats, agent):
    """The finding01 flake: a state without headers came up under a newly minted owner and lost its threads."""
    tab = await Socket(chats["anon"].state, "bob-browser", agent[1]).load()
    await tab.send("hello")
    key, thread = tab.chat._owner_key, tab.chat.thread_id
    identity.unbind(tab.sid)  # the socket closed (or lives on another worker): this process does not know it
    assert identity.person_of(tab.chat) is None
    assert await persistence.owner_of(tab.chat) == key
    fresh = Socket(chats["anon"].state, None, agent[1])  # a restarted backend's fresh state, socket not bound
    fresh.sid = tab.sid
    fresh.root.rx_router_session = SessionData(client_token="t", client_ip="", session_id=tab.sid)
    assert await persistence.owner_of(fresh.chat) == ""  # unknown and never served: nobody, nothing minted
    identity.bind(tab.sid, "bob-browser")  # its socket connects again: the same browser
    await fresh.load()
    assert fresh.chat._owner_key == key and fresh.chat.thread_id == thread


async def test_logged_out_sends_nothing_lists_nothing_and_shows_signin(chats, agent):
    Who.name = "alice"
    tab = await Socket(chats["login"].state, "browser-1", agent[1]).load()
    await tab.send("hello as alice")
    assert tab.chat.threads and not tab.chat.signed_out
    Who.name = None
    before = len(agent[1].records())
    await tab.send("hello while logged out")
    assert len(agent[1].records()) == before
    assert tab.chat.signed_out and tab.chat.threads == []
    assert "hello as alice" not in str([s.transcript.messages for s in tab.chat._sessions.values()])
    Who.name = "alice"


async def test_a_person_switch_leaves_nothing_of_the_previous_person(chats, agent):
    Who.name = "alice"
    tab = await Socket(chats["login"].state, "browser-2", agent[1]).load()
    await tab.send("alice's secret plan")
    await tab.cls.attach_files.fn(tab.chat, [rx.UploadFile(file=io.BytesIO(b"alice's notes"), path=Path("a.txt"))])
    assert [a.name for a in tab.chat.attachments] == ["a.txt"]
    tab.chat.inbox_selected = ["x"]
    tab.chat.policies = [{"tool": "t"}]
    Who.name = "bob"
    await tab.send("bob's message")
    [last] = [r for r in agent[1].records() if any(m.get("content") == "bob's message" or (
        isinstance(m.get("content"), list) and m["content"][0].get("text") == "bob's message")
        for m in r["messages"])]
    texts = str(last["messages"])
    assert "alice's secret plan" not in texts and "a.txt" not in texts and "alice's notes" not in texts
    assert tab.chat.attachments == [] and tab.chat.inbox_selected == [] and tab.chat.policies == []
    assert all("alice" not in str(t) for t in tab.chat.threads)
    Who.name = "alice"


async def test_a_browser_with_the_readable_id_of_earlier_versions_keeps_its_threads(chats, agent, database):
    old = await Socket(chats["anon"].state, "owner-legacy1", agent[1]).load()  # what the old cookie named
    await old.send("from before the upgrade")
    thread = old.chat.thread_id
    tab = Socket(chats["anon"].state, None, agent[1])
    identity.bind(tab.sid, "new-person", legacy="owner-legacy1")
    await tab.load()
    assert tab.chat.thread_id == thread and tab.chat._owner_key.startswith("new-person|")
    again = await Socket(chats["anon"].state, "owner-legacy1", agent[1]).load()  # the old id is worth nothing now
    assert thread not in [t["id"] for t in again.chat.threads]


async def test_a_socket_from_another_origin_gets_none_of_the_app_s_cookies():
    """Reflex echoes the handshake's headers to the page (router.headers): a login's HttpOnly cookie too."""
    value = identity.issue(SECRET)
    scope, cookies = await admitted(handshake(origin="http://localhost:3001",
                                              cookie=f"session=app-login-secret; {identity.COOKIE}={value}"))
    assert scope[identity._SCOPE_KEY] == "" and cookies == []
    assert b"cookie" not in dict(scope["headers"])
    assert b"app-login-secret" not in b"".join(v for _, v in scope["headers"])
    own, _ = await admitted(handshake(cookie=f"session=app-login-secret; {identity.COOKIE}={value}"))
    assert dict(own["headers"])[b"cookie"] == b"session=app-login-secret"  # the app's own page keeps its login


async def test_two_values_of_the_cookie_name_nobody_of_them_and_https_uses_the_host_prefix():
    planted, mine = identity.issue(SECRET, "P" * 22), identity.issue(SECRET, "M" * 22)
    scope, [fresh] = await admitted(handshake(cookie=f"{identity.COOKIE}={planted}; {identity.COOKIE}={mine}"))
    assert scope[identity._SCOPE_KEY] not in ("P" * 22, "M" * 22)
    assert identity.verify(SECRET, cookie_value(fresh))[0] == scope[identity._SCOPE_KEY]
    _, [header] = await admitted({**handshake(origin="https://localhost:8000"), "scheme": "wss"})
    assert header.decode().startswith(f"{identity.SECURE_COOKIE}=") and "Secure" in header.decode()
    plain = identity.issue(SECRET, "H" * 22)  # on https only the __Host- cookie counts
    again, _ = await admitted({**handshake(origin="https://localhost:8000", cookie=f"{identity.COOKIE}={plain}"),
                               "scheme": "wss"})
    assert again[identity._SCOPE_KEY] != "H" * 22


async def test_without_the_secret_a_socket_is_unknown_not_nobody(monkeypatch):
    monkeypatch.setattr(identity, "_secret_value", None)
    monkeypatch.setattr(identity, "_load_secret", lambda: b"")  # the database holding it is down
    scope, cookies = await admitted(handshake())
    assert identity._SCOPE_KEY not in scope and cookies == []


async def test_the_old_readable_id_hands_its_threads_over_only_where_the_app_opts_in(monkeypatch):
    monkeypatch.delenv(identity.ADOPT_LEGACY_ENV, raising=False)
    scope, cookies = await admitted(handshake(cookie=f"{identity.LEGACY_COOKIE}=owner-abc"))
    assert identity._LEGACY_KEY not in scope and not any(identity.LEGACY_COOKIE.encode() in c for c in cookies)
    monkeypatch.setenv(identity.ADOPT_LEGACY_ENV, "1")
    scope, cookies = await admitted(handshake(cookie=f"{identity.LEGACY_COOKIE}=owner-abc"))
    assert scope[identity._LEGACY_KEY] == "owner-abc"
    assert any(c.startswith(f"{identity.LEGACY_COOKIE}=;".encode()) and b"Max-Age=0" in c for c in cookies)


@pytest.fixture(scope="module")
def slow_agent() -> Iterator[tuple[str, DemoStore]]:
    app = create_app(delay=0.01)
    with serve_in_thread(app) as base:
        yield f"{base}/", app.state.store


async def test_a_person_switch_mid_run_shows_and_lists_nothing_of_the_run(slow_agent):
    import asyncio

    chat = ic.Chat(slow_agent[0], name="identity-midrun", owner=lambda chat: Who.name)
    Who.name = "alice"
    tab = await Socket(chat.state, "browser-3", slow_agent[1]).load()
    run = asyncio.ensure_future(tab.send("long"))
    for _ in range(200):
        await asyncio.sleep(0.02)
        if tab.chat.status == "running":
            break
    alice_thread = tab.chat.thread_id
    Who.name = "bob"
    await tab.cls.new_thread.fn(tab.chat)  # bob's first event: alice's tab state is gone
    await tab.cls.stop.fn(tab.chat)  # bob's stop stops nobody's run of alice's
    await asyncio.sleep(0.3)
    assert not run.done()  # alice's run goes on, as hers
    alice_key = f"alice|{chat.state.get_full_name()}"
    from interrupt_chat.workers import runs

    assert await runs.stop((alice_key, alice_thread))  # (the test ends it)
    await run
    assert alice_thread not in tab.chat._sessions and all(t["id"] != alice_thread for t in tab.chat.threads)
    assert tab.chat._owner_key.startswith("bob|") and not tab.chat.signed_out
    Who.name = "alice"


async def test_nobody_sets_no_agent_state_for_the_next_person(chats, agent):
    Who.name = None
    tab = await Socket(chats["login"].state, "browser-4", agent[1]).load()
    await tab.cls.set_agent_state.fn(tab.chat, {"planted": True})
    Who.name = "carol"
    await tab.send("hello as carol")
    [last] = [r for r in agent[1].records() if "hello as carol" in str(r["messages"])]
    assert "planted" not in str(last.get("state"))
    Who.name = "alice"


async def http_cookie(origin: str | None = APP, cookie: str | None = None, token: str = "tab-1",
                      extra: tuple[tuple[bytes, bytes], ...] = ()) -> tuple[int, list[bytes]]:
    """``GET <event url>/?interrupt_chat_identity=<token>`` as the page sends it: status, Set-Cookie headers."""
    scope = {**handshake(origin=origin, cookie=cookie), "type": "http", "scheme": "http",
             "query_string": f"{identity.ISSUE_QUERY}={token}".encode()}
    scope["headers"] = [*scope["headers"], *extra]
    sent: list[dict[str, Any]] = []

    async def send(message):
        sent.append(message)

    await identity.serve_cookie(scope, send)
    return sent[0]["status"], [v for k, v in sent[0]["headers"] if k == b"set-cookie"]


async def test_i2_a_same_origin_page_gets_its_cookie_though_its_browser_sends_no_origin():
    """A single-port deploy (``reflex run --env prod``): the page's GET is same-origin, and carries no Origin.

    Refused before, the cookie never stuck there: every reload was a new person, without their threads.
    """
    same = ((b"sec-fetch-site", b"same-origin"),)
    await identity._hold_ticket("tab-1", "S" * 22)
    status, [header] = await http_cookie(origin=None, extra=same)
    assert status == 204 and identity.verify(SECRET, cookie_value(header))[0] == "S" * 22
    await identity._hold_ticket("tab-2", "T" * 22)
    assert await http_cookie(origin=None, token="tab-2", extra=((b"sec-fetch-site", b"cross-site"),)) == (403, [])
    assert await http_cookie(origin=None, token="tab-2") == (403, [])  # nothing says where it comes from
    referer = ((b"referer", b"http://localhost:8000/chat"),)  # an old browser: the page's address
    assert (await http_cookie(origin=None, token="tab-2", extra=referer))[0] == 204
    await identity._hold_ticket("tab-3", "U" * 22)
    assert await http_cookie(origin=None, token="tab-3", extra=((b"referer", b"http://evil.test/x"),)) == (403, [])


async def test_the_page_gets_its_socket_s_new_identity_by_http_once():
    """Granian drops a WebSocket accept's headers: the page fetches the cookie its socket's person was issued."""
    await identity._hold_ticket("tab-1", "Q" * 22)
    assert await http_cookie(origin="http://localhost:3001") == (403, [])  # not the app's page: nothing
    status, [header] = await http_cookie()
    assert status == 204 and identity.verify(SECRET, cookie_value(header))[0] == "Q" * 22
    assert "HttpOnly" in header.decode() and "SameSite=Lax" in header.decode()
    assert await http_cookie() == (404, [])  # the ticket is used: another page cannot take it again
    assert await http_cookie(token="tab-unknown") == (404, [])
    fresh = identity.issue(SECRET, "Q" * 22)
    assert await http_cookie(cookie=f"{identity.COOKIE}={fresh}") == (204, [])  # held already: nothing new
    old = identity.issue(SECRET, "Q" * 22, now=time.time() - identity.REISSUE_AFTER - 60)
    status, [renewed] = await http_cookie(cookie=f"{identity.COOKIE}={old}")
    assert identity.verify(SECRET, cookie_value(renewed))[0] == "Q" * 22 and cookie_value(renewed) != old
