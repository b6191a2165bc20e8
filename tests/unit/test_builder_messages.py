"""Issue 39 §2/§3: what an app builder and the people of an app are told (cards, errors, declarations, links, logs)."""

from __future__ import annotations

import importlib
import logging
import re
import socket
import subprocess
from collections.abc import Iterator
from datetime import UTC

import pytest
import reflex as rx
from starlette.applications import Starlette
from starlette.routing import Route

import interrupt_chat as ic
from interrupt_chat.agui import AgentClient, AgentSession
from interrupt_chat.approvals import decide, headless, links, missing_pages, notifier
from interrupt_chat.approvals.decide import DecideState
from interrupt_chat.components.chat import chat_state
from interrupt_chat.model.cards import build_cards
from interrupt_chat.model.views import people_error
from interrupt_chat.store.threads_db import ThreadDB, default_db_url
from interrupt_chat.tab.endpoint import set_default_agent_url
from tests.unit.agents import RawServer, ScriptedAgent, free_port, serve_in_thread, sse
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab
from tests.unit.test_notifier import SECRET, Receiver, until
from tests.unit.test_session import approval_run, drain

# -- a failed approve offers its card again without a "resolved" badge (S15) -------------------------------

@pytest.mark.loopback
async def test_a_failed_approve_offers_the_card_again_without_its_badge(loopback):
    session = AgentSession(AgentClient(loopback.mount(ScriptedAgent(approval_run))), thread_id="t1")
    await drain(session.send("go"))
    decision = session.tracker.resolve({"approved": True})
    assert [c.answered for c in build_cards(session.tracker.pending, session.tracker, None)] == ["resolved"]
    session.client = AgentClient(f"http://127.0.0.1:{free_port()}/", connect_timeout=2)  # the agent is down
    await drain(session.submit(decision))
    assert "cannot reach the agent" in (session.error or "")
    cards = build_cards(session.tracker.pending, session.tracker, session.transcript)
    assert [c.id for c in cards] == ["int-call_1"]
    assert [c.answered for c in cards] == [""]  # offered again as new: no "resolved" badge


# -- an agent that crashes mid-answer: people get a sentence, the log the detail -----------------------------

CUT_BODY = sse({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
               {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
               {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Half an ans"})


def _cut_short(conn: socket.socket) -> None:
    """Content-Length promises more than is sent, then the agent process dies (the socket closes)."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                 + f"Content-Length: {len(CUT_BODY) + 5000}\r\n\r\n".encode() + CUT_BODY)
    conn.shutdown(socket.SHUT_RDWR)


@pytest.mark.loopback
async def test_an_agent_crash_mid_answer_reads_as_a_sentence(caplog):
    caplog.set_level(logging.WARNING)
    with RawServer(_cut_short) as server:
        session = AgentSession(AgentClient(server.url), thread_id="t1")
        await drain(session.send("go"))
    assert session.error  # the session keeps the detail (and the log has it)
    shown = people_error(session.error)
    assert shown == "The assistant stopped before finishing its answer. Try again in a moment."
    for internal in ("400", "message:", "transfer length", "Content-Length", "dropped"):
        assert internal not in shown
    assert "Not enough data" in caplog.text or "transfer length" in caplog.text.lower()


# -- declaration mistakes are said in the builder's terms --------------------------------------------------

class BuilderApprovals(ic.InterruptState):
    """A configuration for the declaration tests (never declared with a chat: each test's call is refused)."""


class BuilderTool(ic.FrontendToolState):
    tool_name = "builder_tool"


def builder_slot(slot: ic.SlotProps) -> rx.Component:
    return rx.fragment()


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"interrupts": [BuilderApprovals]}, "interrupts[0] must be a (InterruptState subclass, render_fn) pair"),
    ({"interrupts": [(builder_slot, BuilderApprovals)]}, "the pair is swapped"),
    ({"interrupts": (BuilderApprovals, builder_slot)}, "interrupts[0] must be a (InterruptState subclass"),
    ({"interrupts": [(dict, builder_slot)]}, "interrupts[0][0] must be a subclass of ic.InterruptState"),
    ({"interrupts": [(BuilderApprovals, "slot")]}, "interrupts[0][1] must be a render function"),
    ({"tools": BuilderTool}, "tools must be a list of ic.FrontendToolState subclasses"),
    ({"tools": [builder_slot]}, "tools[0] must be a subclass of ic.FrontendToolState"),
    ({"headers": "Bearer x"}, "headers must be a mapping"),
    ({"headers": {"X-Count": 3}}, "headers must map strings to strings"),
    ({"owner": "alice"}, "owner must be a function"),
    ({"notify": "https://hooks.example/"}, "notify must be a function"),
    ({"on_feedback": 1}, "on_feedback must be a function"),
    ({"remember": "delete_files"}, "remember must be a collection of tool names"),
    ({"tool_renderers": [builder_slot]}, "tool_renderers must be a mapping"),
    ({"attachments": {"max_files": 2}}, "attachments must be an ic.Attachments"),
    ({"decide_requires_owner": "yes"}, "decide_requires_owner must be True or False"),
    ({"name": 7}, "name must be a non-empty string"),
])
def test_a_declaration_mistake_says_what_was_expected(kwargs, said):
    with pytest.raises(TypeError) as info:
        ic.Chat(agent_url="http://127.0.0.1:9/builder/", **{"name": "builder-mistakes", **kwargs})
    assert said in str(info.value)
    assert "ConcreteSubclasses" not in str(info.value) and "get_full_name" not in str(info.value)
    assert BuilderApprovals._chat_state is None  # refused before anything was attached


@pytest.mark.parametrize("url", ["127.0.0.1:8424", "localhost:8424/agent", "ftp://agent.example/", "http:///x",
                                 "/agent/"])
def test_an_agent_url_without_its_scheme_is_refused_at_declaration(url):
    with pytest.raises(ValueError, match="agent_url must be an absolute http:// or https:// URL") as info:
        ic.Chat(agent_url=url, name="builder-url")
    if "://" not in url:
        assert "did you mean 'http://" in str(info.value)
    with pytest.raises(ValueError, match="agent_url must be"):
        chat_state(agent_url=url, name="builder-url")


def test_a_registered_default_may_be_a_path_of_this_backend_but_not_a_bare_host():
    set_default_agent_url("/demo-agent/")
    try:
        with pytest.raises(ValueError, match=re.escape("did you mean 'http://127.0.0.1:8424'")):
            set_default_agent_url("127.0.0.1:8424")
    finally:
        set_default_agent_url(None)


# -- the log line of an agent's 404 names the URL, without its secrets ---------------------------------------

@pytest.mark.loopback
async def test_the_log_of_an_agents_404_names_its_url_without_secrets(loopback, caplog):
    caplog.set_level(logging.WARNING, logger="interrupt_chat")
    base = loopback.base_url.replace("http://", "http://robot:hunter2@")
    session = AgentSession(AgentClient(f"{base}/no-such-agent?key=sk-42"), thread_id="t1")
    await drain(session.send("go"))
    assert "404" in (session.error or "")
    line = next(r.getMessage() for r in caplog.records if "failed" in r.getMessage())
    assert f"{loopback.base_url}/no-such-agent" in line  # which agent answered 404
    assert "hunter2" not in line and "sk-42" not in line and "robot" not in line


# -- the decided webhook names what was decided; a reused decision link says it was answered before -------

@pytest.fixture
def receiver(monkeypatch) -> Iterator[Receiver]:
    """A webhook endpoint on loopback (test_notifier's), the chat's webhook for the test."""
    hook = Receiver()
    with serve_in_thread(Starlette(routes=[Route("/hook", hook.__call__, methods=["POST"])])) as base:
        monkeypatch.setenv(notifier.WEBHOOK_URL_ENV, f"{base}/hook")
        monkeypatch.setenv(notifier.WEBHOOK_SECRET_ENV, SECRET)
        yield hook


@pytest.mark.loopback
async def test_the_decided_event_names_the_tool_call_and_message(receiver: Receiver, agent):
    url, store = agent
    chat = ic.Chat(url, name="builder-decided")
    tab = await Tab(chat.state, store).load()
    await tab.send("approval")
    await until(lambda: any(e["event"] == "pending" for e in receiver.events()))
    [pending] = [e for e in receiver.events() if e["event"] == "pending"]
    assert pending["tool"] == "delete_files" and pending["tool_call_id"] and pending["message"]
    await tab.resolve({"approved": True}, pending["interrupt_id"])
    await until(lambda: any(e["event"] == "decided" for e in receiver.events()))
    [decided] = [e for e in receiver.events() if e["event"] == "decided"]
    assert decided["interrupt_id"] == pending["interrupt_id"]
    assert (decided["tool"], decided["tool_call_id"], decided["message"]) == (
        pending["tool"], pending["tool_call_id"], pending["message"])


async def _decision(database, owner: str, thread_id: str, interrupt_id: str):
    """The audit entry of one interrupt, once it is written (after the lock)."""
    def entries():
        return [d for d in database.decisions(owner, thread_id) if d.interrupt_id == interrupt_id]
    await until(lambda: bool(entries()))
    [entry] = entries()
    return entry


@pytest.mark.loopback
async def test_a_reused_decision_link_says_it_was_answered_before_when_and_how(agent, database):
    url, store = agent
    chat = ic.Chat(url, name="builder-link")
    for by in ("person", "link"):
        tab = await Tab(chat.state, store).load()
        await tab.cls.new_thread.fn(tab.chat)
        await tab.send("approval")
        [interrupt_id] = tab.ids()
        await links.ready()
        token = links.url_for(tab.chat._owner_key, tab.session, interrupt_id).rsplit("/", 1)[-1]
        page = rx.State().get_substate(DecideState.get_full_name().split("."))
        assert (await decide._find(page, token)).again == ""  # open: nothing was answered yet
        if by == "person":
            await tab.resolve({"approved": False}, interrupt_id)
        else:
            link = links.parse(token)
            assert link is not None
            answered = await headless.answer(chat.state, tab.chat._owner_key, tab.chat.thread_id, "resolve",
                                             {"approved": True}, interrupt_id, link.run_id, "link")
            assert answered.recorded
        entry = await _decision(database, tab.chat._owner_key, tab.chat.thread_id, interrupt_id)
        found = await decide._find(page, token)
        assert found.phase == "done"
        when = f"{entry.at.astimezone(UTC):%Y-%m-%d at %H:%M} UTC"
        assert found.again == ("This request was already answered: rejected on " + when + " in the app."
                               if by == "person" else
                               "This request was already answered: approved on " + when + " through a decision link.")
    assert decide.already("resolved", None, "bulk") == \
        "This request was already answered: approved in a bulk decision from the inbox."


# -- forgotten pages: decision links without /decide, rules without /policies, said once -------------------

def test_the_routes_are_the_apps_own():
    """What the check reads: the running app's pages (here the demo site's, which has both)."""
    importlib.import_module("interrupt_chat.interrupt_chat")  # the app module of rxconfig.py, as a server has it
    routes = missing_pages._routes()
    assert "decide/[token]" in routes and "policies" in routes


@pytest.mark.loopback
async def test_a_forgotten_decide_or_policies_page_is_said_once_in_the_log(agent, monkeypatch, caplog):
    url, store = agent
    caplog.set_level(logging.WARNING, logger="interrupt_chat.approvals.missing_pages")
    monkeypatch.setattr(missing_pages, "_checked", set())
    monkeypatch.setattr(missing_pages, "_warned", set())
    monkeypatch.setattr(missing_pages, "_policy_lists", [False])
    bare = ["index", "inbox"]  # as Reflex keeps an app's routes (app._unevaluated_pages)
    monkeypatch.setattr(missing_pages, "_routes", lambda: bare)
    chat = ic.Chat(url, notify=lambda notification: None, name="builder-forgotten")
    tab = await Tab(chat.state, store).load()
    await tab.send("hello")
    await tab.send("again")
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2, warned
    assert "no such page" in warned[0] and "ic.decide_page" in warned[0] and '"/decide/[token]"' in warned[0]
    assert "no /policies page" in warned[1] and "'builder-forgotten'" in warned[1] and "remember=()" in warned[1]

    caplog.clear()
    monkeypatch.setattr(missing_pages, "_routes", lambda: ["index", "policies", "decide/[token]"])
    quiet = ic.Chat(url, notify=lambda notification: None, name="builder-complete")
    await (await Tab(quiet.state, store).load()).send("hello")
    no_rules = ic.Chat(url, remember=(), name="builder-no-rules")  # no links, no rules: nothing to point at
    monkeypatch.setattr(missing_pages, "_routes", lambda: bare)
    await (await Tab(no_rules.state, store).load()).send("hello")
    assert [r.getMessage() for r in caplog.records] == []


# -- a misspelled interrupt reason in a slot's enabled is refused where it is written ------------------------

class ToolCallsOnly(ic.InterruptState):
    """A slot taking tool approvals only, declared with the helper."""

    enabled = ic.for_reasons("tool_call")


def test_a_misspelled_reason_is_refused_when_the_class_is_defined():
    with pytest.raises(ValueError, match=re.escape("unknown interrupt reason 'tool_cal' (did you mean 'tool_call'?)")):
        class Typo(ic.InterruptState):
            enabled = ic.for_reasons("tool_cal")
    with pytest.raises(ValueError, match="at least one reason"):
        ic.for_reasons()
    ic.for_reasons("input_required", "confirmation", "langgraph:human")  # standard, or a producer's own


@pytest.mark.loopback
async def test_for_reasons_takes_the_sets_of_its_reasons_and_leaves_the_rest_to_the_default_slot(agent):
    url, store = agent
    chat = ic.Chat(url, interrupts=[(ToolCallsOnly, builder_slot)], name="builder-reasons")
    tab = await Tab(chat.state, store).load()
    await tab.send("approval")  # reason tool_call: the helper's slot takes it
    assert (await tab.chat.get_state(ToolCallsOnly)).active
    await tab.cls.new_thread.fn(tab.chat)
    await tab.send("choice")  # reason input_required: the default slot
    assert not (await tab.chat.get_state(ToolCallsOnly)).active
    assert (await tab.config()).active


# -- the default database folder keeps its files out of the app's repository -------------------------------

def test_the_default_database_folder_ignores_its_files_in_git(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INTERRUPT_CHAT_DB_URL", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("*.db\n*.py[cod]\n.web\n.states\n")  # `reflex init`'s template
    database = ThreadDB(default_db_url())
    database.overwrite("alice", AgentSession("http://127.0.0.1:9/", thread_id="t1"))
    folder = tmp_path / ".interrupt_chat"
    assert {p.name for p in folder.iterdir()} >= {"threads.db", ".gitignore"}
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    for name in ("threads.db-wal", "threads.db-shm"):
        (folder / name).touch()  # SQLite's own files beside the database (WAL journaling)
    shown = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, check=True,
                           capture_output=True, text=True).stdout
    database.close()
    assert ".interrupt_chat" not in shown, shown
    assert ".gitignore" in shown  # the app's own: the check saw the repository
