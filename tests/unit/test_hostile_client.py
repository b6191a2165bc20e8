"""Hostile clients: forged, wrong or oversized answers, rapid clicks, and secrets that must never be kept.

A browser can send any event with any payload. Answers are checked before the tracker records
them (S6, S9, S10): a forged id is ignored, an oversized, too deeply nested or non-JSON answer gets a
card error, a wrong one is sent once and the agent's rejection offers the set again (S15), and a
hundred clicks make one resume. Request headers (a bearer token) and a
masked answer appear in no pickle, log line, thread-store row or var (S23; item 15).
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
from typing import Any

import pytest
from reflex.istate.data import SessionData

from interrupt_chat.agui import AgentClient, AgentSession
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.demo.agent import create_app
from tests.unit.agents import serve_in_thread
from tests.unit.test_state import SECRET, Harness, agents, assert_secret_nowhere  # noqa: F401

pytestmark = pytest.mark.loopback

TOKEN = "tok-BEARER-5f0c1d9e7a"


@pytest.fixture
def plain(agents) -> Harness:  # noqa: F811 - the module's own chat (a configuration serves one chat)
    return Harness(new_chat_state("unit-test-hostile-client", agent_url=agents.url, configs=[]), agents.store)


def resumes(h: Harness) -> list[dict[str, Any]]:
    return [r for r in h.records() if r.get("resume")]


async def interrupted(h: Harness, scenario: str = "approval") -> tuple[Any, str]:
    await h.send(scenario)
    default = await h.config()
    return default, h.ids()[0]


def card_error(config: Any, interrupt_id: str) -> str:
    return next(c.error for c in config.cards if c.id == interrupt_id)


async def test_forged_interrupt_id_is_ignored_then_a_real_answer_resumes_once(plain: Harness, caplog):
    default, interrupt_id = await interrupted(plain)
    with caplog.at_level(logging.WARNING):
        await plain.cls.default_config.resolve.fn(default, {"approved": True}, "forged-id")
    assert resumes(plain) == [] and plain.session.tracker.answers == {} and "forged-id" in caplog.text  # S9
    await plain.cls.default_config.resolve.fn(default, {"approved": True}, interrupt_id)
    assert len(resumes(plain)) == 1 and plain.chat.status == "idle"


@pytest.mark.parametrize("payload", ["yes", {"approved": "sure"}], ids=["wrong-type", "wrong-field-type"])
async def test_a_wrong_answer_is_sent_once_and_the_agents_rejection_offers_the_set_again(plain: Harness, payload):
    default, interrupt_id = await interrupted(plain)
    await plain.cls.default_config.resolve.fn(default, payload, interrupt_id)
    assert len(resumes(plain)) == 1 and "INVALID_PAYLOAD" in plain.chat.error  # S15
    assert plain.ids() == [interrupt_id] and plain.chat.locked
    await plain.cls.default_config.resolve.fn(default, {"approved": True}, interrupt_id)
    assert len(resumes(plain)) == 2 and plain.chat.status == "idle"


@pytest.mark.parametrize(("payload", "message"), [
    ({"approved": True, "note": "x" * 10_000_000}, "The answer is too large (10,000,0"),
    (json.loads("[" * 500 + "]" * 500), "nested deeper than 100 levels"),
    ({"approved": float("nan")}, "The answer is not JSON data."),
], ids=["10-mb", "500-levels-deep", "nan"])
async def test_an_oversized_or_non_json_answer_gets_a_short_card_error_and_no_resume(plain: Harness, payload, message):
    default, interrupt_id = await interrupted(plain)
    await plain.cls.default_config.resolve.fn(default, payload, interrupt_id)
    error = card_error(default, interrupt_id)
    assert message in error and len(error) <= 300 and "\n" not in error
    assert resumes(plain) == [] and plain.session.tracker.answers == {} and not plain.session.tracker.sealed
    await plain.cls.default_config.resolve.fn(default, {"approved": False}, interrupt_id)  # the card still works
    assert len(resumes(plain)) == 1 and resumes(plain)[0]["resume"][0]["payload"] == {"approved": False}


async def test_a_hundred_rapid_clicks_make_exactly_one_resume(plain: Harness):
    default, interrupt_id = await interrupted(plain)
    clicks = [plain.cls.default_config.resolve.fn(default, {"approved": i % 2 == 0}, interrupt_id) for i in range(100)]
    await asyncio.gather(*clicks)
    assert len(resumes(plain)) == 1  # S10
    assert plain.chat.status == "idle" and plain.session.tracker.pending is None


async def test_a_hundred_rapid_cancels_and_forms_make_exactly_one_resume(plain: Harness):
    default, interrupt_id = await interrupted(plain, "choice")
    Default = plain.cls.default_config
    clicks = [Default.submit_form.fn(default, {"__interrupt_id": interrupt_id, "color": "red"}) for _ in range(50)]
    clicks += [Default.cancel.fn(default, interrupt_id) for _ in range(50)]
    await asyncio.gather(*clicks)
    assert len(resumes(plain)) == 1


async def test_edited_arguments_past_the_integer_digit_limit_get_a_card_error(plain: Harness):
    default, interrupt_id = await interrupted(plain)
    form = {"__interrupt_id": interrupt_id, "edited_args": '{"n": ' + "9" * 5000 + "}"}
    await plain.cls.default_config.approve_edited.fn(default, form)
    assert "not valid JSON: too large or too deeply nested" in card_error(default, interrupt_id)
    assert resumes(plain) == []


def test_item15_a_pickled_session_holds_no_header_and_no_url_credentials():
    client = AgentClient("http://agent-user:url-PASSWORD-77@127.0.0.1:9/run?token=query-TOKEN-88",
                         headers={"Authorization": f"Bearer {TOKEN}"})
    session = AgentSession(client)
    blob = pickle.dumps(session)
    for secret in (TOKEN, "url-PASSWORD-77", "query-TOKEN-88", "agent-user"):
        assert secret.encode() not in blob, secret
    restored = pickle.loads(blob)
    assert restored.client is None and restored.thread_id == session.thread_id


class BearerGate:
    """ASGI: the demo agent behind a bearer token; records what authorization it was given."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token, self.seen = app, token, []

    async def __call__(self, scope, receive, send) -> None:
        auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
        self.seen.append(auth)
        if scope["type"] == "http" and auth != f"Bearer {self.token}":
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
            return
        await self.app(scope, receive, send)


async def test_secrets_credential_flow_with_a_bearer_token_agent_leaves_no_trace(monkeypatch, tmp_path, caplog):
    """Scan everything a credential flow writes: every state's pickle and vars, the thread database's
    file, every log line. Neither the bearer token nor the masked answer may appear (S23)."""
    caplog.set_level(logging.DEBUG)
    store_file = tmp_path / "threads.db"
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"sqlite:///{store_file}")
    agent = create_app(delay=0.0)
    gate = BearerGate(agent, TOKEN)
    with serve_in_thread(gate) as base:
        url = base + "/"
        locked_out = Harness(new_chat_state("unit-test-bearer-missing", agent_url=url, configs=[]), agent.state.store)
        await locked_out.send("hello")
        assert locked_out.chat.error == "the agent answered HTTP 401 Unauthorized: missing or wrong bearer token"

        made: list[str] = []

        async def bearer(chat) -> dict[str, str]:  # an app would read its auth state here
            made.append(chat.thread_id)
            return {"Authorization": f"Bearer {TOKEN}"}

        chat_cls = new_chat_state("unit-test-bearer", agent_url=url, configs=[], headers=bearer)
        h = Harness(chat_cls, agent.state.store)
        h.root.rx_router_session = SessionData(client_token="tab-bearer", client_ip="", session_id="s1")
        await h.send("credential")
        default = await h.config()
        await chat_cls.default_config.submit_form.fn(default, {"__interrupt_id": h.ids()[0], "api_key": SECRET})
        assert h.chat.error == "" and h.session.tracker.pending is None
        assert gate.seen[-2:] == [f"Bearer {TOKEN}"] * 2  # the agent got the token with both requests
        assert made == [h.chat.thread_id] * 2  # made on the server for each run

    for secret in (SECRET, TOKEN):
        assert_secret_nowhere(h, secret)
        assert secret.encode() not in pickle.dumps(h.chat._sessions)
        for path in tmp_path.iterdir():  # the SQLite file and its write-ahead log
            assert secret.encode() not in path.read_bytes(), path.name
            assert b"\x80\x04\x95" not in path.read_bytes() and b"\x80\x05\x95" not in path.read_bytes()  # no pickle
        assert secret not in caplog.text
        assert secret not in chat_cls.get_full_name()
    assert store_file.exists()
