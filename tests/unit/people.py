"""Shared by the people tests (issue 41): four people of one chat with ``people=``, each a tab.

Import the fixtures into a test module (they are named by ``name=``, so the imports stay unused names).
"""

from __future__ import annotations

import asyncio
import base64
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
import reflex as rx
from reflex.istate.data import SessionData

from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.demo.agent import DemoStore
from interrupt_chat.model.people import ANONYMOUS, Escalation, People, Person
from interrupt_chat.store.threads_db import ThreadDB
from interrupt_chat.tab import identity
from tests.unit.tabs import demo_agent_fixture
from tests.unit.test_consistency import wait_for

NEED = {"count": 1}
TEAM = People(
    [Person("alice", "Alice", roles=("staff",)), Person("bob", "Bob", roles=("finance",)),
     Person("dave", "Dave", roles=("finance",)), Person("carol", "Carol", roles=("managers",))],
    assign=lambda r: ["role:finance"] if r.tool == "delete_files" and r.asker else [],
    approvals=lambda r: NEED["count"] if r.tool == "delete_files" else 1,
    escalation=lambda r: Escalation(0.5, 0.8, ("role:managers",)) if r.tool == "delete_files" and r.asker else None,
)
_PERSON: dict[str, str] = {}  # tab token -> the app's login


def _login(chat: Any) -> str | None:
    return _PERSON.get(chat.router.session.client_token) or ANONYMOUS


agent_fixture = demo_agent_fixture  # (the people tests import it by this name)


@pytest.fixture(scope="module", name="chat_cls")
def chat_cls_fixture(agent, request) -> type[ChatState]:
    name = "people-" + request.module.__name__.rsplit(".", 1)[-1].replace("_", "-")  # one chat per test module
    cls = new_chat_state(name, agent_url=agent[0], configs=[], owner=_login)
    cls.people = TEAM
    return cls


@pytest.fixture(autouse=True, name="one_approval")
def one_approval_fixture() -> Iterator[None]:
    NEED["count"] = 1
    yield
    NEED["count"] = 1


class Tab:
    """One browser tab of one person."""

    count = 0

    def __init__(self, cls: type[ChatState], person: str) -> None:
        Tab.count += 1
        self.cls, self.token = cls, f"people-tab-{Tab.count}-{time.monotonic_ns()}"
        self.root = rx.State()
        self.root.rx_router_session = SessionData(client_token=self.token, client_ip="", session_id=self.token)
        self.chat: ChatState = self.root.get_substate(cls.get_full_name().split("."))
        self.browser = base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()  # as identity issues
        identity.bind(self.token, self.browser)
        _PERSON[self.token] = person

    async def load(self) -> Tab:
        await self.cls.on_load_chat.fn(self.chat)
        return self

    async def inbox(self, scope: str = "mine") -> list[Any]:
        if scope != self.chat.inbox_scope:
            await self.cls.inbox_set_scope.fn(self.chat, scope)
        await self.cls.load_inbox.fn(self.chat)
        return self.chat.inbox

    def card(self) -> Any:
        config = self.config()
        return config.cards[0] if config.cards else None

    def config(self) -> Any:
        return self.root.get_substate(self.cls.default_config.get_full_name().split("."))  # type: ignore[union-attr]

    async def approve(self, card: Any) -> None:
        await self.cls.inbox_resolve.fn(self.chat, card.thread_id, {"approved": True}, card.id, card.run_id)

    async def reject(self, card: Any) -> None:
        await self.cls.inbox_resolve.fn(self.chat, card.thread_id, {"approved": False}, card.id, card.run_id)


async def _ask(cls: type[ChatState]) -> Tab:
    alice = await Tab(cls, "alice").load()
    await cls.send.fn(alice.chat, {"text": "approval"})
    assert alice.chat.status == "interrupted"
    return alice


def _resumes(store_: DemoStore, thread_id: str) -> list[dict[str, Any]]:
    return [r for r in store_.records(thread_id) if r.get("resume")]


async def _settle(store_: DemoStore, thread_id: str, count: int) -> list[dict[str, Any]]:
    for _ in range(200):
        if len(_resumes(store_, thread_id)) >= count:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    return _resumes(store_, thread_id)


def _actions(db: ThreadDB, owner: str, thread_id: str) -> list[tuple[str, str, str]]:
    return [(d.action, d.actor, d.on_behalf_of) for d in db.decisions(owner, thread_id)]


DECISIONS = frozenset({"resolved", "rejected", "cancelled", "expired"})


async def _decided(db: ThreadDB, owner: str, thread_id: str) -> list[tuple[str, str, str]]:
    """The thread's audit actions once the entry of the answer that sent the resume is among them.

    That entry is written after the resume leaves (decision 0028): a test that saw the resume can be early.
    """
    await wait_for(lambda: any(action in DECISIONS for action, _, _ in _actions(db, owner, thread_id)))
    return _actions(db, owner, thread_id)
