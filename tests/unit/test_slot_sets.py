"""The README's simple slot on a set of two interrupts, in the chat and in the inbox (issue 39 §1, §2).

Against the pydantic-ai producer (``examples/pydantic_ai``, first word ``multi``: ``delete_files`` and
``send_report`` in one set). A slot's ``slot.*`` Vars are computed in the page; here the expressions Reflex
compiles are run by node over the states the backend would send (``json_dumps(state.dict())``), and the
events they build are made with the arguments the page would give them.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest
import reflex as rx
from reflex.istate.data import SessionData
from reflex.utils.format import json_dumps

import interrupt_chat as ic
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.components.inbox import _slot_props
from interrupt_chat.model.views import InboxSet
from interrupt_chat.tab import identity
from tests.unit.producer_session import producer_fixture
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures

pytestmark = pytest.mark.loopback

OWNER = "owner-slot-sets"
pydantic_ai = producer_fixture("pydantic_ai")


class SetApprovals(ic.InterruptState):
    """Tool approvals (the README's ``Approvals``)."""

    def enabled(self, event: dict) -> bool:
        value = event["value"]
        return isinstance(value, dict) and value.get("reason") == "tool_call"


class SetQuestion(ic.InterruptState):
    """A configuration with a computed var on it (what the README used to recommend)."""

    @rx.var
    def question(self) -> str:
        return str(((self.event or {}).get("value") or {}).get("message") or "")


def simple_slot(slot: ic.SlotProps) -> rx.Component:
    """The README's slot: the first question, Yes / No without an id."""
    return rx.card(rx.text(slot.interrupt["message"].to(str)), rx.text(slot.waiting.to_string()),
                   rx.button("Yes", on_click=slot.resolve({"approved": True})))


def computed_slot(slot: ic.SlotProps) -> rx.Component:
    return rx.card(rx.text(SetQuestion.question), rx.button("Yes", on_click=slot.resolve({"approved": True})))


class SetRemember(SetApprovals):
    """The same, for the chat that checks ``slot.remember``."""


@pytest.fixture(scope="module")
def chat(pydantic_ai) -> ic.Chat:
    return ic.Chat(pydantic_ai, interrupts=[(SetApprovals, simple_slot)], name="slot-sets-chat")


class Tab:
    """One browser tab of ``owner``: a fresh state tree."""

    count = 0

    def __init__(self, cls: type[ChatState], owner: str = OWNER) -> None:
        Tab.count += 1
        self.cls, self.token = cls, f"slot-sets-{Tab.count}"
        self.root = rx.State()
        self.root.rx_router_session = SessionData(client_token=self.token, client_ip="", session_id=self.token)
        self.chat: ChatState = self.root.get_substate(cls.get_full_name().split("."))
        identity.bind(self.token, owner)

    async def load(self) -> Tab:
        await self.cls.on_load_chat.fn(self.chat)
        return self

    async def send(self, text: str) -> None:
        await self.cls.send.fn(self.chat, {"text": text})

    def pending_ids(self) -> list[str]:
        pending = self.chat._sessions[self.chat.thread_id].tracker.pending
        return pending.ids if pending else []

    def states(self) -> dict[str, Any]:
        """What the page holds: every state's vars as the backend sends them."""
        return json.loads(json_dumps(self.root.dict()))


def _flat(tree: dict[str, Any]) -> dict[str, Any]:
    """``{full state name: its vars}`` from ``State.dict()``'s nesting."""
    flat: dict[str, Any] = {}
    for name, value in tree.items():
        if isinstance(value, dict) and name.startswith("reflex___state"):
            flat[name] = {k: v for k, v in value.items() if not k.startswith("reflex___state")}
            flat.update(_flat({k: v for k, v in value.items() if k.startswith("reflex___state")}))
    return flat


def page_value(var: Any, states: dict[str, Any], **loop: Any) -> Any:
    """Run ``var``'s compiled expression in node, its states (and foreach loop variables) as the page has them."""
    data = var._get_all_var_data()
    hooks = "\n".join(re.sub(r"useStateContext\((\"[^\"]+\")\)", r"STATES[\1]", hook)
                      for hook in (data.hooks if data is not None else ()))
    names = "\n".join(f"const {name} = {json.dumps(value)};" for name, value in loop.items())
    program = (f"const STATES = {json.dumps(_flat(states))};\n{hooks}\n{names}\n"
               f"process.stdout.write(JSON.stringify({var!s}) ?? 'undefined');")
    # the program on standard input: a whole test session's states outgrow a command line
    done = subprocess.run(["node", "-"], input=program, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr[-2000:]
    return None if done.stdout == "undefined" else json.loads(done.stdout)


def event_args(spec: Any, states: dict[str, Any], **loop: Any) -> list[Any]:
    """The arguments the page gives an event it built (each computed like ``page_value``)."""
    return [page_value(value, states, **loop) for _name, value in spec.args]


async def test_the_simple_slot_walks_a_set_of_two_and_resumes_once(chat):
    tab = await Tab(chat.state, "owner-walk").load()
    await tab.send("multi delete the files and send the report")
    first, second = tab.pending_ids()
    slot = ic.SlotProps.of(SetApprovals)
    config = await tab.chat.get_state(SetApprovals)
    assert page_value(slot.interrupt, tab.states())["id"] == first

    spec = slot.resolve({"approved": True})  # the README's Yes: no id
    payload, interrupt_id = event_args(spec, tab.states())
    assert interrupt_id == first  # the page names the request it shows
    assert page_value(slot.waiting, tab.states()) == 2 and page_value(slot.answered, tab.states()) == 0
    await SetApprovals.resolve.fn(config, payload, interrupt_id)
    assert tab.pending_ids() == [first, second]  # waiting for the second (S7)
    shown = page_value(slot.interrupt, tab.states())
    assert shown["id"] == second and "send_report" in json.dumps(shown)  # the card moved on
    assert page_value(slot.waiting, tab.states()) == 1 and page_value(slot.answered, tab.states()) == 1

    payload, interrupt_id = event_args(slot.resolve({"approved": True}), tab.states())
    assert interrupt_id == second
    await SetApprovals.resolve.fn(config, payload, interrupt_id)
    assert tab.pending_ids() == []
    texts = [m.content for m in tab.chat._sessions[tab.chat.thread_id].transcript.messages if m.role == "assistant"]
    assert any("deleted 3 files" in t and "report sent" in t for t in texts), texts
    assert tab.chat.locked is False


async def test_the_inbox_binds_each_row_to_its_own_set_and_counts_it(chat):
    tab = await Tab(chat.state, "owner-rows").load()
    await tab.send("multi both")
    multi = tab.pending_ids()
    await chat.state.new_thread.fn(tab.chat)
    await tab.send("delete the temp files")
    [single] = tab.pending_ids()

    inbox = await Tab(chat.state, "owner-rows").load()
    await chat.state.load_inbox.fn(inbox.chat)
    sets = {e.thread_id: e for e in inbox.chat.inbox_sets}
    assert len(sets) == 2 and inbox.chat.inbox == []  # both drawn by the app's own slot
    assert inbox.chat.inbox_total == 3  # "Nothing is waiting" is not said
    assert inbox.chat.inbox_reasons == ["tool_call"]
    assert inbox.chat.inbox_tool_names == ["delete_files", "send_report"]
    assert sorted(inbox.chat.inbox_selectable) == sorted(c.key for e in sets.values() for c in e.cards)

    chat.inbox()  # compiles: the slot reads its row through slot.*
    entry_var = rx.Var(_js_expr="entry", _var_type=InboxSet).guess_type()  # what rx.foreach hands the row
    props = _slot_props(chat.state, SetApprovals, entry_var)
    states = inbox.states()
    for entry in inbox.chat.inbox_sets:  # each row shows its own request, and its Yes answers that one
        row = json.loads(json_dumps(entry))
        shown = page_value(props.interrupt, states, entry=row)
        assert shown["id"] == entry.cards[0].id
        thread_id, payload, interrupt_id, run_id = event_args(props.resolve({"approved": True}), states, entry=row)
        assert (thread_id, interrupt_id, run_id) == (entry.thread_id, entry.cards[0].id, entry.run_id)
        assert page_value(props.waiting, states, entry=row) == len(entry.cards)

    multi_thread = next(t for t, e in sets.items() if len(e.cards) == 2)
    row = json.loads(json_dumps(sets[multi_thread]))
    thread_id, payload, interrupt_id, run_id = event_args(props.resolve({"approved": True}), states, entry=row)
    await chat.state.inbox_resolve.fn(inbox.chat, thread_id, payload, interrupt_id, run_id)
    entry = next(e for e in inbox.chat.inbox_sets if e.thread_id == multi_thread)
    row = json.loads(json_dumps(entry))
    assert page_value(props.interrupt, inbox.states(), entry=row)["id"] == multi[1]  # the row moved on
    assert page_value(props.waiting, inbox.states(), entry=row) == 1
    assert len(inbox.chat.inbox_selectable) == 2  # the answered one is no longer offered for a bulk answer
    assert single in {c.id for e in inbox.chat.inbox_sets for c in e.cards}


async def test_select_all_takes_custom_slot_rows(chat):
    tab = await Tab(chat.state, "owner-select").load()
    await tab.send("multi both")
    await chat.state.load_inbox.fn(tab.chat)
    keys = [c.key for e in tab.chat.inbox_sets for c in e.cards]
    assert len(keys) == 2
    chat.state.inbox_toggle.fn(tab.chat, keys[0])
    assert tab.chat.inbox_selected == [keys[0]]  # its checkbox selects it
    chat.state.inbox_select_all.fn(tab.chat, True)
    assert sorted(tab.chat.inbox_selected) == sorted(keys)


def test_a_slot_reading_its_configurations_vars_is_refused_in_the_inbox():
    chat = ic.Chat("http://127.0.0.1:9/", interrupts=[(SetQuestion, computed_slot)], name="slot-sets-computed")
    chat.view()  # in the chat, the configuration's vars are the shown set's: fine
    with pytest.raises(TypeError, match=r"computed_slot.*SetQuestion\.question.*slot\.interrupt"):
        chat.inbox()


def test_remember_builds_the_rule_event_and_refuses_what_is_no_rule():
    chat = ic.Chat("http://127.0.0.1:9/", interrupts=[(SetRemember, simple_slot)], name="slot-sets-remember")
    slot = ic.SlotProps.of(SetRemember)
    assert slot.remember is not None
    spec = slot.remember("always", "allow")
    assert spec.handler.fn is SetRemember.remember_rule.fn
    assert [str(v) for _n, v in spec.args][2:] == ['"always"', '"allow"']
    with pytest.raises(ValueError, match="scope"):
        slot.remember("forever", "allow")
    assert chat.state.renderers


class SetHandler(ic.InterruptState):
    """A configuration whose slot calls its own handler instead of ``slot.resolve``."""


def handler_slot(slot: ic.SlotProps) -> rx.Component:
    return rx.card(rx.cond(slot.waiting > 0, rx.button("Yes", on_click=SetHandler.resolve({"approved": True}, None))))


def test_a_slot_answering_through_its_configuration_is_refused_in_the_inbox():
    chat = ic.Chat("http://127.0.0.1:9/", interrupts=[(SetHandler, handler_slot)], name="slot-sets-handler")
    chat.view()
    with pytest.raises(TypeError, match=r"handler_slot.*SetHandler\.resolve\(\).*slot\.resolve"):
        chat.inbox()


class SetRefused(SetApprovals):
    """Tool approvals in a chat that lets no rule remember ``delete_files``."""


class SetDemo(ic.InterruptState):
    """Every set of the demo agent's chat."""


async def test_a_remember_the_chat_refuses_is_said_in_slot_error(pydantic_ai, database):
    chat = ic.Chat(pydantic_ai, interrupts=[(SetRefused, simple_slot)], name="slot-sets-refused",
                   remember=["send_report"])
    tab = await Tab(chat.state, "owner-refused").load()
    await tab.send("delete the temp files")
    [interrupt_id] = tab.pending_ids()
    slot = ic.SlotProps.of(SetRefused)
    assert page_value(slot.rememberable, tab.states()) is False  # the slot can leave the button out
    assert page_value(slot.error, tab.states()) == ""
    args = event_args(slot.remember("always", "allow"), tab.states())
    assert args[0] == interrupt_id
    await SetRefused.remember_rule.fn(await tab.chat.get_state(SetRefused), *args)
    assert "cannot be remembered" in page_value(slot.error, tab.states())  # said, not silently nothing
    assert tab.pending_ids() == [interrupt_id] and database.decisions(tab.chat._owner_key) == []


async def test_slot_remember_makes_the_rule_and_answers(database):
    from interrupt_chat.demo.agent import create_app
    from tests.unit.agents import serve_in_thread
    app = create_app(delay=0.0)
    with serve_in_thread(app) as base:
        chat = ic.Chat(f"{base}/", interrupts=[(SetDemo, simple_slot)], name="slot-sets-demo")
        tab = await Tab(chat.state, "owner-remember").load()
        await tab.send("approval")
        [interrupt_id] = tab.pending_ids()
        slot = ic.SlotProps.of(SetDemo)
        assert page_value(slot.rememberable, tab.states()) is True
        args = event_args(slot.remember("always", "allow"), tab.states())
        assert args[0] == interrupt_id and args[1]
        await SetDemo.remember_rule.fn(await tab.chat.get_state(SetDemo), *args)
        assert tab.pending_ids() == []
        resumes = [r for r in app.state.store.records(tab.chat.thread_id) if r.get("resume")]
        assert [r["resume"][0]["interruptId"] for r in resumes] == [interrupt_id]
        await tab.send("approval")  # the rule answers the next one: no card
        assert tab.pending_ids() == []
