"""One declaration per chat (issue 22): ``ic.Chat``, identities without the URL, the legacy move,
the out-of-date page check, and the inbox drawing a set with the chat's own slot (S20, S22)."""

from __future__ import annotations

from typing import Any

import pytest
import reflex as rx
from reflex.utils.format import to_snake_case

import interrupt_chat as ic
from interrupt_chat.assembly.registry import legacy_class_name
from interrupt_chat.store.schema import decisions_table, messages_table, threads_table
from interrupt_chat.tab import adoption
from interrupt_chat.tab.page_check import PageCheck
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import OWNER, Tab

pytestmark = pytest.mark.loopback


class DeclApprovals(ic.InterruptState):
    """Takes every set: the chat draws it with ``approval_slot``."""


class DeclAside(ic.InterruptState):
    """Takes every set but draws it outside the chat (S18): the inbox keeps the default card."""

    render_in_chat = False


class DeclLookup(ic.InterruptState):
    """A configuration for the lookup test."""


def approval_slot(slot: ic.SlotProps) -> rx.Component:
    return rx.hstack(rx.text(slot.interrupt["message"]),
                     rx.button("Yes", on_click=slot.resolve({"approved": True}), custom_attrs={"data-testid": "yes"}))




def test_a_chat_is_declared_once_and_everything_comes_from_it():
    support = ic.Chat(agent_url="http://127.0.0.1:9/support/", interrupts=[(DeclLookup, approval_slot)],
                      name="decl-support")
    assert ic.chat_state(name="decl-support") is support.state  # found by name, no arguments repeated
    assert ic.Chat(name="decl-support").state is support.state
    assert support.state.agent_url == "http://127.0.0.1:9/support/" and support.state.configs == [DeclLookup]
    for part in (support.view(), support.thread_list(), support.inbox(), support.audit_trail(),
                 ic.chat(name="decl-support")):
        assert isinstance(part, rx.Component)
    with pytest.raises(ValueError, match=r"already declared with another agent URL.*own name="):
        ic.Chat(agent_url="http://127.0.0.1:9/elsewhere/", name="decl-support")


def test_the_state_name_never_holds_the_agent_url():
    built = ic.chat_state("http://user:secret@127.0.0.1:9/built-with/?k=v", name="decl-url")
    assert ic.chat_state(None, name="decl-url") is built  # a backend started without the URL: the same state
    assert "127" not in built.get_full_name() and "secret" not in built.get_full_name()
    assert "decl_url" in built.get_full_name()


def test_a_second_declaration_fills_what_the_first_left_out():
    early = ic.chat_state(name="decl-merge")  # e.g. a header chip's page compiled first
    later = ic.Chat(agent_url="http://127.0.0.1:9/merge/", owner=_owner, name="decl-merge")
    assert later.state is early and early.agent_url == "http://127.0.0.1:9/merge/" and early.owner_fn is _owner
    with pytest.raises(ValueError, match="owner"):
        ic.Chat(owner=lambda chat: "someone else", name="decl-merge")


def _owner(chat: Any) -> str:
    return "user-1"


async def test_threads_stored_under_the_old_url_named_state_move_to_the_new_name(agent, database):
    url, store = agent
    chat_cls = ic.chat_state(url, name="decl-legacy")
    tab = await Tab(chat_cls, store).load()
    await tab.send("kept across the upgrade")
    new_key, thread_id = tab.chat._owner_key, tab.chat.thread_id
    # what 0.1.0 stored: the same rows under the owner key of the URL-named class
    legacy = legacy_class_name(f"{url}|name:decl-legacy", url, None, None)
    parent = chat_cls.get_full_name().rsplit(".", 1)[0]
    old_key = f"{OWNER}|{parent}.{to_snake_case(f'interrupt_chat___registry___{legacy}')}"
    assert chat_cls.legacy_names == [legacy]
    with database.engine.begin() as conn:
        for table in (threads_table, messages_table, decisions_table):
            conn.execute(table.update().where(table.c.owner == new_key).values(owner=old_key))
    assert database.threads(new_key) == []
    adoption.moved_keys.discard(new_key)
    upgraded = await Tab(chat_cls, store).load()  # a restarted backend, a returning browser
    assert [row["id"] for row in upgraded.chat.threads] == [thread_id]
    assert [s.thread_id for s in database.threads(new_key)] == [thread_id] and database.threads(old_key) == []
    session = database.load(new_key, thread_id)
    assert session is not None and [m.content for m in session.transcript.messages][:1] == ["kept across the upgrade"]


def test_a_page_built_for_another_backend_is_told_to_reload():
    chat_cls = ic.chat_state(name="decl-page")
    check = rx.State().get_substate(PageCheck.get_full_name().split("."))
    PageCheck.check.fn(check, [chat_cls.get_full_name()])
    assert check.stale is False
    PageCheck.check.fn(check, [chat_cls.get_full_name().replace("decl_page", "decl_page_old")])
    assert check.stale is True


async def test_s20_the_inbox_draws_a_set_with_the_chats_own_slot_and_answers_it(agent):
    url, store = agent
    chat = ic.Chat(url, interrupts=[(DeclApprovals, approval_slot)], name="decl-inbox")
    tab = await Tab(chat.state, store).load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    inbox = await Tab(chat.state, store).load()
    await inbox.cls.load_inbox.fn(inbox.chat)
    assert inbox.chat.inbox == []  # not the default card: the chat's slot takes this set
    [entry] = inbox.chat.inbox_sets
    assert entry.slot == DeclApprovals.get_full_name() and entry.id == interrupt_id
    assert entry.thread_id == tab.chat.thread_id and entry.interrupt and entry.interrupt["id"] == interrupt_id
    drawn = str(chat.inbox())  # the render_fn's button, its resolve bound to the entry's thread and set
    assert '"data-testid":"yes"' in drawn and f"{chat.state.get_full_name()}.inbox_resolve" in drawn
    assert '["thread_id"] : entry_rx_state_?.["thread_id"]' in drawn
    assert '["run_id"] : entry_rx_state_?.["run_id"]' in drawn
    sent = len(tab.requests())
    await inbox.cls.inbox_resolve.fn(inbox.chat, entry.thread_id, {"approved": True}, None, entry.run_id)
    assert len(tab.requests()) == sent + 1
    assert tab.requests()[-1]["resume"][0] == {"interruptId": interrupt_id, "status": "resolved",
                                               "payload": {"approved": True}}
    assert inbox.chat.inbox_sets == []


async def test_s18_a_set_drawn_outside_the_chat_keeps_the_default_card_in_the_inbox(agent):
    url, store = agent
    chat = ic.Chat(url, interrupts=[(DeclAside, lambda slot: rx.fragment())], name="decl-aside")
    tab = await Tab(chat.state, store).load()
    await tab.send("approval")
    await tab.cls.load_inbox.fn(tab.chat)
    assert [card.id for card in tab.chat.inbox] == tab.ids() and tab.chat.inbox_sets == []
