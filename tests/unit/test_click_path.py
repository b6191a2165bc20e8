"""The click path (issue 45, docs/decisions/0028): the resume leaves before the audit is written, and nothing of
the answer is lost for it: the audit entry, its wait (read at the claim) and the trail are all there after."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

import interrupt_chat as ic
from interrupt_chat.demo.agent import DemoStore, create_app
from interrupt_chat.store.schema import decisions_table as d
from tests.unit.agents import serve_in_thread
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures
from tests.unit.test_consistency import Tab


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, DemoStore, list[tuple[float, bool]]]]:
    app = create_app(delay=0.0)
    store, received = app.state.store, []
    keep = store.record

    def stamped(body):  # when each request reached the agent, and whether it was a resume
        received.append((time.time(), bool(body.resume)))
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
    assert len(resumed) == 1 and entry.action == "resolved"
    assert resumed[0] <= entry.at.timestamp()  # the request left first; the entry followed
    with database._transaction("read the wait") as conn:
        waited = conn.execute(select(d.c.waited_ms).where(d.c.id == entry.id)).scalar()
    assert waited is not None and 50 <= waited < 60_000  # read at the claim, before the run cleared it
    assert [row["action"] for row in tab.chat.decisions] == ["resolved"]  # the trail shows it
    assert entry.at <= datetime.now(UTC)
