"""Rules that fit (§6.4) as the pages draw them: the card's new fields, and the compiled card, inbox, /decide,
/policies and chat page (docs/dom-contract.md "Rules that fit").

The view model is built from a real tracker and transcript; the pages are compiled, not run in a browser: the
test ids and attributes are in them, and what a click sends is read from the compiled click handler.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import pytest
import reflex as rx
from ag_ui.core import ToolCallArgsEvent, ToolCallEndEvent, ToolCallStartEvent
from reflex.istate.data import ReflexURL, RouterData

import interrupt_chat as ic
from interrupt_chat.agui import InterruptTracker, Transcript
from interrupt_chat.approvals import decide, links
from interrupt_chat.approvals.decide import DecideState
from interrupt_chat.components import interrupt_slot
from interrupt_chat.components.chat import PAUSED
from interrupt_chat.components.decide import decide_page
from interrupt_chat.components.inbox import approvals_inbox
from interrupt_chat.components.policies import policy_list
from interrupt_chat.components.rule_editor import DURATIONS, OPS
from interrupt_chat.model.cards import Card, build_cards, call_hash, shown_hash
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab, resumes

APPROVE = {"type": "object", "required": ["approved"], "properties": {"approved": {"type": "boolean"}}}
CLOSED = {**APPROVE, "additionalProperties": False}
WITH_REASON = {"type": "object", "required": ["approved"], "additionalProperties": False,
               "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}}}


def surfaced(*interrupts: dict[str, Any]) -> InterruptTracker:
    tracker = InterruptTracker()
    tracker.observe({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"})
    tracker.observe({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1",
                     "outcome": {"type": "interrupt", "interrupts": list(interrupts)}})
    tracker.finalize()
    assert tracker.pending is not None
    return tracker


def with_call(call_id: str, name: str, args: dict[str, Any]) -> Transcript:
    transcript = Transcript()
    transcript.apply(ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name))
    transcript.apply(ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps(args)))
    transcript.apply(ToolCallEndEvent(tool_call_id=call_id))
    return transcript


def card_of(interrupt: dict[str, Any], transcript: Transcript | None = None) -> Card:
    tracker = surfaced(interrupt)
    [card] = build_cards(tracker.pending, tracker, transcript, remember=lambda _tool, _interrupt: True)
    return card


def approval(schema: Any = APPROVE, **extra: Any) -> dict[str, Any]:
    found = {"id": "i1", "reason": "tool_call", "message": "Pay?", "toolCallId": "c1", **extra}
    if schema is not None:
        found["responseSchema"] = schema
    return found


# --- the view model ---------------------------------------------------------------------------------------------

def test_the_call_hash_is_stable_and_names_exactly_the_shown_call():
    base = call_hash("i1", "pay", {"amount": 5, "to": "ACME"}, "Pay?", APPROVE)
    assert re.fullmatch(r"[0-9a-f]{32}", base)
    assert call_hash("i1", "pay", {"to": "ACME", "amount": 5}, "Pay?", APPROVE) == base  # key order is no change
    for changed in (call_hash("i2", "pay", {"amount": 5, "to": "ACME"}, "Pay?", APPROVE),
                    call_hash("i1", "refund", {"amount": 5, "to": "ACME"}, "Pay?", APPROVE),
                    call_hash("i1", "pay", {"amount": 6, "to": "ACME"}, "Pay?", APPROVE),
                    call_hash("i1", "pay", {"amount": 5, "to": "ACME"}, "Pay now?", APPROVE),
                    call_hash("i1", "pay", {"amount": 5, "to": "ACME"}, "Pay?", CLOSED)):
        assert changed != base


def test_a_card_carries_the_hash_of_its_call_as_the_server_recomputes_it():
    transcript = with_call("c1", "pay", {"amount": 5, "to": "ACME"})
    card = card_of(approval(), transcript)
    assert card.call_hash == call_hash("i1", "pay", {"amount": 5, "to": "ACME"}, "Pay?", APPROVE)
    tracker = surfaced(approval())
    assert tracker.pending is not None
    assert shown_hash(tracker.pending.interrupts[0], transcript) == card.call_hash
    moved = with_call("c1", "pay", {"amount": 500, "to": "ACME"})  # the same request, other arguments
    assert card_of(approval(), moved).call_hash != card.call_hash


@pytest.mark.parametrize(("interrupt", "box"), [
    (approval(APPROVE), True),  # additional properties allowed (the default)
    (approval(None), True),  # no schema: answered {"approved": ...}, anything may go with it
    (approval(WITH_REASON), True),  # a string reason property, nothing else allowed
    (approval(CLOSED), False),  # nothing but approved
    (approval({**WITH_REASON, "properties": {"approved": {"type": "boolean"}, "reason": {"type": "integer"}}}),
     False),  # a reason, but not a text
    (approval({**APPROVE, "additionalProperties": {"type": "number"}}), False),  # more, but never a string
    (approval(APPROVE, reason="confirmation"), True),  # a confirmation bound to a tool call
    ({"id": "i1", "reason": "confirmation", "message": "Go on?", "responseSchema": APPROVE}, False),  # bound to none
    (approval({"type": "object", "required": ["approved", "note"],
               "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}}}), False),  # not plain
    ({"id": "i1", "reason": "input_required", "responseSchema": {
        "type": "object", "properties": {"reason": {"type": "string"}}}}, False),  # a form
])
def test_the_reason_box_is_offered_on_tool_approvals_whose_schema_takes_a_string_reason(interrupt, box):
    assert card_of(interrupt).reason_box is box


def test_reject_options_keep_non_empty_strings_cut_and_at_most_ten():
    long = "x" * 300
    options = ["Too expensive", " ", 7, None, {"a": 1}, "  Wrong account  ", long, "Too expensive",
               *[f"o{i}" for i in range(20)]]
    card = card_of(approval(rejectOptions=options))
    assert card.reject_options[:3] == ["Too expensive", "Wrong account", "x" * 200]
    assert len(card.reject_options) == 10 and all(isinstance(o, str) and o for o in card.reject_options)
    from_metadata = card_of(approval(metadata={"rejectOptions": ["Not now"]}))
    assert from_metadata.reject_options == ["Not now"]
    assert card_of(approval(CLOSED, rejectOptions=["Not now"])).reject_options == []  # no reason can be sent
    assert card_of(approval(rejectOptions="Not now")).reject_options == []  # not a list
    assert card_of(approval()).risk_level == "" and card_of(approval()).risk_why == ""  # the lead's hook fills them


# --- the pages ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chat() -> ic.Chat:
    return ic.Chat("http://127.0.0.1:9/", name="rule-pages")


def _page(component: rx.Component) -> str:
    return json.dumps(component.render(), default=str)


def _testids(page: str) -> set[str]:
    return set(re.findall(r'\\"data-testid\\":\\"([a-z0-9-]+)\\"', page))


def _click_of(page: str, testid: str) -> str:
    """The compiled onClick of the (first) element with ``testid``."""
    props = next(p for p in _props(json.loads(page)) if f'"data-testid":"{testid}"' in p)
    return next(p for p in props if p.startswith("onClick:"))


def _props(node: Any) -> list[list[str]]:
    found: list[list[str]] = []
    if isinstance(node, dict):
        if isinstance(node.get("props"), list):
            found.append(node["props"])
        for value in node.values():
            found += _props(value)
    elif isinstance(node, list):
        for value in node:
            found += _props(value)
    return found


def _hooks(component: rx.Component) -> str:
    return "\n".join(component._get_all_hooks())


CARD_IDS = {"interrupt-risk", "interrupt-reject-reason", "interrupt-reject-option", "interrupt-allow-similar",
            "rule-editor", "rule-arg", "rule-arg-op", "rule-arg-value", "rule-duration", "rule-save",
            "interrupt-approve", "interrupt-reject"}


def test_the_chats_card_draws_the_risk_the_reason_the_options_and_the_rule_editor(chat):
    slot = interrupt_slot.default_slot(chat.state.default_config)
    page = _page(slot)
    assert _testids(page) >= CARD_IDS
    for word in (*OPS, *DURATIONS):  # native selects whose option values are exactly the contract's words
        assert f'value:\\"{word}\\"' in page, word
    assert 'defaultValue:\\"equals\\"' in page and 'defaultValue:\\"1h\\"' in page
    for level in ("high", "medium", "low"):
        assert f'\\"data-level\\":\\"{level}\\"' in page
    assert "Why not? (sent to the agent)" in page and '\\"data-option\\"' in page
    for hidden in ("__interrupt_id", "__thread_id", "__run_id", "__call"):
        assert f'name:\\"{hidden}\\"' in page, hidden
    assert '\\"data-ic-fold\\":\\"true\\"' in page and '\\"data-ic-toggle\\":\\"true\\"' in page
    submit = next(h for h in _hooks(slot).split("const ") if ".save_rule\"" in h)  # the form's submit
    assert "form_data" in submit


def test_the_cards_answers_name_the_shown_call_and_reject_reads_the_reason_when_clicked(chat):
    page = _page(interrupt_slot.default_slot(chat.state.default_config))
    approve = _click_of(page, "interrupt-approve")
    assert ".resolve" in approve and '["shown"] : card_rx_state_?.["call_hash"]' in approve
    reject = _click_of(page, "interrupt-reject")
    # read inside the click's own arrow function (at click time), by the box's unique id
    assert reject.startswith("onClick:((_e) => (addEvents(")
    assert 'document.getElementById((((\"ic-reason-\"+card_rx_state_?.[\"thread_id\"])+\"-\")' in reject
    assert ".trim()" in reject and "approved: false, reason: ic_reason" in reject and "({ approved: false })" in reject
    assert '["shown"] : card_rx_state_?.["call_hash"]' in reject
    option = _click_of(page, "interrupt-reject-option")
    assert '[\"reason\"] : option_rx_state_' in option and '["shown"] : card_rx_state_?.["call_hash"]' in option


def test_the_reason_box_is_keyed_by_its_id_so_a_new_card_gets_an_empty_one():
    card = rx.Var.create(Card(id="i1", reason="tool_call", prompt="Pay?", kind="approve")).to(Card)
    from interrupt_chat.components.say_no import reject_reason
    page = _page(reject_reason(card, False))
    box = next(p for p in _props(json.loads(page)) if '"data-testid":"interrupt-reject-reason"' in p)
    assert any(p.startswith("id:") and "ic-reason-" in p for p in box)
    assert any(p.startswith("key:") and "ic-reason-" in p for p in box)
    assert not any(p.startswith(("value:", "defaultValue:")) for p in box)  # uncontrolled: nothing typed is a var


def test_a_two_argument_resolve_on_a_button_still_compiles(chat):
    """Apps call ``Config.resolve(payload, interrupt_id)`` from a click: the optional hash takes the click's info."""
    config = chat.state.default_config
    button = rx.button("Go", on_click=config.resolve({"accepted": True}, None))
    assert ".resolve" in _page(button)


def test_the_inbox_card_answers_with_the_shown_call_and_saves_rules_through_the_inbox(chat):
    inbox = approvals_inbox(chat)
    page = _page(inbox)
    assert _testids(page) >= CARD_IDS
    reject = _click_of(page, "interrupt-reject")
    assert ".inbox_resolve" in reject and '["shown"] : card_rx_state_?.["call_hash"]' in reject
    assert "getElementById" in reject
    assert any(".inbox_save_rule\"" in h for h in _hooks(inbox).split("const "))


def test_the_decide_page_has_the_risk_the_reason_and_the_options_and_no_rule_editor():
    page = _page(decide_page())
    ids = _testids(page)
    assert {"interrupt-risk", "interrupt-reject-reason", "interrupt-reject-option"} <= ids
    assert not ids & {"interrupt-allow-similar", "rule-editor", "rule-save"}
    reject = _click_of(page, "decide-reject")
    assert ".reject" in reject and "getElementById" in reject and '["reason"]' in reject
    assert '["shown"]' in reject and 'call_hash' in reject
    approve = _click_of(page, "decide-approve")
    assert ".approve" in approve and "call_hash" in approve
    option = _click_of(page, "interrupt-reject-option")
    assert ".reject" in option and '[\"reason\"] : option_rx_state_' in option


def test_the_policy_list_has_the_pause_and_each_rules_source_conditions_and_expiry(chat):
    page = _page(policy_list(chat))
    assert {"pause-all", "policy-item", "policy-revoke"} <= _testids(page)
    pause = next(p for p in _props(json.loads(page)) if '"data-testid":"pause-all"' in p)
    assert any('"aria-pressed":' in p and "paused" in p for p in pause)
    assert any(p.startswith("onClick:") and ".toggle_pause" in p for p in pause)
    for attribute in ("data-conditions", "data-expires", "data-source", "data-mode"):
        assert f'\\"{attribute}\\"' in page, attribute
    assert "from the policy file" in page and '\\"revocable\\"' in page and "shadow" in page
    assert "Pause all agents" in page and "Resume agents" in page


def test_the_chat_page_shows_the_pause_banner_and_the_denial_limit(chat):
    page = _page(chat.view())
    assert {"pause-banner", "denial-limit"} <= _testids(page)
    assert PAUSED in page or json.dumps(PAUSED)[1:-1] in page
    for testid in ("pause-banner", "denial-limit"):
        element = next(p for p in _props(json.loads(page)) if f'"data-testid":"{testid}"' in p)
        assert 'role:"status"' in element


def test_a_custom_slot_passes_the_shown_hash_only_when_it_has_one(chat):
    slot = interrupt_slot.SlotProps.of(chat.state.default_config)
    assert [str(name) for name, _ in slot.resolve({"approved": True}).args] == ["payload", "interrupt_id"]
    given = slot.resolve({"approved": True}, None, "0" * 32)
    assert [str(name) for name, _ in given.args] == ["payload", "interrupt_id", "shown"]


# --- /decide's reject with a reason, against the demo agent on loopback --------------------------------------------

async def _decide_link(agent: tuple[str, Any], name: str) -> tuple[Tab, str, str, DecideState]:
    tab = await Tab(ic.Chat(agent[0], name=name).state, agent[1]).load()
    await tab.send("approval")  # delete_files: its schema allows more properties, so a reason goes along
    [interrupt_id] = tab.ids()
    await links.ready()
    url = links.url_for(tab.chat._owner_key, tab.session, interrupt_id)
    assert url
    token = url.rsplit("/", 1)[-1]
    page: DecideState = rx.State().get_substate(DecideState.get_full_name().split("."))  # type: ignore[assignment]
    page.router = RouterData(url=ReflexURL(f"http://localhost:3000{links.DECIDE_PATH}{token}"))
    return tab, interrupt_id, token, page


async def _resume_payload(agent: tuple[str, Any], tab: Tab, interrupt_id: str) -> Any:
    deadline = time.monotonic() + 10
    while not (found := resumes(agent[1].records(tab.chat.thread_id), interrupt_id)):
        assert time.monotonic() < deadline, "no resume"
        await asyncio.sleep(0.02)
    [entry] = [e for e in found[0]["resume"] if e.get("interruptId") == interrupt_id]
    return entry.get("payload")


@pytest.mark.loopback
async def test_the_decide_pages_reject_sends_the_typed_reason_trimmed(agent):
    tab, interrupt_id, token, page = await _decide_link(agent, "rule-pages-reason")
    found = await decide._find(page, token)
    assert found.card is not None and found.card.reason_box and found.card.call_hash
    await DecideState.reject.fn(page, "  Too many files  ", found.card.call_hash)
    assert (page.phase, page.action) == ("done", "rejected")
    assert await _resume_payload(agent, tab, interrupt_id) == {"approved": False, "reason": "Too many files"}


@pytest.mark.loopback
async def test_the_decide_pages_reject_without_a_reason_sends_none(agent):
    tab, interrupt_id, _token, page = await _decide_link(agent, "rule-pages-blank")
    await DecideState.reject.fn(page, "   ", "")
    assert await _resume_payload(agent, tab, interrupt_id) == {"approved": False}
