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
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures
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
