"""The people of a chat as the pages draw them (§6.2, docs/dom-contract.md "People and routing").

Compiled, not run in a browser: the ids and attributes are in the chat's card, the inbox and ``/decide``;
a card the viewer may not decide holds no decision control; the inbox's forms read their selects on submit.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import reflex as rx

import interrupt_chat as ic
from interrupt_chat.components import interrupt_slot
from interrupt_chat.components.decide import decide_page
from interrupt_chat.components.inbox import approvals_inbox
from interrupt_chat.model.cards import Card

DECISIONS = ("interrupt-approve", "interrupt-reject", "interrupt-allow-thread", "interrupt-allow-always",
             "interrupt-deny-always", "interrupt-submit", "interrupt-steps-submit", "interrupt-approve-edited",
             "interrupt-edit-args", "interrupt-option", "interrupt-step")


@pytest.fixture(scope="module")
def chat() -> ic.Chat:
    return ic.Chat("http://127.0.0.1:9/", name="people-ui")


def _page(component: rx.Component) -> str:
    return json.dumps(component.render(), default=str)


def _hooks(component: rx.Component) -> str:
    return "\n".join(component._get_all_hooks())


def _card() -> Any:
    return rx.Var.create(Card(id="i1", reason="tool_call", prompt="Pay?", kind="approve")).to(Card)


def test_the_chats_card_says_who_decides_and_its_approvals(chat):
    page = _page(interrupt_slot.default_slot(chat.state.default_config))
    for testid in ("request-assignee", "approval-progress", "interrupt-card"):
        assert f'\\"data-testid\\":\\"{testid}\\"' in page, testid
    for attribute in ("data-can-decide", "data-assignee", "data-have", "data-need"):
        assert f'\\"{attribute}\\"' in page, attribute
    assert "Waits for " in page and " approvals" in page and "Withdraw" in page


def test_a_card_the_viewer_may_not_decide_holds_the_withdraw_and_no_decision():
    read_only = _page(interrupt_slot._read_only(ic.Chat("http://127.0.0.1:9/", name="people-ro").state.default_config,
                                                _card()))
    assert "interrupt-cancel" in read_only and "Withdraw" in read_only
    assert not [testid for testid in DECISIONS if testid in read_only]


def test_the_inbox_draws_the_scope_the_delegation_and_reassigning(chat):
    inbox = approvals_inbox(chat)
    page = _page(inbox)
    for testid in ("request-assignee", "approval-progress", "request-asker", "inbox-scope", "inbox-reassign",
                   "reassign-to", "reassign-save", "delegate-to", "delegate-until", "delegate-save",
                   "delegate-active", "delegate-clear"):
        assert f'\\"data-testid\\":\\"{testid}\\"' in page, testid
    assert '\\"data-can-decide\\"' in page
    for scope in ("mine", "asked", "all"):
        assert f'value:\\"{scope}\\"' in page, scope
    assert 'type:\\"date\\"' in page and '.startsWith(\\"role:\\")' in page  # delegates are people, not roles
    hooks = _hooks(inbox)
    reassign = next(h for h in hooks.split("const ") if "inbox_reassign\"" in h)
    assert 'form_data?.["to"]' in reassign and 'form_data?.["__thread_id"]' in reassign
    assert "delegate_save" in hooks and "inbox_set_scope" in page


def test_the_decide_page_says_who_decides_and_its_approvals():
    page = _page(decide_page())
    assert '\\"data-testid\\":\\"request-assignee\\"' in page and '\\"data-testid\\":\\"approval-progress\\"' in page
