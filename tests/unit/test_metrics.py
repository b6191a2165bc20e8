"""``GET /metrics`` (``ic.metrics_routes``): the approvals' numbers, counted by the thread database at scrape time.

A real thread database (a SQLite file, then PostgreSQL) with saved threads and recorded decisions; the
route served by Starlette's test client. The waits and the pending counts are set on the rows the way the
app writes them (``waited_ms``, ``pending_count``), so the histogram's buckets are known values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from sqlalchemy import update
from starlette.applications import Starlette
from starlette.testclient import TestClient

import interrupt_chat as ic
from interrupt_chat.agui import AgentSession
from interrupt_chat.approvals import metrics
from interrupt_chat.store.schema import decisions_table, threads_table
from interrupt_chat.store.threads_db import ThreadDB
from interrupt_chat.tab import persistence

MARKER = "qzx-marker-71"  # in the owner key, the answer and the argument: never in the output
OWNER = f"{MARKER}-alice|interrupt_chat.state.chat_state"  # an owner key: "<person>|<chat state>"
OTHER = "Xb3kQ9_zR2mT5vW8yA1cDe|interrupt_chat.state.chat_state"  # a browser's identity (22 URL-safe chars)
WAITS_MS = {"i1": 200, "i2": 3000, "i3": 7_200_000, "i4": None}  # the decisions' waits (None: unknown)


def _fill(db: ThreadDB) -> None:
    for owner, thread_id, in_flight in ((OWNER, "t-run", True), (OWNER, "t-wait", False), (OTHER, "t-b", True)):
        db.save(owner, AgentSession("http://agent.invalid/", thread_id=thread_id), revision=0, in_flight=in_flight)
    args = {"invoice": f"INV-{MARKER}", "amount": 12000}
    for interrupt_id, action, by in (("i1", "resolved", "person"), ("i2", "rejected", "person"),
                                     ("i3", "resolved", "link"), ("i4", "cancelled", "bulk")):
        db.record_decision(OWNER, "t-wait", "run-1", interrupt_id, "tool_call", action,
                           {"approved": True, "note": MARKER, "args": args}, None, by, None, tool="pay_invoice")
    db.record_decision(OTHER, "t-b", "run-2", "i5", "tool_call", "resolved", None, None, "policy",
                       {"tool": "pay_invoice"}, tool="pay_invoice")  # a rule's answer before the card: waited 0
    db.record_decision(OTHER, "t-b", "run-2", "i6", "tool_call", "shadow", None, None, "policy", None)
    db.record_decision(OTHER, "", None, "", None, "paused")
    db.record_decision(OWNER, "", None, "", None, "rule-made", {"tool": "pay_invoice"})  # chained only: not counted
    with db._engine.begin() as conn:
        d, t = decisions_table, threads_table
        for interrupt_id, waited in WAITS_MS.items():
            conn.execute(update(d).where(d.c.interrupt_id == interrupt_id).values(waited_ms=waited))
        conn.execute(update(t).where(t.c.thread_id == "t-wait").values(pending_count=2))
        conn.execute(update(t).where(t.c.thread_id == "t-b").values(pending_count=1))


@pytest.fixture(name="db")
def db_fixture(db_url: str) -> Iterator[ThreadDB]:
    db = ThreadDB(db_url)
    _fill(db)
    yield db
    db.close()


def samples(text: str) -> dict[str, float]:
    """``{'name{labels}': value}`` of the text format's sample lines."""
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


def test_the_four_families_carry_what_the_database_holds(db: ThreadDB):
    text = metrics.render(db).decode()
    got = samples(text)
    assert got["interrupt_chat_pending"] == 3
    assert got["interrupt_chat_runs_active"] == 2
    assert {k: v for k, v in got.items() if k.startswith("interrupt_chat_decisions_total")} == {
        'interrupt_chat_decisions_total{action="resolved",by="person"}': 1,
        'interrupt_chat_decisions_total{action="rejected",by="person"}': 1,
        'interrupt_chat_decisions_total{action="resolved",by="link"}': 1,
        'interrupt_chat_decisions_total{action="cancelled",by="bulk"}': 1,
        'interrupt_chat_decisions_total{action="resolved",by="policy"}': 1,
        'interrupt_chat_decisions_total{action="shadow",by="policy"}': 1,
        'interrupt_chat_decisions_total{action="paused",by="person"}': 1,
    }  # rule-made (the chain's own) is not a decision
    buckets = {k: v for k, v in got.items() if k.startswith("interrupt_chat_decision_seconds_bucket")}
    le = {re.search(r'le="([^"]+)"', k).group(1): v for k, v in buckets.items()}  # type: ignore[union-attr]
    # known waits: 0 s (the rule's), 0.2 s, 3 s, 2 h; the bulk cancel's is unknown; the shadow entry is no wait
    assert (le["0.5"], le["1.0"], le["5.0"], le["3600.0"], le["14400.0"], le["+Inf"]) == (2, 2, 3, 3, 4, 4)
    assert got["interrupt_chat_decision_seconds_count"] == 4
    assert got["interrupt_chat_decision_seconds_sum"] == pytest.approx(0.2 + 3 + 7200)
    for family in ("pending gauge", "decisions_total counter", "decision_seconds histogram", "runs_active gauge"):
        name, kind = family.split()
        assert f"# TYPE interrupt_chat_{name} {kind}" in text


def test_no_owner_answer_or_argument_reaches_the_output(db: ThreadDB):
    text = metrics.render(db).decode()
    assert MARKER not in text
    assert OTHER.split("|")[0] not in text and "interrupt_chat.state" not in text
    assert "INV-" not in text and "12000" not in text


def test_a_second_process_reads_the_same_totals(db: ThreadDB, db_url: str):
    other = ThreadDB(db_url)  # another worker's (or a restarted worker's) handle on the same database
    try:
        assert samples(metrics.render(other).decode()) == samples(metrics.render(db).decode())
    finally:
        other.close()


@pytest.fixture(name="client")
def client_fixture(monkeypatch, tmp_path) -> Iterator[TestClient]:
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", f"sqlite:///{tmp_path / 'threads.db'}")
    db = persistence.database()
    assert db is not None
    _fill(db)
    with TestClient(Starlette(routes=ic.metrics_routes())) as client:
        yield client


def test_the_route_answers_prometheus_text(client: TestClient):
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert samples(response.text)["interrupt_chat_pending"] == 3
    assert MARKER not in response.text
    assert client.post("/metrics").status_code == 405


def test_with_a_token_set_a_scrape_needs_the_bearer(client: TestClient, monkeypatch):
    monkeypatch.setenv("INTERRUPT_CHAT_METRICS_TOKEN", "s3cret-token")
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Basic s3cret-token"}).status_code == 401
    denied = client.get("/metrics", headers={"Authorization": "Bearer s3cret-token-and-more"})
    assert denied.status_code == 401 and "interrupt_chat" not in denied.text
    ok = client.get("/metrics", headers={"Authorization": "Bearer s3cret-token"})
    assert ok.status_code == 200 and "interrupt_chat_runs_active 2.0" in ok.text


def test_without_a_database_the_route_says_so(monkeypatch):
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", "off")
    with TestClient(Starlette(routes=ic.metrics_routes())) as client:
        assert client.get("/metrics").status_code == 503
