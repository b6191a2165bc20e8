"""OpenTelemetry spans: ``interrupt_chat.run`` → ``interrupt_chat.request`` → ``interrupt_chat.decision``.

A tab of the real chat (``rx.State`` tree) against the scripted demo agent on loopback, one SQLite thread
database; the spans go to the SDK's in-memory exporter through a provider given to the traces module
(the process's global provider is left alone: it can be set once only).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from interrupt_chat.agui import AgentSession
from interrupt_chat.assembly.registry import new_chat_state
from interrupt_chat.assembly.state import ChatState
from interrupt_chat.demo.agent.interrupts import DELETE_ARGS
from interrupt_chat.workers import traces
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

pytestmark = pytest.mark.loopback

BROWSER = "Xb3kQ9_zR2mT5vW8yA1cDe"  # the tab's browser identity (22 URL-safe characters)


@pytest.fixture(scope="module")
def chat_cls(agent) -> type[ChatState]:
    return new_chat_state("traces", agent_url=agent[0], configs=[])


@pytest.fixture(name="exporter")
def exporter_fixture() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traces.use_provider(provider)
    yield exporter
    traces.use_provider(None)
    provider.shutdown()


def named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == f"interrupt_chat.{name}"]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_a_run_its_request_and_the_decision_nest(chat_cls, agent, exporter):
    tab = await Tab(chat_cls, agent[1], owner=BROWSER).load()
    await tab.send("approval")
    [interrupt_id] = tab.ids()
    thread_id, run_id = tab.chat.thread_id, tab.session.tracker.pending.run_id  # type: ignore[union-attr]
    await tab.resolve({"approved": True}, interrupt_id)
    spans = exporter.get_finished_spans()

    first_run, resumed = named(spans, "run")  # the run that asked, then the resume
    [request] = named(spans, "request")
    [decision] = named(spans, "decision")
    assert parent_of(first_run) is None and parent_of(request) == first_run.context.span_id
    assert parent_of(decision) == request.context.span_id
    assert first_run.context.trace_id == request.context.trace_id == decision.context.trace_id
    assert dict(first_run.attributes or {}) == {"interrupt_chat.thread_id": thread_id, "interrupt_chat.run_id": run_id}
    assert dict(request.attributes or {}) == {
        "interrupt_chat.thread_id": thread_id, "interrupt_chat.run_id": run_id,
        "interrupt_chat.interrupt_id": interrupt_id, "interrupt_chat.reason": "tool_call",
        "interrupt_chat.tool": "delete_files"}
    assert dict(decision.attributes or {}) == {
        "interrupt_chat.thread_id": thread_id, "interrupt_chat.run_id": run_id,
        "interrupt_chat.interrupt_id": interrupt_id, "interrupt_chat.action": "resolved", "interrupt_chat.by": "person"}
    assert request.end_time is not None and decision.end_time is not None and request.end_time >= decision.end_time
    assert resumed.attributes and resumed.attributes["interrupt_chat.thread_id"] == thread_id
    assert resumed.attributes["interrupt_chat.run_id"] != run_id

    secrets = [tab.chat._owner_key, BROWSER, *[v for v in DELETE_ARGS.values() if isinstance(v, str)]]  # the path
    values = [str(v) for span in spans for v in (span.attributes or {}).values()]
    assert not [(s, v) for s in secrets for v in values if s in v]


def test_a_decision_whose_request_span_is_not_here_is_a_root(exporter):
    traces.decided("thread-elsewhere", "run-9", "int-9", "rejected", "link")
    [decision] = named(exporter.get_finished_spans(), "decision")
    assert decision.parent is None
    assert dict(decision.attributes or {})["interrupt_chat.by"] == "link"


def test_the_open_requests_are_bounded(exporter, monkeypatch):
    monkeypatch.setattr(traces, "OPEN_REQUESTS", 2)
    tracer = traces._tracer()
    for n in range(3):
        traces._keep(("t-bound", f"int-{n}"), tracer.start_span("interrupt_chat.request"))
    assert len(named(exporter.get_finished_spans(), "request")) == 1  # the oldest ended when the third came
    for n in range(3):
        traces.decided("t-bound", None, f"int-{n}", "cancelled", "bulk")
    decisions = named(exporter.get_finished_spans(), "decision")
    assert [parent_of(d) is None for d in decisions] == [True, False, False]


def test_without_an_sdk_nothing_records():
    traces.use_provider(None)
    run = traces.run_started(AgentSession("http://agent.invalid/", thread_id="t-none"))
    assert not run.span.is_recording()
    traces.run_ended(run, AgentSession("http://agent.invalid/", thread_id="t-none"))
