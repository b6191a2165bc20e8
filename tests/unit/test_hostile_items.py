"""The defects found by the hostile-producer review, one test each, named after its item (1–9).

Each runs a real session against a loopback agent: the hostile reply, then a good run on the same
session, which must work. The wider corpus is ``test_hostile_agent.py``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.responses import RedirectResponse, Response

from interrupt_chat.agui import AgentClient, AgentSession
from tests.unit.agents import (
    ScriptedAgent,
    echo_run,
    finished,
    free_port,
    run_error,
    sse,
    started,
    text,
)

pytestmark = pytest.mark.loopback


def nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"d": value}
    return value


async def run(session: AgentSession, text_: str) -> None:
    async for _ in session.send(text_):
        pass


async def assert_next_run_works(session: AgentSession, agent: ScriptedAgent) -> None:
    await run(session, "next")
    assert session.error is None, session.error
    assert session.transcript.messages[-1].content == "ok"
    json.dumps(agent.bodies[-1]).encode("utf-8")  # the request the agent got is plain UTF-8 JSON


def reply(*events: Any) -> Any:
    return lambda body: [started(body["runId"], body["threadId"]), *events, finished(body["runId"], body["threadId"])]


def short_plain(error: str | None) -> str:
    assert error and len(error) <= 300 and "\n" not in error, error
    return error


@pytest.fixture
def agent_session(loopback) -> Iterator[tuple[ScriptedAgent, AgentSession]]:
    agent = ScriptedAgent()
    yield agent, AgentSession(loopback.mount(agent))


@pytest.mark.parametrize("levels", [300, 600, 100_000])
async def test_item01_deep_nesting_fails_one_run_and_never_poisons_the_session(agent_session, levels):
    agent, session = agent_session
    deep = "{" + '"d":{' * levels + "}" * levels + "}" if levels > 1000 else json.dumps(nested(levels))
    agent.then(lambda body: sse(started(body["runId"], body["threadId"]))
               + f'data: {{"type":"STATE_SNAPSHOT","snapshot":{deep}}}\n\n'.encode()
               + sse({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/x", "value": 1}]},
                     finished(body["runId"], body["threadId"])))
    await run(session, "deep")
    assert "nested deeper than 100 levels" in short_plain(session.error)
    assert session.transcript.status == "error" and not session.running
    await assert_next_run_works(session, agent)


async def test_item01_a_state_delta_that_nests_the_state_too_deep_is_not_applied(agent_session):
    agent, session = agent_session
    base = {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": nested(95)}]}  # 96 levels: fine
    deeper = {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a" + "/d" * 90 + "/e", "value": nested(20)}]}
    agent.then(reply({"type": "STATE_SNAPSHOT", "snapshot": {}}, base, deeper))  # each event is shallow enough
    await run(session, "grow")
    assert session.error is None and session.transcript.state == {"a": nested(95)}  # the deeper patch is refused
    await assert_next_run_works(session, agent)


async def test_item02_split_and_lone_surrogates_never_poison_the_thread(agent_session):
    agent, session = agent_session
    halves = 'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi \\ud83d"}\n\n' \
             'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ude00 \\ud800!"}\n\n'
    agent.then(lambda body: sse(started(body["runId"], body["threadId"]),
                                {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
               + halves.encode() + sse({"type": "TEXT_MESSAGE_END", "messageId": "m"},
                                       finished(body["runId"], body["threadId"])))
    await run(session, "emoji")
    assert session.error is None
    assert session.transcript.message("m").content == "hi 😀 \ufffd!"
    await assert_next_run_works(session, agent)


@pytest.mark.parametrize(("status", "content_type", "expected"), [
    (500, "text/html", "the agent answered HTTP 500 Internal Server Error: an HTML page"),
    (502, "text/plain", "the agent answered HTTP 502 Bad Gateway: an HTML page"),  # markup, whatever the type
    (200, "text/html; charset=utf-8",
     "the agent did not answer with an event stream (content-type 'text/html; charset=utf-8'): an HTML page"),
])
async def test_item03_html_error_pages_are_not_dumped_into_the_error(agent_session, status, content_type, expected):
    agent, session = agent_session
    page = ("<html><head><title>nginx</title><script>alert(1)</script></head><body><h1>Error</h1>"
            "<pre>Traceback (most recent call last): secret internals</pre></body></html>")
    agent.then(Response(page, status_code=status, media_type=content_type))
    await run(session, "page")
    assert short_plain(session.error) == expected
    await assert_next_run_works(session, agent)


async def test_item04_credentials_in_the_agent_url_never_appear_in_errors(caplog):
    port = free_port()
    refused = AgentSession(AgentClient(f"http://agent:pa55-w0rd-77@127.0.0.1:{port}/run?key=k3y-99", connect_timeout=2))
    await run(refused, "hello")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts, never answers: a timeout
    silent = AgentSession(AgentClient(f"http://agent:pa55-w0rd-77@127.0.0.1:{listener.getsockname()[1]}/run",
                                      read_timeout=0.3))
    try:
        await run(silent, "hello")
    finally:
        listener.close()
    assert "cannot reach the agent at http://127.0.0.1:" in short_plain(refused.error)
    assert "timed out waiting for the agent at http://127.0.0.1:" in short_plain(silent.error)
    for text_ in (refused.error, silent.error, caplog.text):
        assert "pa55-w0rd-77" not in text_ and "k3y-99" not in text_


async def test_item05_a_leading_bom_is_ignored_and_the_first_event_kept(agent_session):
    agent, session = agent_session
    agent.then(lambda body: b"\xef\xbb\xbf" + sse(*echo_run(body, "after the bom")))
    await run(session, "bom")
    assert session.error is None and session.transcript.messages[-1].content == "after the bom"
    await assert_next_run_works(session, agent)


async def test_item06_a_declared_charset_never_overrides_utf8(agent_session):
    agent, session = agent_session
    body_text = lambda body: sse(*echo_run(body, "grüße €"))  # noqa: E731
    agent.then(lambda body: Response(body_text(body), media_type="text/event-stream; charset=iso-8859-1"))
    await run(session, "charset")
    assert session.error is None and session.transcript.messages[-1].content == "grüße €"
    await assert_next_run_works(session, agent)


@pytest.mark.parametrize(("events", "expected"), [
    ([run_error("")], "the agent reported an error without a message"),
    ([run_error("x" * 1_000_000, code="HUGE")], "x" * 200),
    ([run_error("the real reason", code="QUOTA"), run_error("a second one")], "the real reason (QUOTA)"),
], ids=["empty", "one-megabyte", "second-run-error"])
async def test_item07_run_error_text_is_short_present_and_the_agents_own(agent_session, events, expected):
    agent, session = agent_session
    agent.then(lambda body: [started(body["runId"], body["threadId"]), *text("m", "working"), *events])
    await run(session, "fail")
    assert expected in short_plain(session.error)
    await assert_next_run_works(session, agent)


async def test_item08_a_snapshot_with_duplicate_ids_keeps_one_of_each(agent_session):
    agent, session = agent_session
    snapshot = {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "u1", "role": "user", "content": "first"},
        {"id": "a1", "role": "assistant", "content": "old"},
        {"id": "a1", "role": "assistant", "content": "new"}]}
    agent.then(reply(snapshot))
    await run(session, "dups")
    ids = [m.id for m in session.transcript.messages]
    assert len(ids) == len(set(ids)) and session.transcript.message("a1").content == "new"
    await assert_next_run_works(session, agent)
    sent = [m["id"] for m in agent.bodies[-1]["messages"]]
    assert len(sent) == len(set(sent)) and sent.count("a1") == 1


@pytest.mark.parametrize("status", [307, 308])
async def test_item09_a_same_origin_redirect_is_followed(loopback, status):
    agent = ScriptedAgent()
    target = loopback.mount(agent)
    moved = ScriptedAgent(RedirectResponse(target, status_code=status))
    session = AgentSession(loopback.mount(moved))
    await run(session, "moved")
    assert session.error is None and session.transcript.messages[-1].content == "ok"
    assert agent.bodies[0]["messages"][-1]["content"] == "moved"  # the POST body went along


@pytest.mark.parametrize(("status", "location"), [
    (302, "/elsewhere"), (307, "http://user:pw-SECRET@127.0.0.2:1/x?token=t0k3n"), (308, None)])
async def test_item09_other_redirects_are_explained(loopback, status, location):
    headers = {"location": location} if location else {}
    agent = ScriptedAgent(Response(b"", status_code=status, headers=headers))
    session = AgentSession(loopback.mount(agent))
    await run(session, "moved")
    error = short_plain(session.error)
    assert error.startswith(f"the agent answered HTTP {status}") and "redirect" in error
    assert "content-type" not in error and "pw-SECRET" not in error and "t0k3n" not in error
    await assert_next_run_works(session, agent)

