"""Edit, regenerate and versions (issue 25 §1–2): the message tree in the core, stored in the database, across tabs.

The core (``agui/branches.py``) is checked on plain records; the chat through tabs (fresh state trees) against the
demo agent, whose ``history`` scenario says what a run received.
"""

from __future__ import annotations

import re

import pytest

import interrupt_chat as ic
from interrupt_chat.agui.branches import ROOT, BranchError, Branches, Fork, branch_off, switch, tail_text
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

# -- the core ------------------------------------------------------------------------------------------


def _m(i: str, role: str = "user", text: str | None = None) -> dict:
    return {"id": i, "role": role, "content": text if text is not None else f"text {i}"}


def _record(*messages: dict, **more) -> dict:
    return {"version": 1, "threadId": "t", "messages": list(messages), "toolCalls": {}, "state": {"s": 1},
            "pending": None, "answers": [], "status": "finished", **more}


def test_branching_off_hides_the_continuation_and_keeps_the_path_before_it():
    branches = Branches()
    record = _record(_m("u1"), _m("a1", "assistant"), _m("u2"), _m("a2", "assistant"),
                     pending={"runId": "r2"}, runs=[["r1", 1], ["r2", 3]])
    head, tail = branch_off(record, branches, 2)
    assert [m["id"] for m in head["messages"]] == ["u1", "a1"]
    assert head["pending"] is None and head["status"] == "idle" and head["state"] == {"s": 1}
    assert head["runs"] == [["r1", 1]]
    assert tail.parent_id == "a1" and [m["id"] for m in tail.record["messages"]] == ["u2", "a2"]
    assert tail.record["pending"] == {"runId": "r2"} and tail.text == "text u2\ntext a2"
    fork = branches.forks["a1"]
    assert len(fork.versions) == 2 and fork.shown == 1 and fork.runs == {tail.branch_id: ["r2"]}
    assert branches.hidden_runs() == {"r2"}


def test_the_nav_counts_versions_on_the_message_after_each_fork():
    branches = Branches()
    head, _ = branch_off(_record(_m("u1"), _m("a1", "assistant")), branches, 0)
    assert head["messages"] == [] and ROOT in branches.forks
    assert branches.nav(["u1b", "a1b"]) == {"u1b": (2, 2)}
    branch_off(_record(_m("u1b"), _m("a1b", "assistant")), branches, 1)  # regenerate the answer too
    assert branches.nav(["u1b", "a1c"]) == {"u1b": (2, 2), "a1c": (2, 2)}


def test_switching_swaps_the_shown_tail_for_a_hidden_one_and_back():
    branches = Branches()
    original = _record(_m("u1"), _m("a1", "assistant"), runs=[["r1", 1]])
    head, first = branch_off(original, branches, 0)
    edited = {**head, "messages": [_m("u1b"), _m("a1b", "assistant")], "runs": [["r2", 1]]}
    hidden = {first.branch_id: first.record}
    shown, second, dropped = switch(edited, branches, "u1b", 0, hidden.get)
    assert dropped == first.branch_id and [m["id"] for m in shown["messages"]] == ["u1", "a1"]
    assert shown["runs"] == [["r1", 1]] and branches.hidden_runs() == {"r2"}
    assert branches.nav(["u1", "a1"]) == {"u1": (1, 2)}
    back, _, _ = switch(shown, branches, "u1", 1, {second.branch_id: second.record}.get)
    assert [m["id"] for m in back["messages"]] == ["u1b", "a1b"] and branches.hidden_runs() == {"r1"}


def test_a_switch_that_does_not_fit_the_thread_is_refused():
    branches = Branches()
    record = _record(_m("u1"), _m("a1", "assistant"))
    with pytest.raises(BranchError, match="no other versions"):
        switch(record, branches, "u1", 0, lambda _: None)
    branch_off(record, branches, 0)
    path = _record(_m("u2"))
    with pytest.raises(BranchError, match="not on the shown path"):
        switch(path, branches, "nope", 0, lambda _: None)
    with pytest.raises(BranchError, match="no version 2"):
        switch(path, branches, "u2", 1, lambda _: None)  # the one shown
    with pytest.raises(BranchError, match="missing"):
        switch(path, branches, "u2", 0, lambda _: None)


def test_the_index_round_trips_and_a_malformed_one_is_refused():
    branches = Branches({"a": Fork(["x", "y"], 1, {"x": ["r"]})})
    assert Branches.from_json(branches.to_json()) == Branches({"a": Fork(["x", "y"], 1, {"x": ["r"]})})
    assert Branches.from_json(None) == Branches()
    for bad in ([], {"a": {"versions": []}}, {"a": {"versions": ["x"], "shown": 3}}):
        with pytest.raises(BranchError):
            Branches.from_json(bad)
    assert tail_text([_m("u", "user", "hi\x00"), _m("t", "tool", "x"), {"role": "assistant", "content": [
        {"type": "text", "text": "part"}]}]) == "hi\npart"


# -- the chat ------------------------------------------------------------------------------------------

pytestmark = pytest.mark.loopback


@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="branches")


def _texts(tab: Tab) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in tab.session.transcript.messages]


def _users(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


async def _edit(tab: Tab, message_id: str, text: str) -> None:
    await tab.cls.save_edit.fn(tab.chat, {"message_id": message_id, "text": text})


def _user_id(tab: Tab, text: str) -> str:
    return next(m.id for m in tab.session.transcript.messages if m.role == "user" and m.content == text)


async def test_an_edit_runs_on_the_path_up_to_it_and_keeps_the_old_continuation(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("history one")
    await tab.send("history two")
    await _edit(tab, _user_id(tab, "history two"), "history TWO")
    assert _users(tab.requests()[-1]) == ["history one", "history TWO"]
    assert [t for r, t in _texts(tab) if r == "user"] == ["history one", "history TWO"]
    new_id = _user_id(tab, "history TWO")
    assert tab.chat.branch_nav == {new_id: "2/2"}
    await chat.state.previous_branch.fn(tab.chat, new_id)
    old_id = _user_id(tab, "history two")
    assert tab.chat.branch_nav == {old_id: "1/2"} and len(tab.session.transcript.messages) == 4
    await tab.send("history three")  # the next run continues the branch shown
    assert _users(tab.requests()[-1]) == ["history one", "history two", "history three"]
    other = await Tab(chat.state, agent[1]).load()  # another tab, or a reload: the same versions
    assert [t for r, t in _texts(other) if r == "user"] == ["history one", "history two", "history three"]
    assert other.chat.branch_nav == {old_id: "1/2"}
    await chat.state.next_branch.fn(other.chat, old_id)
    assert [t for r, t in _texts(other) if r == "user"] == ["history one", "history TWO"]
    owner = tab.chat._owner_key
    assert [s.thread_id for s in database.threads(owner, "history three")] == [tab.chat.thread_id]  # hidden: found
    assert [s.thread_id for s in database.threads(owner, "history TWO")] == [tab.chat.thread_id]


async def test_regenerate_sends_the_same_history_without_the_old_answer(chat, agent):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("history again")
    first = tab.session.transcript.messages[-1]
    assert tab.chat.regenerate_id == first.id
    await chat.state.regenerate.fn(tab.chat, first.id)
    request = tab.requests()[-1]
    assert [m["role"] for m in request["messages"]] == ["user"] and _users(request) == ["history again"]
    answer = tab.session.transcript.messages[-1]
    assert answer.id != first.id and re.search(r"run 2 on this thread", answer.content)
    assert tab.chat.branch_nav == {answer.id: "2/2"} and tab.chat.regenerate_id == answer.id
    await chat.state.previous_branch.fn(tab.chat, answer.id)
    assert tab.session.transcript.messages[-1].content == first.content
    await chat.state.regenerate.fn(tab.chat, "msg-not-the-last")  # ids from the page: nothing happens
    assert len(tab.requests()) == 2


async def test_nothing_is_edited_or_regenerated_while_a_request_is_open_and_a_request_travels_with_its_version(
        chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("history first")
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    user = _user_id(tab, "history first")
    await _edit(tab, user, "history changed")
    assert tab.chat.notice == "Answer or cancel the agent's request first." and len(tab.requests()) == 2
    await tab.cancel(interrupt_id)  # answered: an audit entry of this version
    assert [d["interrupt_id"] for d in tab.chat.decisions] == [interrupt_id]
    await _edit(tab, user, "history changed")
    assert tab.chat.decisions == []  # that entry belongs to the version now hidden
    await tab.send("approval")  # a request in the new version, then back to the old one
    [second] = tab.ids()
    new_user = _user_id(tab, "history changed")
    await chat.state.previous_branch.fn(tab.chat, new_user)
    assert tab.ids() == [] and [d["interrupt_id"] for d in tab.chat.decisions] == [interrupt_id]
    assert database.pending(tab.chat._owner_key) == []
    await chat.state.next_branch.fn(tab.chat, user)
    assert tab.ids() == [second] and tab.chat.locked
    await tab.resolve({"approved": True}, second)
    assert tab.requests()[-1]["resume"][0]["interruptId"] == second


async def test_two_tabs_switching_at_once_leave_one_consistent_thread(chat, agent):
    a = await Tab(chat.state, agent[1]).load()
    await a.send("history x")
    await _edit(a, _user_id(a, "history x"), "history y")
    b = await Tab(chat.state, agent[1]).load()
    y = _user_id(a, "history y")
    await chat.state.previous_branch.fn(a.chat, y)
    await chat.state.previous_branch.fn(b.chat, y)  # b's copy is stale: refreshed, then the id is not shown
    assert [t for r, t in _texts(b) if r == "user"] == ["history x"]
    c = await Tab(chat.state, agent[1]).load()
    assert [t for r, t in _texts(c) if r == "user"] == ["history x"] and list(c.chat.branch_nav.values()) == ["1/2"]
