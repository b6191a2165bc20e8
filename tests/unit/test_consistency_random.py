"""Random tabs, workers and restarts against the scripted agent: exactly once, nothing lost, nothing leaked.

Three tabs (two of one browser, one of another person) on two workers (two ``ThreadDB`` objects
on one SQLite file, each tab's calls reaching its own) send, answer (from the chat and from the
inbox), answer frontend tools, rename, delete, switch, open new threads and restart (a fresh state
tree, maybe on the other worker), two tabs at a time. Afterwards, from what the agent received and
what the database holds:

- the agent received at most one resume per pending set and one result per tool call;
- no turn is lost: every user message the agent received is in its thread (unless deleted);
- no thread reached another owner.

CI runs a fixed seed and a bounded count. Run it longer with, for example,
``IC_RANDOM_SEED=7 IC_RANDOM_STEPS=2000 .venv/bin/python -m pytest tests/unit/test_consistency_random.py``.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import random
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.store.threads_db import ThreadDB
from interrupt_chat.tab import persistence
from interrupt_chat.workers import runs
from tests.unit.tabs import demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Steps, Tab

pytestmark = pytest.mark.loopback

SEED = int(os.environ.get("IC_RANDOM_SEED", "4"))
STEPS = int(os.environ.get("IC_RANDOM_STEPS", "150"))
SCENARIOS = ("approval", "multi", "steps", "legacy", "choice", "hello")
class RandomSteps(Steps):
    """The steps tool for this test's own chat (a tool state serves one chat)."""


WORKER: contextvars.ContextVar[int] = contextvars.ContextVar("worker", default=0)


@pytest.fixture
def workers(monkeypatch, tmp_path) -> Iterator[list[ThreadDB]]:
    url = f"sqlite:///{tmp_path / 'threads.db'}"
    dbs = [ThreadDB(url), ThreadDB(url)]
    monkeypatch.setattr(persistence, "database", lambda: dbs[WORKER.get()])
    monkeypatch.setattr(runs, "_registry", runs.Registry(redis_url=""))  # shared liveness, as on Redis
    yield dbs
    for db in dbs:
        db.close()


class Player:
    """One tab and the worker it talks to."""

    def __init__(self, tab: Tab, worker: int) -> None:
        self.tab, self.worker = tab, worker


async def act(player: Player, rng: random.Random, n: int, errors: list[str]) -> None:
    """One random action of one tab, on its worker."""
    WORKER.set(player.worker)
    tab = player.tab
    chat, cls = tab.chat, tab.cls
    action = rng.choice(["send", "send", "answer", "answer", "answer", "answer", "inbox", "inbox", "tool", "tool",
                         "rename", "delete", "switch", "new", "restart", "restart"])
    try:
        if not chat.loaded:
            await tab.load()
        if action == "send":
            await tab.send(f"{rng.choice(SCENARIOS)} {tab.owner}-{n}")
        elif action == "answer":
            session = chat._sessions.get(chat.thread_id)
            pending = session.tracker.pending if session else None
            if pending is not None:
                target = rng.choice(pending.ids) if pending.ids else None
                verb = rng.choice(["approve", "reject", "cancel"])
                if verb == "cancel":
                    await tab.cancel(target)
                else:
                    await tab.resolve({"approved": verb == "approve", "color": "red"}, target)
        elif action == "inbox":
            await cls.load_inbox.fn(chat)
            if chat.inbox:
                card = rng.choice(chat.inbox)
                await cls.inbox_resolve.fn(chat, card.thread_id, {"approved": True, "color": "blue"},
                                           card.id or None, card.run_id)
        elif action == "tool":
            if chat.tool_waits:
                row = rng.choice(chat.tool_waits)
                await RandomSteps.respond.fn(await tab.tool(RandomSteps), row.id, {"steps": [n]})
        elif action == "rename" and chat.threads:
            row = rng.choice(chat.threads)
            await cls.rename_thread.fn(chat, {"thread_id": row["id"], "title": f"{tab.owner} title {n}"})
        elif action == "delete" and chat.threads:
            await cls.delete_thread.fn(chat, rng.choice(chat.threads)["id"])
        elif action == "switch" and chat.threads:
            await cls.switch_thread.fn(chat, rng.choice(chat.threads)["id"])
        elif action == "new":
            await cls.new_thread.fn(chat)
        elif action == "restart":
            player.worker = rng.randrange(2)
            tab.restart()
    except Exception as exc:  # noqa: BLE001 - an action may meet any state: it must never raise
        errors.append(f"step {n}: {action} on {tab.token}: {type(exc).__name__}: {exc}")


def owner_of_text(text: str) -> str | None:
    tag = text.split()[-1] if text.split() else ""
    return tag.rsplit("-", 1)[0] if "-" in tag else None


async def test_random_tabs_workers_and_restarts_keep_one_truth(agent, workers):
    url, store = agent
    store.clear()
    chat_cls: type[ChatState] = new_chat_state("consistency-random", agent_url=url, configs=[], tools=[RandomSteps])
    rng = random.Random(SEED)
    players = [Player(Tab(chat_cls, store, "alice"), 0), Player(Tab(chat_cls, store, "alice"), 1),
               Player(Tab(chat_cls, store, "bob"), 0)]
    errors: list[str] = []
    for n in range(STEPS):
        two = players[:2] if rng.random() < 0.6 else rng.sample(players, 2)  # mostly the one browser's two tabs
        await asyncio.gather(*(act(p, rng, n * 10 + i, errors) for i, p in enumerate(two)))
    for _ in range(200):  # let runs still streaming end
        if not runs._registry._runs:
            break
        await asyncio.sleep(0.05)
    assert errors == []

    db = workers[0]
    records = store.records()
    by_thread: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_thread[record["threadId"]].append(record)
    assert by_thread, "the random walk reached the agent"
    resumed = 0
    for thread_id, requests in by_thread.items():
        # one resume per set: a set is named by the run that raised it
        parents = [r["parentRunId"] for r in requests if r.get("resume") or _legacy_command(r)]
        assert len(parents) == len(set(parents)), f"{thread_id}: a set was resumed twice: {parents}"
        resumed += len(parents)
        # one result per tool call
        results: dict[str, set[str]] = defaultdict(set)
        for request in requests:
            calls = [m["toolCallId"] for m in request["messages"] if m["role"] == "tool"]
            assert len(calls) == len(set(calls)), f"{thread_id}: a call has two results in one request"
            for message in request["messages"]:
                if message["role"] == "tool":
                    results[message["toolCallId"]].add(str(message["content"]))
        assert all(len(v) == 1 for v in results.values()), f"{thread_id}: a tool call got two results"
        # nothing leaked, nothing lost
        texts = [str(m["content"]) for r in requests for m in r["messages"] if m["role"] == "user"]
        owners = {owner_of_text(t) for t in texts} - {None}
        assert len(owners) <= 1, f"{thread_id}: one thread holds the messages of {owners}"
        if not owners:
            continue
        (owner,) = owners
        key = f"{owner}|{chat_cls.get_full_name()}"
        head = db.head(key, thread_id)
        if head.deleted:
            continue
        assert head.revision, f"{thread_id}: the agent ran it but it is not {owner}'s in the database"
        stored = db.load(key, thread_id)
        assert stored is not None
        kept = {m.content for m in stored.transcript.messages if m.role == "user"}
        lost = [t for t in dict.fromkeys(texts) if t not in kept]
        assert lost == [], f"{thread_id}: turns lost from the database: {lost}"
        other = "bob" if owner == "alice" else "alice"
        assert db.head(f"{other}|{chat_cls.get_full_name()}", thread_id).revision == 0
    assert resumed, "the random walk resumed at least one set"


def _legacy_command(record: dict[str, Any]) -> bool:
    props = record.get("forwardedProps") or {}
    return isinstance(props, dict) and isinstance(props.get("command"), dict)
