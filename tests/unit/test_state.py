"""The Reflex states (``ChatState`` / ``InterruptState``) without a browser, against the real demo agent.

States are instantiated directly under pytest (``rx.State()`` builds the
whole tree), background handlers run through ``Handler.fn(state, ...)`` (``async with self`` is a
no-op there) and cross-state access goes through ``get_state``. The agent is
``interrupt_chat.demo.agent`` on a loopback uvicorn server; its store records every request it
received, which is how "what was sent" is checked. A run costs no extra wait: ``routing.tick_expiry`` returns at
once unless an active card has an expiry, and only then counts down once a second.

A run never streams into the view of another thread (S25), and unmasked answers survive a state
round trip (S7) while masked ones never reach a pickle (S23).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import pickle
import socket
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
import reflex as rx
from starlette.applications import Starlette
from starlette.routing import Mount

from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState, InterruptState
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.model.views import UNREACHABLE_MESSAGE
from interrupt_chat.tab import identity
from interrupt_chat.tab.live import live_of
from tests.unit.agents import serve_in_thread
from tests.unit.page import Page

PAGE = Page()

pytestmark = pytest.mark.loopback

SECRET = "sk-live-TOPSECRET-8d1f2e3a4b"

# handler calls, by configuration class name: (props,) per call
CALLS: dict[str, list[dict[str, Any]]] = defaultdict(list)


# -- configurations (one class per configuration and chat: a config belongs to one chat) ------------

def _value(event: dict[str, Any]) -> Any:
    return event.get("value")


def _reason(event: dict[str, Any]) -> Any:
    value = _value(event)
    return value.get("reason") if isinstance(value, dict) else None


class Never(InterruptState):
    """S16: takes nothing."""

    def enabled(self, event: dict[str, Any]) -> bool:
        return False

    def handler(self, props: dict[str, Any]) -> Any:
        CALLS["Never"].append(props)
        return "never"


class Broken(InterruptState):
    """S16: enabled raises."""

    def enabled(self, event: dict[str, Any]) -> bool:
        raise ValueError("enabled exploded")


class Choice(InterruptState):
    """S17 (sync handler), S20: input_required only."""

    def enabled(self, event: dict[str, Any]) -> bool:
        return _reason(event) == "input_required"

    def handler(self, props: dict[str, Any]) -> Any:
        CALLS["Choice"].append(props)
        return {"sync": True, "ids": [i["id"] for i in props["interrupts"]]}


class Tool(InterruptState):
    """S17 (async handler), S20: tool_call only."""

    def enabled(self, event: dict[str, Any]) -> bool:
        return _reason(event) == "tool_call"

    async def handler(self, props: dict[str, Any]) -> Any:
        CALLS["Tool"].append(props)
        await asyncio.sleep(0)
        return {"async": True, "count": len(props["interrupts"])}


class Anything(InterruptState):
    """S17 (raising handler), S20: every object value (so never a plain string)."""

    def enabled(self, event: dict[str, Any]) -> bool:
        return isinstance(_value(event), dict)

    async def handler(self, props: dict[str, Any]) -> Any:
        CALLS["Anything"].append(props)
        raise RuntimeError("handler exploded")


class Manual(InterruptState):
    """S18: the /manual example (render_in_chat False, async handler)."""

    render_in_chat: bool = False

    def enabled(self, event: dict[str, Any]) -> bool:
        value = _value(event)
        return isinstance(value, str) and value.startswith("approval:")

    async def handler(self, props: dict[str, Any]) -> Any:
        CALLS["Manual"].append(props)
        return {"label": str(props["event"]["value"]).upper()}


class Vault(InterruptState):
    """S23 through a custom configuration: takes the credential request."""

    def enabled(self, event: dict[str, Any]) -> bool:
        value = _value(event)
        return isinstance(value, dict) and value.get("message") == "Enter your API key"


# -- the agent and the chats --------------------------------------------------------------------------

@dataclasses.dataclass
class Agents:
    url: str
    store: DemoStore
    expired_url: str  # a demo agent whose ``expiring`` interrupt has already expired when raised
    expired_store: DemoStore
    slow_url: str  # a demo agent that paces its deltas (the ``long`` scenario runs for seconds)
    slow_store: DemoStore


@pytest.fixture(scope="module")
def agents() -> Iterator[Agents]:
    main, expired, slow = create_app(delay=0.0), create_app(delay=0.0, expires_in=0.0), create_app(delay=0.005)
    router = Starlette(routes=[Mount("/main", app=main), Mount("/expired", app=expired), Mount("/slow", app=slow)])
    with serve_in_thread(router) as base:
        yield Agents(f"{base}/main/", main.state.store, f"{base}/expired/", expired.state.store,
                     f"{base}/slow/", slow.state.store)


@pytest.fixture(scope="module")
def chats(agents: Agents) -> dict[str, type[ChatState]]:
    made = {
        "plain": new_chat_state("unit-test-plain", agent_url=agents.url, configs=[]),
        "never": new_chat_state("unit-test-never", agent_url=agents.url, configs=[Never]),
        "broken": new_chat_state("unit-test-broken", agent_url=agents.url, configs=[Broken]),
        "routing": new_chat_state("unit-test-routing", agent_url=agents.url, configs=[Choice, Tool, Anything]),
        "manual": new_chat_state("unit-test-manual", agent_url=agents.url, configs=[Manual]),
        "vault": new_chat_state("unit-test-vault", agent_url=agents.url, configs=[Vault]),
        "expired": new_chat_state("unit-test-expired", agent_url=agents.expired_url, configs=[]),
        "slow": new_chat_state("unit-test-slow", agent_url=agents.slow_url, configs=[]),
    }
    for chat_cls in made.values():
        assert chat_cls.agent_url in (agents.url, agents.expired_url, agents.slow_url)
    return made


@pytest.fixture(autouse=True)
def _forget_calls():
    CALLS.clear()
    yield
    CALLS.clear()


@pytest.fixture(autouse=True)
def page() -> Iterator[Page]:
    """The tab: every test's handlers run as its events, so streamed chunks reach it."""
    global PAGE
    PAGE = Page()
    with PAGE.attached():
        yield PAGE


class Harness:
    """One browser tab's worth of state: a fresh root with every substate."""

    def __init__(self, chat_cls: type[ChatState], store: DemoStore) -> None:
        self.cls = chat_cls
        self.store = store
        self.root = rx.State()
        self.chat: ChatState = self.root.get_substate(chat_cls.get_full_name().split("."))

    async def config(self, config_cls: type[InterruptState] | None = None) -> InterruptState:
        return await self.chat.get_state(config_cls or self.cls.default_config)

    async def send(self, text: str) -> None:
        await self.cls.send.fn(self.chat, {"text": text})

    async def route(self) -> None:
        await self.cls.route_interrupts.fn(self.chat)

    @property
    def session(self):
        return self.chat._sessions[self.chat.thread_id]

    def records(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        return self.store.records(thread_id or self.chat.thread_id)

    def ids(self) -> list[str]:
        pending = self.session.tracker.pending
        return pending.ids if pending else []

    def states(self) -> list[rx.State]:
        out, todo = [], [self.root]
        while todo:
            state = todo.pop()
            out.append(state)
            todo.extend(state.substates.values())
        return out


@pytest.fixture
def plain(chats, agents) -> Harness:
    return Harness(chats["plain"], agents.store)


def harness(chats, agents, name: str) -> Harness:
    store = {"expired": agents.expired_store, "slow": agents.slow_store}.get(name, agents.store)
    return Harness(chats[name], store)


async def start_long_run(h: Harness) -> asyncio.Task:
    """Send ``long`` in the background and wait until its answer is streaming into the chat."""
    task = asyncio.create_task(h.send("long"))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if h.chat.status == "running" and any(row.role == "assistant" and row.content for row in conversation(h.chat)):
            return task
    task.cancel()
    raise AssertionError("the long run did not start streaming")


def conversation(chat: ChatState) -> list:
    """Every row the chat draws: the history, then the current turn, with the texts the page shows."""
    return [*(PAGE.show(row) for row in [*PAGE.history(chat), *live_of(chat).live])]


def roles(h: Harness) -> list[str]:
    """The ``data-role`` of every drawn message in page order (a tool result drawn in its call's card counts)."""
    return [role for m in conversation(h.chat) for role in [m.role, *("tool" for c in m.tool_calls if c.result_id)]]


# -- sending ------------------------------------------------------------------------------------------

async def test_send_runs_the_agent_and_publishes_messages_and_status(plain: Harness):
    await plain.send("  hello there  ")
    chat = plain.chat
    assert roles(plain) == ["user", "assistant"]
    assert conversation(chat)[0].content == "hello there"
    assert conversation(chat)[1].content.startswith("## Hello from the demo agent")
    assert "You said: hello there" in conversation(chat)[1].content
    assert not any(m.streaming for m in conversation(chat))
    assert PAGE.history(chat) == [] and len(live_of(chat).live) == 2  # the turn stays in ``live`` until the next one
    assert (chat.status, chat.error, chat.locked, chat.notice, chat.step) == ("idle", "", False, "", "")
    assert chat.threads == [{"id": chat.thread_id, "title": "hello there", "updated": "", "pending": "false",
                             "current": "true"}]
    [record] = plain.records()
    assert [m["role"] for m in record["messages"]] == ["user"] and record["messages"][0]["content"] == "hello there"
    assert "resume" not in record
    default = await plain.config()
    assert (default.active, default.slot_props, default.cards) == (False, None, [])


async def test_send_ignores_blank_text(plain: Harness):
    await plain.send("   ")
    assert PAGE.history(plain.chat) == [] and plain.chat.thread_id == ""


async def test_tool_call_rows(plain: Harness):
    await plain.send("tools")
    assert roles(plain) == ["user", "assistant", "tool", "assistant"]
    [call] = conversation(plain.chat)[1].tool_calls
    assert (call.name, call.status) == ("get_weather", "complete")
    assert json.loads(call.args) == {"city": "Paris"}
    assert json.loads(call.result)["forecast"] == "sunny"


@pytest.mark.parametrize(("answer", "rejected"), [({"approved": False}, True), (None, True),
                                                  ({"approved": True}, False)], ids=["denied", "cancelled", "approved"])
async def test_a_denied_tool_call_is_shown_rejected_not_complete(plain: Harness, answer, rejected):
    await plain.send("approval")
    default = await plain.config()
    Default = plain.cls.default_config
    if answer is None:
        await Default.cancel.fn(default, plain.ids()[0])
    else:
        await Default.resolve.fn(default, answer, plain.ids()[0])
    [call] = [c for row in conversation(plain.chat) for c in row.tool_calls]
    assert call.rejected is rejected and call.status == "complete"
    assert "tool" in roles(plain)  # its result is the tool row; the card does not repeat it


async def test_s05_failed_run_shows_the_error_and_unlocks(plain: Harness):
    await plain.send("error")
    chat, default = plain.chat, await plain.config()
    assert chat.status == "error" and "Simulated failure" in chat.error
    assert chat.locked is False and default.active is False and default.slot_props is None


async def test_stop_ends_a_streaming_run(chats, agents):
    h = harness(chats, agents, "slow")
    task = await start_long_run(h)
    await h.send("hello")  # one run at a time
    assert h.chat.notice == "Wait for the current answer, or stop it." and len(h.records()) == 1
    await h.chat.stop()
    await asyncio.wait_for(task, 10)
    assert h.chat.status == "idle" and h.chat.error == ""
    assert roles(h) == ["user", "assistant"] and not conversation(h.chat)[1].streaming
    assert 0 < len(conversation(h.chat)[1].content) < 2000 * 3


# -- S19 shapes, S21 lock ---------------------------------------------------------------------------

async def test_s19_standard_shapes_on_the_default_slot(plain: Harness):
    await plain.send("multi")
    default = await plain.config()
    interrupts = default.interrupts
    assert [i["id"] for i in interrupts] == plain.ids() and len(interrupts) == 3
    assert [i["reason"] for i in interrupts] == ["tool_call", "input_required", "confirmation"]
    assert "toolCallId" in interrupts[0] and "responseSchema" in interrupts[0]  # wire (camelCase) dicts
    assert default.event == {"name": "on_interrupt", "value": interrupts[0]}
    assert default.interrupt == interrupts[0]
    assert default.slot_props == {"event": default.event, "interrupt": interrupts[0], "interrupts": interrupts,
                                  "result": None}
    assert default.active is True and default.has_interrupt is True
    assert [c.id for c in default.cards] == plain.ids()
    assert [c.kind for c in default.cards] == ["edit", "form", "approve"]
    assert plain.chat.status == "interrupted"
    [call] = conversation(plain.chat)[1].tool_calls
    assert call.status == "awaiting_approval"


@pytest.mark.parametrize(("scenario", "value"), [
    ("legacy-string", "approval: publish the draft?"),
    ("question", {"question": "Ship it?"}),
])
async def test_s19_legacy_shapes(plain: Harness, scenario: str, value: Any):
    await plain.send(scenario)
    default = await plain.config()
    assert default.event == {"name": "on_interrupt", "value": value}
    assert default.interrupt is None and default.interrupts == []
    assert default.slot_props == {"event": default.event, "interrupt": None, "interrupts": [], "result": None}
    assert default.has_interrupt is True
    [card] = default.cards
    assert card.id == "" and card.prompt == (value if isinstance(value, str) else value["question"])


async def test_s19_legacy_json_value_is_parsed(plain: Harness):
    await plain.send("legacy")
    value = (await plain.config()).event["value"]
    assert value["message"] == "Send the weekly report?" and value["responseSchema"]["required"] == ["approved"]


async def test_s21_locked_while_pending_and_send_does_not_reach_the_agent(plain: Harness):
    await plain.send("approval")
    assert plain.chat.locked is True and len(plain.records()) == 1
    await plain.send("hello, are you there?")
    await plain.cls.send_text.fn(plain.chat, "choice")
    assert len(plain.records()) == 1  # nothing reached the agent
    assert plain.chat.notice == "Answer or cancel the agent's request first."
    assert roles(plain) == ["user", "assistant"]
    default = await plain.config()
    await plain.cls.default_config.cancel.fn(default, plain.ids()[0])
    assert plain.chat.locked is False and plain.chat.status == "idle"
    await plain.send("hello again")
    assert len(plain.records()) == 3


# -- resolve / cancel flows (exact resume lists as the agent recorded them) ---------------------------

async def test_s12_approve_sends_the_exact_resume(plain: Harness):
    await plain.send("approval")
    default = await plain.config()
    [interrupt_id] = plain.ids()
    first_run = plain.records()[0]["runId"]
    await plain.cls.default_config.resolve.fn(default, {"approved": True}, interrupt_id)
    records = plain.records()
    assert len(records) == 2
    resume = records[1]
    assert resume["resume"] == [{"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}]
    assert resume["parentRunId"] == first_run and resume["runId"] != first_run
    assert resume["threadId"] == plain.chat.thread_id
    assistant = next(m for m in resume["messages"] if m["role"] == "assistant" and m.get("toolCalls"))
    assert assistant["toolCalls"][0]["function"]["name"] == "delete_files"
    assert default.active is False and default.slot_props is None and default.submitting is False
    assert plain.chat.locked is False and plain.chat.status == "idle"
    assert conversation(plain.chat)[-1].content == "Approved: deleted 3 files in /tmp/reports."
    assert conversation(plain.chat)[1].tool_calls[0].status == "complete"


async def test_s07_multi_resumes_once_in_array_order(plain: Harness):
    await plain.send("multi")
    default = await plain.config()
    tool_id, choice_id, confirm_id = plain.ids()
    Default = plain.cls.default_config
    await Default.submit_form.fn(default, {"__interrupt_id": choice_id, "color": "blue"})
    await Default.cancel.fn(default, confirm_id)
    assert len(plain.records()) == 1  # S7: waiting for the last one
    assert [c.answered for c in default.cards] == ["", "resolved", "cancelled"]
    assert plain.chat.locked is True and default.active is True
    await Default.resolve.fn(default, {"approved": False}, tool_id)
    records = plain.records()
    assert len(records) == 2
    assert records[1]["resume"] == [
        {"interruptId": tool_id, "status": "resolved", "payload": {"approved": False}},
        {"interruptId": choice_id, "status": "resolved", "payload": {"color": "blue"}},
        {"interruptId": confirm_id, "status": "cancelled"},
    ]
    assert conversation(plain.chat)[-1].content == "Rejected.\n\nYou picked blue.\n\nCancelled."


async def test_s10_double_click_sends_one_resume(plain: Harness):
    await plain.send("approval")
    default = await plain.config()
    [interrupt_id] = plain.ids()
    Default = plain.cls.default_config
    await asyncio.gather(Default.resolve.fn(default, {"approved": True}, interrupt_id),
                         Default.resolve.fn(default, {"approved": False}, interrupt_id),
                         Default.cancel.fn(default, interrupt_id))
    records = plain.records()
    assert len(records) == 2 and len(records[1]["resume"]) == 1


async def test_s22_edit_and_approve_sends_edited_args(plain: Harness):
    await plain.send("approval")
    default = await plain.config()
    [interrupt_id] = plain.ids()
    [card] = default.cards
    assert json.loads(card.edit_args) == {"path": "/tmp/reports", "count": 3}
    Default = plain.cls.default_config
    await Default.approve_edited.fn(default, {"__interrupt_id": interrupt_id, "edited_args": "{not json"})
    assert len(plain.records()) == 1
    assert default.cards[0].error.startswith("The edited arguments are not valid JSON")
    await Default.approve_edited.fn(default, {"__interrupt_id": interrupt_id,
                                              "edited_args": '{"path": "/tmp/old", "count": 1}'})
    records = plain.records()
    assert records[1]["resume"] == [{"interruptId": interrupt_id, "status": "resolved",
                                     "payload": {"approved": True, "editedArgs": {"path": "/tmp/old", "count": 1}}}]
    assert conversation(plain.chat)[-1].content == "Approved: deleted 1 files in /tmp/old."
    assert json.loads(conversation(plain.chat)[1].tool_calls[0].args) == {"path": "/tmp/old", "count": 1}


async def test_s22_form_validation_error_is_shown_and_nothing_is_sent(plain: Harness):
    await plain.send("choice")
    default = await plain.config()
    [interrupt_id] = plain.ids()
    await plain.cls.default_config.submit_form.fn(default, {"__interrupt_id": interrupt_id, "color": ""})
    assert default.cards[0].error == "color: color is required"
    assert len(plain.records()) == 1 and plain.chat.locked is True


async def test_s13_legacy_resolve_sends_forwarded_props(plain: Harness):
    await plain.send("legacy")
    raw = plain.session.tracker.pending.raw_value
    assert isinstance(raw, str)  # the JSON string as received
    await plain.cls.default_config.resolve.fn(await plain.config(), {"approved": True}, None)
    records = plain.records()
    assert len(records) == 2
    assert "resume" not in records[1]
    assert records[1]["forwardedProps"] == {"command": {"resume": {"approved": True}, "interruptEvent": raw}}
    assert records[1]["parentRunId"] == records[0]["runId"]
    assert conversation(plain.chat)[-1].content == 'Legacy answer: {"approved": true}'
    assert plain.chat.locked is False


async def test_s13_legacy_card_id_is_empty_and_still_resolves(plain: Harness):
    await plain.send("legacy-string")
    default = await plain.config()
    await plain.cls.default_config.resolve.fn(default, {"approved": False}, default.cards[0].id)
    assert plain.records()[1]["forwardedProps"]["command"]["resume"] == {"approved": False}


async def test_s14_legacy_cancel_dismisses_without_sending(plain: Harness, caplog):
    await plain.send("legacy-string")
    default = await plain.config()
    with caplog.at_level(logging.WARNING):
        await plain.cls.default_config.cancel.fn(default, "")
    assert len(plain.records()) == 1
    assert default.active is False and default.slot_props is None and default.cards == []
    assert plain.chat.locked is False and plain.chat.status == "idle"
    assert any("legacy interrupt dismissed" in r.getMessage() for r in caplog.records)


async def test_s09_unknown_id_sends_nothing(plain: Harness):
    await plain.send("approval")
    default = await plain.config()
    await plain.cls.default_config.resolve.fn(default, {"approved": True}, "no-such-id")
    assert len(plain.records()) == 1 and default.active is True and default.cards[0].answered == ""


async def test_s11_expired_resolve_refused_cancel_sent(chats, agents):
    h = harness(chats, agents, "expired")
    await h.send("expiring")
    default = await h.config()
    [interrupt_id] = h.ids()
    [card] = default.cards
    assert card.expired is True and card.seconds_left == 0
    Default = h.cls.default_config
    await Default.resolve.fn(default, {"approved": True}, interrupt_id)
    assert len(h.records()) == 1
    assert default.cards[0].error == "This request has expired; it can only be cancelled."
    await Default.cancel.fn(default, interrupt_id)
    assert h.records()[1]["resume"] == [{"interruptId": interrupt_id, "status": "cancelled"}]
    assert h.chat.locked is False


async def test_s15_failed_submission_keeps_the_set_and_can_be_retried(plain: Harness):
    await plain.send("approval")
    default = await plain.config()
    [interrupt_id] = plain.ids()
    client = plain.session.client
    good_url, client.url = client.url, _dead_url()
    Default = plain.cls.default_config
    await Default.resolve.fn(default, {"approved": True}, interrupt_id)
    assert len(plain.records()) == 1
    assert plain.chat.error == UNREACHABLE_MESSAGE  # for people; the log line has the URL and the cause
    assert "cannot reach the agent" in (plain.session.error or "")
    assert plain.chat.status == "error" and plain.chat.locked is True  # the error wins the status (S15)
    # offered again as new: no "resolved" badge on a request whose answer never reached the agent (issue 39)
    assert default.active is True and default.submitting is False and default.cards[0].answered == ""
    client.url = good_url
    await Default.resolve.fn(default, {"approved": True}, interrupt_id)
    assert plain.records()[1]["resume"][0]["status"] == "resolved"
    assert plain.chat.error == "" and plain.chat.locked is False


def _dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


# -- S16 enabled --------------------------------------------------------------------------------------

async def test_s16_disabled_config_stays_empty_and_its_answers_do_nothing(chats, agents):
    h = harness(chats, agents, "never")
    await h.send("choice")
    never, default = await h.config(Never), await h.config()
    assert (never.active, never.result, never.slot_props, never.has_interrupt) == (False, None, None, False)
    assert never.event is None and never.interrupts == [] and never.cards == []
    assert CALLS["Never"] == []  # a configuration that did not take the set is not asked for a result
    assert default.active is True  # S20: fell to the default slot
    [interrupt_id] = h.ids()
    await Never.resolve.fn(never, {"color": "red"}, interrupt_id)
    await Never.cancel.fn(never, interrupt_id)
    await Never.resolve.fn(never, {"color": "red"}, None)
    assert len(h.records()) == 1 and h.chat.locked is True and default.cards[0].answered == ""


async def test_s16_enabled_raising_counts_as_false_and_is_logged(chats, agents, caplog):
    h = harness(chats, agents, "broken")
    with caplog.at_level(logging.ERROR, logger="interrupt_chat.tab.routing"):
        await h.send("choice")
    broken, default = await h.config(Broken), await h.config()
    assert broken.active is False and broken.slot_props is None and default.active is True
    errors = [r for r in caplog.records
              if r.name == "interrupt_chat.tab.routing" and "Broken.enabled" in r.getMessage()]
    assert errors and errors[0].exc_info and "enabled exploded" in str(errors[0].exc_info[1])


# -- S17 handler, S20 routing --------------------------------------------------------------------------

async def test_s17_sync_handler_called_once_per_surfaced_set(chats, agents):
    h = harness(chats, agents, "routing")
    await h.send("choice")
    choice = await h.config(Choice)
    [interrupt_id] = h.ids()
    assert choice.result == {"sync": True, "ids": [interrupt_id]}
    assert choice.slot_props["result"] == choice.result
    [props] = CALLS["Choice"]
    assert set(props) == {"event", "interrupt", "interrupts"}
    assert props["interrupt"]["id"] == interrupt_id and props["event"]["value"] == props["interrupt"]
    await h.route()  # re-routing / re-rendering the same set
    await h.cls.on_load_chat.fn(h.chat)  # a page reload
    assert len(CALLS["Choice"]) == 1 and choice.result == {"sync": True, "ids": [interrupt_id]}
    await Choice.resolve.fn(choice, {"color": "green"}, interrupt_id)
    assert h.records()[1]["resume"] == [{"interruptId": interrupt_id, "status": "resolved",
                                         "payload": {"color": "green"}}]
    assert (choice.active, choice.result, choice.slot_props) == (False, None, None)
    await h.send("choice")  # a new set: the handler runs again
    assert len(CALLS["Choice"]) == 2 and choice.result["ids"] == h.ids()


async def test_s17_async_handler_result_kept_while_answers_accumulate(chats, agents):
    h = harness(chats, agents, "routing")
    await h.send("multi")  # the first interrupt is a tool_call: Tool takes the whole set (S20)
    tool, choice, anything = await h.config(Tool), await h.config(Choice), await h.config(Anything)
    assert tool.active is True and choice.active is False and anything.active is False
    assert tool.result == {"async": True, "count": 3} and len(CALLS["Tool"]) == 1
    tool_id, choice_id, confirm_id = h.ids()
    await Tool.cancel.fn(tool, confirm_id)
    await Tool.resolve.fn(tool, {"color": "red"}, choice_id)
    assert len(CALLS["Tool"]) == 1 and tool.result == {"async": True, "count": 3}
    assert tool.slot_props["result"] == tool.result
    await Tool.resolve.fn(tool, {"approved": True}, tool_id)
    assert [e["status"] for e in h.records()[1]["resume"]] == ["resolved", "resolved", "cancelled"]
    assert len(CALLS["Tool"]) == 1 and tool.active is False


async def test_s17_raising_handler_gives_none_and_is_logged(chats, agents, caplog):
    h = harness(chats, agents, "routing")
    with caplog.at_level(logging.ERROR, logger="interrupt_chat.tab.routing"):
        await h.send("legacy")  # an object value that is neither input_required nor tool_call
    anything = await h.config(Anything)
    assert anything.active is True and len(CALLS["Anything"]) == 1
    assert anything.result is None and anything.slot_props["result"] is None
    errors = [r for r in caplog.records if "Anything.handler" in r.getMessage()]
    assert errors and "handler exploded" in str(errors[0].exc_info[1])


async def test_s20_first_accepting_config_wins(chats, agents):
    h = harness(chats, agents, "routing")
    await h.send("choice")  # Choice and Anything both accept: Choice is first
    states = {cls.__name__: await h.config(cls) for cls in (Choice, Tool, Anything, h.cls.default_config)}
    assert [name for name, s in states.items() if s.active] == ["Choice"]
    assert [name for name, s in states.items() if s.slot_props is not None] == ["Choice"]
    assert CALLS["Anything"] == [] and CALLS["Tool"] == []


async def test_s20_a_set_nobody_accepts_falls_to_the_default_slot(chats, agents):
    h = harness(chats, agents, "routing")
    await h.send("legacy-string")  # a plain string: no configuration takes it
    default = await h.config()
    assert default.active is True and default.slot_props is not None and default.cards[0].id == ""
    for cls in (Choice, Tool, Anything):
        assert (await h.config(cls)).active is False
    assert not any(CALLS.values())
    await h.cls.default_config.cancel.fn(default, None)
    assert h.chat.locked is False


# -- S18 render_in_chat ---------------------------------------------------------------------------------

async def test_s18_render_in_chat_false_publishes_nothing_but_is_active(chats, agents):
    h = harness(chats, agents, "manual")
    await h.send("legacy-string")
    manual, default = await h.config(Manual), await h.config()
    assert manual.active is True and manual.slot_props is None and manual.has_interrupt is False
    assert manual.event == {"name": "on_interrupt", "value": "approval: publish the draft?"}
    assert manual.result == {"label": "APPROVAL: PUBLISH THE DRAFT?"}
    assert default.active is False and default.slot_props is None  # not drawn by the default slot either
    assert h.chat.locked is True
    await Manual.resolve.fn(manual, {"accepted": True}, None)
    assert h.records()[1]["forwardedProps"]["command"]["resume"] == {"accepted": True}
    assert manual.active is False and h.chat.locked is False


async def test_s18_a_set_manual_rejects_goes_to_the_default_slot(chats, agents):
    h = harness(chats, agents, "manual")
    await h.send("choice")
    manual, default = await h.config(Manual), await h.config()
    assert manual.active is False and default.active is True and default.slot_props is not None


# -- S23 secrets -----------------------------------------------------------------------------------------

def assert_secret_nowhere(h: Harness, secret: str = SECRET) -> None:
    """Not in any var of any state (as sent to the browser), not in any pickled state (Redis / disk)."""
    for state in h.states():
        assert secret not in json.dumps(state.dict(), default=repr), state.get_full_name()
        assert secret.encode() not in pickle.dumps(state), state.get_full_name()
        assert secret.encode() not in state._serialize(), state.get_full_name()
    assert secret not in json.dumps(h.root.get_delta(), default=repr)
    session = h.session
    assert secret not in repr([dataclasses.asdict(r) for r in conversation(h.chat)])
    assert secret not in json.dumps([m.model_dump(mode="json") for m in session.transcript.to_messages()])
    assert secret not in json.dumps(session.transcript.state, default=repr)
    assert secret not in session.build_input().model_dump_json()


async def test_s23_credential_through_the_default_form_leaves_no_trace(plain: Harness, caplog):
    caplog.set_level(logging.DEBUG)
    await plain.send("credential")
    default = await plain.config()
    [interrupt_id] = plain.ids()
    assert [f.type for f in default.cards[0].fields] == ["secret"]
    form = {"__interrupt_id": interrupt_id, "api_key": SECRET}
    await plain.cls.default_config.submit_form.fn(default, form)
    [_, resume] = plain.records()
    assert resume["resume"] == [{"interruptId": interrupt_id, "status": "resolved",
                                 "payload": {"api_key": f"<redacted:{len(SECRET)}>"}}]  # the agent got it
    assert conversation(plain.chat)[-1].content == f"Credential received ({len(SECRET)} characters)."
    assert_secret_nowhere(plain)
    assert SECRET not in caplog.text


async def test_s23_credential_through_a_custom_config_leaves_no_trace(chats, agents, caplog):
    caplog.set_level(logging.DEBUG)
    h = harness(chats, agents, "vault")
    await h.send("credential")
    vault = await h.config(Vault)
    assert vault.active is True
    await Vault.resolve.fn(vault, {"api_key": SECRET}, h.ids()[0])
    assert h.records()[1]["resume"][0]["payload"] == {"api_key": f"<redacted:{len(SECRET)}>"}
    assert_secret_nowhere(h)
    assert SECRET not in caplog.text


async def test_s23_masked_answer_waiting_for_others_is_never_pickled(plain: Harness):
    """A masked answer waits in the tracker (process memory) but never in a var or a pickle; an
    unmasked one is kept across a round trip so a multi-set still accumulates (S7)."""
    await plain.send("multi")
    default = await plain.config()
    _, choice_id, _ = plain.ids()
    tracker = plain.session.tracker
    interrupt = next(i for i in tracker.pending.interrupts if i.id == choice_id)
    interrupt.response_schema["properties"]["note"] = {"type": "string", "writeOnly": True}
    await plain.cls.default_config.resolve.fn(default, {"color": "red", "note": SECRET}, choice_id)
    assert tracker.answers[choice_id].payload["note"] == SECRET  # in memory only
    assert len(plain.records()) == 1
    assert_secret_nowhere(plain)


# -- S25 threads, reload, restart ---------------------------------------------------------------------

async def test_s25_switching_threads_shows_that_threads_interrupts_only(plain: Harness):
    chat, Default = plain.chat, plain.cls.default_config
    await plain.send("approval")
    thread_a, [approval_id] = chat.thread_id, plain.ids()
    assert await chat.new_thread() is plain.cls.route_interrupts
    await plain.route()
    default = await plain.config()
    thread_b = chat.thread_id
    assert thread_b != thread_a
    assert conversation(chat) == [] and chat.locked is False and chat.status == "idle"
    assert default.active is False and default.cards == [] and default.slot_props is None
    await plain.send("choice")
    [choice_id] = plain.ids()
    assert [c.id for c in default.cards] == [choice_id]
    assert {t["id"]: t["pending"] for t in chat.threads} == {thread_a: "true", thread_b: "true"}
    assert await chat.switch_thread(thread_a) is plain.cls.route_interrupts
    await plain.route()
    assert chat.thread_id == thread_a and [c.id for c in default.cards] == [approval_id]
    assert default.interrupts[0]["id"] == approval_id and conversation(chat)[0].content == "approval"
    assert [(t["id"], t["current"]) for t in chat.threads] == [(thread_b, "false"), (thread_a, "true")]  # newest first
    await Default.resolve.fn(default, {"approved": True}, approval_id)  # answers thread A only
    assert plain.records(thread_a)[-1]["resume"][0]["interruptId"] == approval_id
    assert len(plain.records(thread_b)) == 1
    await chat.switch_thread(thread_b)
    await plain.route()
    assert [c.id for c in default.cards] == [choice_id] and chat.locked is True
    assert await chat.switch_thread("no-such-thread") is None and chat.thread_id == thread_b


async def test_s07_answers_accumulate_across_a_state_round_trip(plain: Harness):
    await plain.send("multi")
    default = await plain.config()
    tool_id, choice_id, confirm_id = plain.ids()
    Default = plain.cls.default_config
    await Default.resolve.fn(default, {"color": "red"}, choice_id)
    # the next click is handled from the state as stored between events (Redis: every event)
    plain.chat._sessions = plain.cls._deserialize(plain.chat._serialize())._sessions
    await Default.cancel.fn(default, confirm_id)
    plain.chat._sessions = plain.cls._deserialize(plain.chat._serialize())._sessions
    await Default.resolve.fn(default, {"approved": True}, tool_id)
    records = plain.records()
    assert len(records) == 2 and [e["status"] for e in records[1]["resume"]] == ["resolved", "resolved", "cancelled"]


async def test_s25_pending_set_survives_a_backend_restart(chats, agents, monkeypatch, tmp_path):
    """``reflex run`` wipes its disk states on start: the thread database brings the owner's threads back."""
    from reflex.istate.data import SessionData

    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"sqlite:///{tmp_path / 'threads.db'}")
    before = harness(chats, agents, "plain")
    before.root.rx_router_session = SessionData(client_token="tab-restart", client_ip="", session_id="s1")
    await before.send("multi")
    ids, thread = before.ids(), before.chat.thread_id
    default = await before.config()
    await before.cls.default_config.cancel.fn(default, ids[2])  # an unmasked answer, recorded

    after = harness(chats, agents, "plain")  # a fresh state tree: what a restarted backend has
    after.root.rx_router_session = SessionData(client_token="tab-restart", client_ip="", session_id="s2")
    identity.bind("s2", identity.person_of(before.chat))  # the same browser: its socket's handshake says so
    await after.cls.on_load_chat.fn(after.chat)
    assert after.chat.thread_id == thread and after.chat.locked and after.chat.status == "interrupted"
    restored = await after.config()
    assert [c.id for c in restored.cards] == ids and [c.answered for c in restored.cards] == ["", "", "cancelled"]
    await after.cls.default_config.resolve.fn(restored, {"color": "red"}, ids[1])
    await after.cls.default_config.resolve.fn(restored, {"approved": True}, ids[0])
    assert [e["status"] for e in after.records(thread)[-1]["resume"]] == ["resolved", "resolved", "cancelled"]

    stranger = harness(chats, agents, "plain")
    stranger.root.rx_router_session = SessionData(client_token="another-tab", client_ip="", session_id="s3")
    await stranger.cls.on_load_chat.fn(stranger.chat)
    assert stranger.chat.thread_id != thread and stranger.chat.locked is False


async def test_a_turn_streams_in_live_and_joins_the_history_when_the_next_one_starts(plain: Harness):
    """A push while streaming carries the current turn only; a resume continues the same turn."""
    await plain.send("approval")
    chat = plain.chat
    assert PAGE.history(chat) == [] and [r.role for r in live_of(chat).live] == ["user", "assistant"]
    plain.root.get_delta()  # the page has what was published so far
    plain.root._clean()
    default = await plain.config()
    await plain.cls.default_config.resolve.fn(default, {"approved": True}, plain.ids()[0])
    assert "history_rx_state_" not in plain.root.get_delta().get(chat.get_full_name(), {})  # no history resent
    assert [r.role for r in live_of(chat).live] == ["user", "assistant", "assistant"]  # the tool result is in its card
    assert live_of(chat).live[1].tool_calls[0].result_id != ""
    await plain.send("hello")
    assert [r.role for r in PAGE.history(chat)] == ["user", "assistant", "assistant"]
    assert [r.role for r in live_of(chat).live] == ["user", "assistant"]


# -- configuration ------------------------------------------------------------------------------------

async def test_no_agent_configured_shows_a_configuration_error_not_a_connection_error(agents, monkeypatch):
    """An embedding app with no agent_url, no INTERRUPT_CHAT_AGENT_URL and no registered default
    (no demo agent mounted) gets a clear configuration error in the chat, and nothing is sent."""
    from interrupt_chat.tab import endpoint

    monkeypatch.delenv(endpoint.AGENT_URL_ENV, raising=False)
    monkeypatch.setattr(endpoint, "_registered", None)
    h = Harness(new_chat_state("unit-test-unconfigured", agent_url=None, configs=[]), agents.store)
    await h.cls.on_load_chat.fn(h.chat)
    assert h.chat.error == endpoint.NO_AGENT_MESSAGE
    await h.send("hello")
    assert h.chat.status == "error" and h.chat.error == endpoint.NO_AGENT_MESSAGE
    assert "INTERRUPT_CHAT_AGENT_URL" in h.chat.error and "cannot reach" not in h.chat.error
    assert conversation(h.chat) == [] and h.session.transcript.messages == []


async def test_registered_default_agent_is_used_and_the_environment_wins(agents, monkeypatch):
    from interrupt_chat.tab import endpoint

    monkeypatch.delenv(endpoint.AGENT_URL_ENV, raising=False)
    monkeypatch.setattr(endpoint, "_registered", None)
    endpoint.set_default_agent_url(agents.url)
    assert endpoint.default_agent_url() == agents.url
    h = Harness(new_chat_state("unit-test-registered", agent_url=None, configs=[]), agents.store)
    await h.send("hello")
    assert h.chat.error == "" and [m.role for m in conversation(h.chat)] == ["user", "assistant"]
    monkeypatch.setenv(endpoint.AGENT_URL_ENV, "http://127.0.0.1:9/from-env/")
    assert endpoint.default_agent_url() == "http://127.0.0.1:9/from-env/"


async def test_s25_a_thread_answered_in_another_tab_is_shown_as_it_stands_after_a_reload(chats, agents, monkeypatch,
                                                                                          tmp_path):
    """Two tabs of one browser (one owner): the second answers; the first, reloaded, shows the answered
    thread, and a click on its stale card sends nothing (S10 across tabs)."""
    from reflex.istate.data import SessionData

    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"sqlite:///{tmp_path / 'threads.db'}")
    first = harness(chats, agents, "plain")
    first.root.rx_router_session = SessionData(client_token="tab-one", client_ip="", session_id="s1")
    await first.cls.on_load_chat.fn(first.chat)
    await first.send("approval")
    [interrupt_id] = first.ids()
    second = harness(chats, agents, "plain")
    second.root.rx_router_session = SessionData(client_token="tab-two", client_ip="", session_id="s2")
    identity.bind("s2", identity.person_of(first.chat))  # the same browser
    await second.cls.on_load_chat.fn(second.chat)
    assert second.chat.thread_id == first.chat.thread_id and second.ids() == [interrupt_id]
    await second.cls.default_config.resolve.fn(await second.config(), {"approved": True}, interrupt_id)
    assert second.chat.status == "idle" and len([r for r in first.records() if r.get("resume")]) == 1

    stale = await first.config()
    await first.cls.default_config.resolve.fn(stale, {"approved": False}, interrupt_id)  # a stale card
    assert len([r for r in first.records() if r.get("resume")]) == 1
    assert first.chat.status == "idle" and first.ids() == [] and "another window" in first.chat.notice
    await first.cls.on_load_chat.fn(first.chat)  # a reload shows it as it stands
    assert first.chat.status == "idle" and first.ids() == []


async def test_an_unreachable_database_leaves_the_chat_working_in_memory_with_one_notice(chats, agents, monkeypatch,
                                                                                         caplog):
    from interrupt_chat.tab.persistence import UNAVAILABLE_NOTICE
    from tests.unit.agents import free_port

    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"postgresql+psycopg://app@127.0.0.1:{free_port()}/nowhere")
    h = harness(chats, agents, "plain")
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.tab.persistence"):
        await h.cls.on_load_chat.fn(h.chat)
        assert h.chat.notice == UNAVAILABLE_NOTICE and h.chat.error == ""
        await h.send("approval")  # nothing the user typed is lost: the run goes on in memory
        assert [r.role for r in conversation(h.chat)][:2] == ["user", "assistant"] and h.chat.status == "interrupted"
        await h.cls.default_config.resolve.fn(await h.config(), {"approved": True}, h.ids()[0])
        assert h.chat.status == "idle" and h.chat.notice == UNAVAILABLE_NOTICE
    assert any("thread database" in r.getMessage() for r in caplog.records)


async def test_chunks_that_continue_frozen_texts_go_ahead_of_the_var_delta(plain: Harness, page: Page):
    """A push that freezes nothing sends its chunks in the lock, before the var delta (the page draws the
    text before it re-renders for the delta); one that freezes a new text returns them, to go after the
    var has brought the prefix they continue."""
    from ag_ui.core import TextMessageContentEvent, TextMessageStartEvent

    from interrupt_chat.tab import driver, streaming

    session = plain.chat._session()
    transcript, outbox = session.transcript, streaming.Outbox(session.thread_id)
    transcript.mark_tail()
    transcript.apply(TextMessageStartEvent(message_id="m1", role="assistant"))
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="Hello"))
    assert await driver._stream(plain.chat, session, outbox) == [] and page.scripts == []  # frozen: the var has it
    transcript.apply(TextMessageContentEvent(message_id="m1", delta=" world"))
    assert await driver._stream(plain.chat, session, outbox) == []
    assert len(page.scripts) == 1 and page.show(live_of(plain.chat).live[-1]).content == "Hello world"
    transcript.apply(TextMessageContentEvent(message_id="m1", delta="!"))
    transcript.apply(TextMessageStartEvent(message_id="m2", role="assistant"))
    transcript.apply(TextMessageContentEvent(message_id="m2", delta="Next"))
    later = await driver._stream(plain.chat, session, outbox)  # m2 is frozen in this push: m1's chunk waits
    assert [(text, done) for _, _, text, done in later] == [("!", False)] and len(page.scripts) == 1
