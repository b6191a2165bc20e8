"""The click path (issue 45, docs/decisions/0028): the resume leaves before the audit is written, and nothing of
the answer is lost for it: the audit entry, its wait (read at the claim) and the trail are all there after."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import select, text

import interrupt_chat as ic
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.store.schema import decisions_table as d
from interrupt_chat.tab import answers
from interrupt_chat.tab.answers import ANSWERED_ELSEWHERE
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, heads_fixture, other_worker, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, DemoStore, list[tuple[float, str]]]]:
    app = create_app(delay=0.0)
    store, received = app.state.store, []
    keep = store.record

    def stamped(body):  # when each request reached the agent, and its resume as it arrived (before the store redacts)
        received.append((time.time(), body.model_dump_json(by_alias=True) if body.resume else ""))
        keep(body)

    store.record = stamped
    with serve_in_thread(app) as base:
        yield f"{base}/", store, received


async def test_the_resume_reaches_the_agent_before_the_audit_entry_is_written(agent, database):
    url, store, received = agent
    tab = await Tab(ic.Chat(url, name="click-path").state, store).load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    time.sleep(0.05)  # a wait the entry must show
    await tab.resolve({"approved": True}, interrupt_id)
    [entry] = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    resumed = [at for at, resume in received if resume]
    del received[:]
    assert len(resumed) == 1 and entry.action == "resolved"
    assert resumed[0] <= entry.at.timestamp()  # the request left first; the entry followed
    with database._transaction("read the wait") as conn:
        waited = conn.execute(select(d.c.waited_ms).where(d.c.id == entry.id)).scalar()
    assert waited is not None and 50 <= waited < 60_000  # read at the claim, before the run cleared it
    assert [row["action"] for row in tab.chat.decisions] == ["resolved"]  # the trail shows it
    assert entry.at <= datetime.now(UTC)


async def test_s23_a_secret_answer_reaches_the_agent_and_no_entry_written_after_the_resume(agent, database):
    """The entries now follow the resume (decision 0028): they are still written masked, and nothing else keeps it."""
    url, store, received = agent
    secret = "click-path-SECRET-7c1d"
    tab = await Tab(ic.Chat(url, name="click-path-s23").state, store).load()
    await tab.send("credential")
    [interrupt_id] = tab.ids()
    await tab.resolve({"api_key": secret}, interrupt_id)
    assert any(secret in resume for _, resume in received)  # the resume carried it
    del received[:]
    [entry] = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    assert entry.action == "resolved" and secret not in repr(entry)
    with database._transaction("read every table") as conn:
        for table in ("interrupt_chat_decisions", "interrupt_chat_threads"):
            rows = conn.execute(text(f"SELECT * FROM {table}")).fetchall()
            assert rows and secret not in repr(rows), table
    assert secret not in repr(tab.chat.decisions) and secret not in repr(tab.chat.dict())


# -- decision 0032: the claim is the check -----------------------------------------------------------------

async def _asking(agent, name: str) -> tuple[Tab, str]:
    """A tab of a new chat whose thread waits for one approval, and that approval's id."""
    url, store, _received = agent
    tab = await Tab(ic.Chat(url, name=name).state, store).load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    return tab, interrupt_id


async def test_an_answer_on_the_copy_this_worker_wrote_makes_no_head_read(agent, database, heads):
    """The copy is at the revision this process last wrote, with no run's claim: the conditional write checks it."""
    received = agent[2]
    tab, interrupt_id = await _asking(agent, "click-path-trusted")
    time.sleep(0.05)
    del heads[:], received[:]
    await tab.resolve({"approved": True}, interrupt_id)
    assert heads == []  # straight to the claim
    assert len([resume for _, resume in received if resume]) == 1 and tab.chat.status != "interrupted"
    [entry] = database.decisions(tab.chat._owner_key, tab.chat.thread_id)
    with database._transaction("read the wait") as conn:
        waited = conn.execute(select(d.c.waited_ms).where(d.c.id == entry.id)).scalar()
    assert waited is not None and 50 <= waited < 60_000  # the wait, from the remembered head


async def test_s10_another_workers_claim_makes_the_trusted_copy_lose_and_nothing_is_sent(agent, database, heads):
    """Another worker (its own ThreadDB on the same file) claimed the thread: this copy loses, nothing leaves."""
    received = agent[2]
    tab, interrupt_id = await _asking(agent, "click-path-other-claim")
    owner, thread_id = tab.chat._owner_key, tab.chat.thread_id
    with other_worker(database) as other:
        stored = other.read(owner, thread_id)
        assert stored is not None and stored.session.tracker.pending is not None
        other.save(owner, stored.session, revision=stored.revision, in_flight=True)  # its resume's claim
    del heads[:], received[:]
    await tab.resolve({"approved": True}, interrupt_id)
    assert [resume for _, resume in received if resume] == []  # S10: the other worker resumes, not this tab
    assert tab.chat.notice == ANSWERED_ELSEWHERE
    assert heads  # the refusal rests on a checked copy


async def test_a_refusal_on_a_trusted_copy_is_checked_and_the_answer_is_claimed(agent, database, heads):
    """This copy waits for nothing, but another worker left the thread waiting: checked, read again, and claimed.

    The chat's card and the inbox load the thread before they answer; ``answers.record`` itself must not
    refuse on a copy it did not check, whoever calls it.
    """
    tab, interrupt_id = await _asking(agent, "click-path-recheck")
    owner, thread_id = tab.chat._owner_key, tab.chat.thread_id
    with other_worker(database) as other:
        waiting = other.read(owner, thread_id)
        assert waiting is not None and waiting.session.tracker.pending is not None
        run_id = waiting.session.tracker.pending.run_id
        await tab.resolve({"approved": True}, interrupt_id)  # answered here: this copy waits for nothing now
        assert tab.session.tracker.pending is None
        now = other.read(owner, thread_id)
        assert now is not None
        other.save(owner, waiting.session, revision=now.revision)  # the other worker's copy: the set waits again
    del heads[:]
    errors: list[str] = []
    outcome, moved = await answers.record(tab.chat, thread_id, lambda pending: pending is not None
                                          and pending.run_id == run_id, "resolve", {"approved": False},
                                          interrupt_id, lambda _card, message: errors.append(message))
    assert heads == [thread_id] and moved and errors == [] and tab.chat.notice != ANSWERED_ELSEWHERE
    assert outcome is not None and outcome.events is not None  # claimed: the resume is the next thing to leave
    await outcome.events.aclose()
    head = database.head(owner, thread_id)
    assert head.in_flight and head.revision == tab.session.revision


async def test_the_resume_request_is_sent_before_the_answered_card_is_redrawn(agent, monkeypatch):
    """Decision 0032, item 6: once the claim holds, the POST is written first; the page's redraw follows it."""
    import httpx

    from interrupt_chat.tab import driver

    received = agent[2]
    tab, interrupt_id = await _asking(agent, "click-path-post-first")
    order: list[str] = []
    send, publish = httpx.AsyncClient.send, driver.publish

    async def sending(client, request, *args, **kwargs):
        order.append("post" if b"resume" in request.content else "request")
        return await send(client, request, *args, **kwargs)

    async def publishing(*args, **kwargs):
        order.append("publish")
        return await publish(*args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "send", sending)
    monkeypatch.setattr(driver, "publish", publishing)
    del received[:]
    await tab.resolve({"approved": True}, interrupt_id)
    assert order[:2] == ["post", "publish"], order  # the request first, then the answered card
    assert len([resume for _, resume in received if resume]) == 1 and tab.chat.status != "interrupted"


async def test_the_asking_tabs_trail_is_read_before_its_lock(agent, database, monkeypatch):
    """After the answer's audit entry, the trail is read first, then shown in the lock: the follow-up's pushes
    (which take that lock) do not wait for the read."""
    from reflex.state import BaseState

    from interrupt_chat.tab import trail

    tab, interrupt_id = await _asking(agent, "click-path-trail-unlocked")
    depth, reads = [0], []
    enter, leave, records_of = BaseState.__aenter__, BaseState.__aexit__, trail.records_of

    async def entering(self):
        depth[0] += 1
        return await enter(self)

    async def leaving(self, *exc):
        depth[0] -= 1
        return await leave(self, *exc)

    async def reading(owner: str, thread_id: str):
        reads.append(depth[0])
        return await records_of(owner, thread_id)

    monkeypatch.setattr(BaseState, "__aenter__", entering)
    monkeypatch.setattr(BaseState, "__aexit__", leaving)
    monkeypatch.setattr(trail, "records_of", reading)
    await tab.resolve({"approved": True}, interrupt_id)
    assert reads and reads[-1] == 0, reads  # the answer's trail: read with no state lock held
    assert [row["action"] for row in tab.chat.decisions] == ["resolved"]
