"""OpenTelemetry spans of runs, requests and decisions, through ``opentelemetry-api`` only.

Nothing is recorded, and next to nothing is spent, until the app configures an SDK (the API's tracer
is a no-op until then; the guide "Evidence" shows how to ship the spans to a collector).

- ``interrupt_chat.run``: one agent run, from its first event to the end of its stream; the run's span
  is the current one meanwhile (an instrumented HTTP client's request to the agent is its child).
- ``interrupt_chat.request``: each interrupt a run surfaced, a child of the run's span; it stays open
  until the request is decided, so its length is the wait.
- ``interrupt_chat.decision``: a decision about a request (a person, a rule, a bulk answer, a link or the
  expiry); the child of its request's span when that span is open in this process. A decision made in
  another worker, after a restart, or after the span was evicted from the bounded table of open
  requests (:data:`OPEN_REQUESTS`: the oldest ends there) is a span of its own, a new root.

Attributes are ids (``interrupt_chat.thread_id``, ``.run_id``, ``.interrupt_id``), the interrupt's
``reason`` and tool, the decision's ``action`` and ``by``: never an owner, an answer, an argument or a secret.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextvars import Token
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace

if TYPE_CHECKING:
    from ..agui import AgentSession
    from ..agui.interrupts import Pending

__all__ = ["FINAL_ACTIONS", "OPEN_REQUESTS", "Run", "decided", "run_ended", "run_started", "use_provider"]

TRACER = "interrupt_chat"
OPEN_REQUESTS = 1024  # request spans kept open for their decision, per process (the oldest ends first)
FINAL_ACTIONS = ("resolved", "cancelled", "rejected", "expired", "dismissed")  # a decision that ends its request
THREAD, RUN, INTERRUPT = "interrupt_chat.thread_id", "interrupt_chat.run_id", "interrupt_chat.interrupt_id"

_provider: trace.TracerProvider | None = None
_open: OrderedDict[tuple[str, str], trace.Span] = OrderedDict()
_lock = threading.Lock()


def use_provider(provider: trace.TracerProvider | None) -> None:
    """Record through ``provider`` (None: the global one, ``trace.set_tracer_provider``'s); for tests mostly."""
    global _provider
    _provider = provider


def _tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER, tracer_provider=_provider)


@dataclass
class Run:
    """A run's span while it streams, and what the session held when it started."""

    span: trace.Span
    token: Token[otel_context.Context]
    run_id: str | None
    pending: Pending | None


def run_started(session: AgentSession) -> Run:
    """Open the span of the run ``session`` is about to stream, and make it the current one."""
    span = _tracer().start_span("interrupt_chat.run", attributes={THREAD: session.thread_id})
    token = otel_context.attach(trace.set_span_in_context(span))
    return Run(span, token, session.last_run_id, session.tracker.pending)


def run_ended(run: Run, session: AgentSession) -> None:
    """The run's stream ended: open a span per interrupt it surfaced (children of the run's), end the run's."""
    otel_context.detach(run.token)
    pending = session.tracker.pending
    surfaced = pending is not None and pending is not run.pending
    run_id = pending.run_id if surfaced and pending is not None else (
        session.last_run_id if session.last_run_id != run.run_id else None)
    if run_id:
        run.span.set_attribute(RUN, run_id)
    if surfaced and pending is not None:
        _requests(run.span, session, pending)
    run.span.end()


def _requests(parent: trace.Span, session: AgentSession, pending: Pending) -> None:
    within = trace.set_span_in_context(parent)
    tracer = _tracer()
    calls = session.transcript.tool_calls
    for interrupt_id, reason, tool in _asked(pending, calls):
        attributes = {THREAD: session.thread_id, INTERRUPT: interrupt_id, "interrupt_chat.reason": reason}
        if pending.run_id:
            attributes[RUN] = pending.run_id
        if tool:
            attributes["interrupt_chat.tool"] = tool
        span = tracer.start_span("interrupt_chat.request", context=within, attributes=attributes)
        _keep((session.thread_id, interrupt_id), span)


def _asked(pending: Pending, calls: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(interrupt id, reason, tool)`` of each interrupt of the set (a legacy set: one, id "")."""
    if pending.kind == "legacy":
        return [("", "legacy", "")]
    asked = []
    for interrupt in pending.interrupts:
        call = calls.get(interrupt.tool_call_id or "")
        metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
        tool = call.name if call is not None else metadata.get("tool_name") or ""
        asked.append((interrupt.id, interrupt.reason or "", str(tool)))
    return asked


def _keep(key: tuple[str, str], span: trace.Span) -> None:
    with _lock:
        stale = _open.pop(key, None)
        _open[key] = span
        evicted = [_open.popitem(last=False)[1] for _ in range(max(0, len(_open) - OPEN_REQUESTS))]
    for old in [s for s in (stale, *evicted) if s is not None]:
        old.end()  # asked again, or the oldest: its decision will be a root of its own


def decided(thread_id: str, run_id: str | None, interrupt_id: str | None, action: str, by: str) -> None:
    """A decision was recorded: its span (the child of its request's, when open here); a final one ends the request."""
    key = (thread_id, interrupt_id or "")
    with _lock:
        request = _open.pop(key, None) if action in FINAL_ACTIONS else _open.get(key)
    within = trace.set_span_in_context(request) if request is not None else otel_context.Context()
    attributes = {THREAD: thread_id, INTERRUPT: interrupt_id or "", "interrupt_chat.action": action,
                  "interrupt_chat.by": by}
    if run_id:
        attributes[RUN] = run_id
    _tracer().start_span("interrupt_chat.decision", context=within, attributes=attributes).end()
    if request is not None and action in FINAL_ACTIONS:
        request.end()
