"""An inbox of several chats (``approvals_inbox(state, also=[...])``, the demo's ``/inbox`` with ``/steps``):
bulk decisions take every chat's selection, and the confirmation and the result count them all.

The page side: the toolbar, the confirmation and the result are wired to every listed chat. The server
side, through a real demo agent on a loopback server and one tab holding both chats: each chat's bulk
action answers its own ticked rows, and a chat with nothing ticked keeps no old result to add up.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import interrupt_chat as ic
from interrupt_chat.approvals import inbox
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.components.inbox import approvals_inbox
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab, wait_for


@pytest.fixture(scope="module")
def chats(agent) -> tuple[ic.Chat, ic.Chat]:
    return ic.Chat(agent[0], name="bulk-main"), ic.Chat(agent[0], name="bulk-also")


def _find(node: Any, testid: str) -> dict[str, Any]:
    """The rendered element with ``data-testid`` = ``testid`` (inside conds and fragments too)."""
    if isinstance(node, dict):
        if f'"data-testid":"{testid}"' in node.get("props", []):
            return node
        children = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return {}
    for child in children:
        if found := _find(child, testid):
            return found
    return {}


def _prop(node: dict[str, Any], name: str) -> str:
    return next(p for p in node["props"] if p.startswith(name + ":") or p.startswith(f'"{name}":'))


def test_the_toolbar_confirmation_and_result_speak_for_every_listed_chat(chats):
    main, also = chats
    page = approvals_inbox(main, "/", also=[(also, "/also")]).render()
    names = [c.state.get_full_name() for c in chats]
    for testid, handler in (("inbox-approve-selected", "inbox_bulk_ask"), ("inbox-reject-selected", "inbox_bulk_ask"),
                            ("inbox-bulk-confirm-yes", "inbox_bulk_run"), ("inbox-bulk-confirm-no", "inbox_bulk_close"),
                            ("inbox-select-all", "inbox_select_all")):
        wiring = _prop(_find(page, testid), "onClick" if "select-all" not in testid else "onCheckedChange")
        assert all(f"{name}.{handler}" in wiring for name in names), (testid, wiring)
    count = _prop(_find(page, "inbox-bulk-confirm"), '"data-count"')
    assert all(f"{_var(name)}.inbox_selected_rx_state_" in count for name in names), count
    page = approvals_inbox(main, "/", also=[(also, "/also")])  # the result shows once one chat has one
    done = _prop(_find(page.render(), "inbox-bulk-result"), '"data-done"')
    assert all(f"{_var(name)}.inbox_bulk_rx_state_" in done for name in names), done


def _var(full_name: str) -> str:
    """A state's name in the page's JavaScript."""
    return full_name.replace(".", "__")


async def _open(tab: Tab, chat_cls: type[ChatState]) -> ChatState:
    """``chat_cls``'s state in ``tab`` (the same page holds both chats), loaded."""
    state = tab.root.get_substate(chat_cls.get_full_name().split("."))
    await chat_cls.on_load_chat.fn(state)
    return state


async def _listed(state: ChatState, cls: type[ChatState], count: int) -> None:
    for _ in range(100):
        await inbox.load(state, cls)
        if len(state.inbox) == count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the inbox lists {len(state.inbox)} requests, not {count}")


async def _bulk(states: list[tuple[ChatState, type[ChatState]]], verb: str) -> dict[str, Any]:
    """What the page does: "Approve selected" asks every chat, "yes" runs every chat's bulk; the summed result."""
    for state, cls in states:
        cls.inbox_bulk_ask.fn(state, verb)
    asked = next((state.inbox_bulk_verb for state, _ in states if state.inbox_bulk_verb), "")
    for state, cls in states:
        await inbox.bulk_decide(state, cls, asked)
    rows = [state.inbox_bulk for state, _ in states]
    return {"done": sum(r.get("done", 0) for r in rows), "lines": [line for r in rows for line in r.get("lines", [])]}


async def test_each_chat_answers_its_own_ticked_rows_and_the_result_counts_this_action_only(chats, agent, database):
    main, also = chats
    tab = Tab(main.state, agent[1])
    first, second = await _open(tab, main.state), await _open(tab, also.state)
    states = [(first, main.state), (second, also.state)]
    for state, cls in states:
        await cls.send.fn(state, {"text": "approval"})
        await inbox.load(state, cls)
        assert len(state.inbox) == 1
        cls.inbox_toggle.fn(state, state.inbox[0].key)
    result = await _bulk(states, "approve")
    assert result["done"] == 2, result  # both chats' ticked rows
    threads = [(first.thread_id, 1), (second.thread_id, 1)]
    await wait_for(lambda: [len([r for r in agent[1].records(t) if r.get("resume")]) for t, _ in threads] == [1, 1])

    for state, cls in states:  # a new approval in each chat, in a new thread; only the second chat's row is ticked
        await cls.new_thread.fn(state)
        await cls.send.fn(state, {"text": "approval"})
        await _listed(state, cls, 1)  # the answered threads are saved as done meanwhile
    also.state.inbox_toggle.fn(second, second.inbox[0].key)
    result = await _bulk(states, "approve")
    assert result["done"] == 1, result  # the first chat's earlier action does not count again
    assert first.inbox_bulk == {} and second.inbox_bulk["done"] == 1
    await wait_for(lambda: len([r for r in agent[1].records(second.thread_id) if r.get("resume")]) == 1)
    await _listed(second, also.state, 0)
    await _listed(first, main.state, 1)  # the first chat's unticked request still waits
