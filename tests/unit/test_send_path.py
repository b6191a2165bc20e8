"""The send path (issue 45, docs/decisions/0034): a message's claim is its one database call before the agent.

The copy this process last wrote is not checked first (the claim's conditional write checks it), the
person's pause is read in the claim's call, and the run's end reads the thread list in its save's call.
Nothing of that may cost a check: another worker's claim and a pause stored elsewhere still refuse.
"""

from __future__ import annotations

import time

import pytest

import interrupt_chat as ic
from interrupt_chat.store import policies, pools
from interrupt_chat.tab.pausing import PAUSED_MESSAGE, person_of
from interrupt_chat.tab.sending import DELETED_NOTICE
from interrupt_chat.workers import runs
from tests.redis_server import MISSING, redis_server_binary, running_redis
from tests.unit.tabs import (  # noqa: F401 - fixtures
    database_fixture,
    demo_agent_fixture,
    heads_fixture,
    other_worker,
    page_fixture,
)
from tests.unit.test_consistency import Tab, stored_texts

BUSY_NOTICE = "Wait for the current answer, or stop it."


@pytest.fixture
def calls(monkeypatch) -> list[str]:
    """The database calls the chat makes (each one a trip to a database thread), by the function's name."""
    seen: list[str] = []
    real = pools.run

    def counted(fn, *args, **kwargs):
        seen.append(getattr(fn, "__name__", repr(fn)))
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(pools, "run", counted)
    return seen


async def _sent(agent, name: str) -> Tab:
    """A tab of a new chat whose thread holds one answered message, saved by this process."""
    url, store = agent
    tab = await Tab(ic.Chat(url, name=name).state, store).load()
    await tab.send("hello")
    assert tab.chat.status == "idle" and len(tab.requests()) == 1
    return tab


async def test_a_send_on_the_copy_this_worker_wrote_claims_at_once_and_its_end_lists_with_the_save(
        agent, database, calls, heads):
    tab = await _sent(agent, "send-path-trusted")
    time.sleep(0.02)
    del calls[:], heads[:]
    await tab.send("again")
    assert len(tab.requests()) == 2 and tab.chat.status == "idle"
    assert heads == []  # no check before the claim: its conditional write is the check
    assert calls[0] == "_claim"  # the pause read inside it, not a call of its own
    assert "paused_since" not in calls and "threads" not in calls  # the end's list came with its save
    assert "_save_extending" in calls
    assert [row["id"] for row in tab.chat.threads] == [tab.chat.thread_id]
    assert stored_texts(database, tab.chat._owner_key, tab.chat.thread_id) == ["hello", "again"]


async def test_s10_another_workers_claim_makes_a_trusted_send_lose_and_nothing_is_sent(agent, database, heads):
    tab = await _sent(agent, "send-path-other-claim")
    owner, thread_id = tab.chat._owner_key, tab.chat.thread_id
    with other_worker(database) as other:
        stored = other.read(owner, thread_id)
        assert stored is not None
        other.save(owner, stored.session, revision=stored.revision, in_flight=True)  # its run's claim, just now
    del heads[:]
    await tab.send("again")
    assert len(tab.requests()) == 1  # the other worker's run holds the thread: this send starts nothing
    assert tab.chat.notice == BUSY_NOTICE and set(heads) == {thread_id}  # the refusal rests on a checked copy
    assert [m.content for m in tab.session.transcript.messages if m.role == "user"] == ["hello"]
    assert stored_texts(database, owner, thread_id) == ["hello"]


async def test_s21_a_trusted_copy_with_a_set_waiting_refuses_the_send_on_a_checked_copy(agent, database, heads):
    """S21: the composer sends nothing while the agent waits; a refusal on a copy taken on trust is checked first."""
    url, store = agent
    tab = await Tab(ic.Chat(url, name="send-path-s21").state, store).load()
    await tab.send("approval")
    assert tab.ids() and tab.chat.status == "interrupted"
    sent = len(tab.requests())
    del heads[:]
    await tab.send("hello")
    assert len(tab.requests()) == sent and tab.chat.notice == "Answer or cancel the agent's request first."
    assert heads == [tab.chat.thread_id]  # read once: the refusal rests on the stored thread, not on trust
    assert [m.content for m in tab.session.transcript.messages if m.role == "user"] == ["approval"]


async def test_a_pause_stored_elsewhere_refuses_the_claim_and_leaves_nothing_behind(agent, database, heads):
    """Contracts §6.4: while the pause is on, a new message is refused, with ``pause-banner`` shown."""
    tab = await _sent(agent, "send-path-paused")
    owner, thread_id = tab.chat._owner_key, tab.chat.thread_id
    assert policies.set_pause(database, person_of(owner), True)  # another worker's tab: this copy does not know
    try:
        del heads[:]
        await tab.send("again")
        assert len(tab.requests()) == 1 and heads == []  # refused by the claim's call: nothing reached the agent
        assert tab.chat.paused and tab.chat.notice == PAUSED_MESSAGE and tab.chat.status == "idle"
        assert [m.content for m in tab.session.transcript.messages if m.role == "user"] == ["hello"]
        assert stored_texts(database, owner, thread_id) == ["hello"]
        assert not database.head(owner, thread_id).in_flight
    finally:
        policies.set_pause(database, person_of(owner), False)
    await tab.send("again")  # resumed elsewhere: the next send goes, and the banner goes away
    assert len(tab.requests()) == 2 and not tab.chat.paused
    assert stored_texts(database, owner, thread_id) == ["hello", "again"]


async def test_a_turn_that_asks_a_person_lists_the_threads_after_its_saves_notice(agent, database, calls):
    """The save of a set that waits for a person is followed by the notice the other tabs' cards wait for."""
    tab = await _sent(agent, "send-path-asks")
    del calls[:]
    await tab.send("approval")
    assert tab.ids() and tab.chat.status == "interrupted"
    assert calls.index("_save_extending") < calls.index("threads")  # its own read, after the save's call
    assert [row["id"] for row in tab.chat.threads] == [tab.chat.thread_id]


async def test_a_trusted_send_to_a_thread_deleted_elsewhere_says_so_and_sends_nothing(agent, database):
    tab = await _sent(agent, "send-path-deleted")
    owner, thread_id = tab.chat._owner_key, tab.chat.thread_id
    with other_worker(database) as other:
        assert other.delete(owner, thread_id)  # another worker's tab deleted it: this copy does not know
    await tab.send("again")
    assert len(tab.requests(thread_id)) == 1 and tab.chat.notice == DELETED_NOTICE
    assert tab.chat.thread_id != thread_id and database.read(owner, thread_id) is None


async def test_a_sends_run_is_announced_once_with_its_claim(agent, database, monkeypatch):
    """With Redis (several workers), the claim registers the run; the driver does not announce it again."""
    if redis_server_binary() is None:
        pytest.skip(MISSING)
    with running_redis() as url:
        registry = runs.Registry(redis_url=url)
        monkeypatch.setattr(runs, "_registry", registry)
        added: list[runs.Key] = []
        real = registry.add

        async def counted(key: runs.Key, run: runs.Run) -> None:
            added.append(key)
            await real(key, run)

        monkeypatch.setattr(registry, "add", counted)
        tab = await _sent(agent, "send-path-announced")
        assert added == [(tab.chat._owner_key, tab.chat.thread_id)] and tab.chat.status == "idle"
        assert runs.local(added[0]) is None  # released with the end's save
