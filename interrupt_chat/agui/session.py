"""One chat thread with an agent: the pipeline transport -> chunks -> verify -> reduce + interrupts.

``AgentSession`` is what a UI (the Reflex shell) or a script drives: ``send`` a user message,
``resolve``/``cancel`` interrupts through :attr:`tracker`, ``submit`` the resulting
:class:`Decision`. Every run folds into :attr:`transcript` and :attr:`tracker`; a failure is
recorded (``error``) and never raised, so the session always stays usable for the next run.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from datetime import datetime
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Context,
    EventType,
    InputContent,
    RunAgentInput,
    ToolCallResultEvent,
)

from .branches import Branches
from .chunks import ChunkExpander
from .coalesce import coalesce
from .errors import (
    AgentError,
    AgentTimeoutError,
    ChunkError,
    ProtocolViolation,
    RunCancelled,
    RunInFlight,
    ToolCallNotWaiting,
)
from .frontend_tools import FrontendTool, FrontendTools, ToolWait, error_result, result_text
from .interrupts import Decision, InterruptTracker, Pending, secret_parts
from .multimodal import resolve, user_content
from .predict import CONFIRM_TOOL, rejects
from .sanitize import display_url, short_text
from .transcript import Transcript
from .transport import AgentClient, AgentRun
from .verify import Verifier

__all__ = ["AgentSession", "new_id"]

log = logging.getLogger(__name__)

AFTER_FINISH_SECONDS = 3.0  # how long a stream may stay open and silent after RUN_FINISHED
MAX_AUTOMATIC_RUNS = 5  # runs in a row that server-side tool handlers may start without a person (S30)
DECLINED = {"cancelled": True, "reason": "The person declined to answer."}  # a declined call's result (S31)


def new_id(prefix: str) -> str:
    """A fresh protocol id such as ``run-1f3a…`` (16 hex digits of a UUID4)."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


class AgentSession:
    """A thread with an AG-UI agent.

    Args:
        agent: an :class:`AgentClient`, or the agent's URL.
        thread_id: the AG-UI ``threadId`` (a fresh one by default).
        now: clock for interrupt expiry (S11).
        tools: the frontend tools offered on every run (S26).

    ``context`` and ``forwarded_props`` are the app's: every run sends them (S32), and so the
    shared state, ``transcript.state``, which the app may set between runs (:meth:`set_state`).
    """

    #: While :meth:`stream` yields an event: how many events of the same network read follow it
    #: (already read, yielded next without waiting). A consumer that shows the run can wait for
    #: the last of them and show the read once.
    read_ahead = 0

    def __init__(self, agent: AgentClient | str, *, thread_id: str | None = None,
                 now: Callable[[], datetime] | None = None, tools: list[FrontendTool] | None = None) -> None:
        """Open the thread: an empty transcript, nothing pending, no run."""
        self.client: AgentClient | None = agent if isinstance(agent, AgentClient) else AgentClient(agent)
        self.thread_id = thread_id or new_id("thread")
        self.transcript = Transcript()
        self.tracker = InterruptTracker(now=now)
        self.tools = FrontendTools(tools or ())
        self.tool_waits: list[ToolWait] = []  # calls a person or a handler answers before the next run
        self.context: list[Context] = []
        self.forwarded_props: dict[str, Any] = {}
        self.error: str | None = None
        self.last_run_id: str | None = None
        self.revision = 0  # the thread store's revision this copy was read at or last written as (0: never stored)
        self.file_owner = ""  # whose stored files a run may send (the thread's owner; the chat sets it); "": none
        self.branches = Branches()  # the thread's forks (edits, regenerated answers): agui/branches.py
        # [run id, position of the first message it could add]: the shown path's runs that raised a set
        # (audit entries name them; a branch's runs are hidden with it)
        self.runs: list[list[Any]] = []
        self._run_start = 0
        self._automatic_runs = 0
        self._run: AgentRun | None = None
        self._claimed = False  # send()/submit() returned a run that has not started streaming yet

    def __getstate__(self) -> dict[str, Any]:
        """Pickled state without the live run and without the client.

        The client holds request headers (a bearer token) and the URL (maybe with credentials):
        neither may reach a state manager or a thread store. Whoever restores the session
        attaches a client again (``session.client = AgentClient(...)``).
        """
        state = self.__dict__.copy()
        state["_run"], state["_claimed"] = None, False  # a live HTTP run never leaves the process
        state["client"] = None
        state["tools"] = FrontendTools()  # handlers are code: whoever restores the session declares them again
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore from :meth:`__getstate__`, also a pickle from before frontend tools."""
        self.__dict__.update(state)
        for name, empty in (("tools", FrontendTools), ("tool_waits", list), ("context", list),
                            ("forwarded_props", dict), ("branches", Branches), ("runs", list)):
            self.__dict__.setdefault(name, empty())
        self.__dict__.setdefault("_automatic_runs", 0)
        self.__dict__.setdefault("revision", 0)
        self.__dict__.setdefault("file_owner", "")
        self.__dict__.setdefault("_run_start", 0)

    # -- building inputs -------------------------------------------------------------------------

    def build_input(self, *, resume: list[Any] | None = None, forwarded_props: dict[str, Any] | None = None,
                    parent_run_id: str | None = None) -> RunAgentInput:
        """The next run's input: full history, last state, and the answers if any (S12, S13)."""
        return RunAgentInput(
            thread_id=self.thread_id, run_id=new_id("run"), parent_run_id=parent_run_id,
            protocol_version=PROTOCOL_VERSION, state=self.transcript.state,
            # files: read from the store, only the owner's (multimodal.py)
            messages=resolve(self.transcript.to_messages(), owner=self.file_owner),
            tools=self.tools.declared(), context=list(self.context),
            forwarded_props={**self.forwarded_props, **(forwarded_props or {})}, resume=resume)

    def set_state(self, state: Any) -> None:
        """The shared state the next run sends (S32): the app's edit of the agent's state."""
        self.transcript.state = state

    # -- running ---------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """A run is in flight, or was handed out by ``send``/``submit`` and is about to start."""
        return self._claimed or self._run is not None

    def _claim(self) -> None:
        if self.running:
            raise RunInFlight(f"a run is already in flight on thread {self.thread_id}")
        self._claimed = True

    def send(self, text: str, *, message_id: str | None = None,
             files: Sequence[InputContent] = ()) -> AsyncGenerator[BaseEvent, None]:
        """Add a user message and run the agent on it (iterate the result to run it).

        ``files``: its attachments, as parts (:func:`~.multimodal.file_part`): the message goes out as
        multimodal content, the text first.

        Raises:
            RunInFlight: a run is already in flight on this thread (one run at a time).
        """
        self._claim()
        self._automatic_runs = 0
        self.transcript.mark_tail()
        self.transcript.add_user_message(message_id or new_id("msg"), text,
                                         user_content(text, files) if files else None)
        return self.stream(self.build_input())

    def rerun(self) -> AsyncGenerator[BaseEvent, None]:
        """Run the agent again on the history as it stands (regenerate: the last answer was branched off).

        Raises:
            RunInFlight: a run is already in flight on this thread.
        """
        self._claim()
        self._automatic_runs = 0
        self.transcript.mark_tail()
        return self.stream(self.build_input())

    def submit(self, decision: Decision) -> AsyncGenerator[BaseEvent, None]:
        """Start the resume run a ``resume`` / ``legacy-resume`` decision asks for (else: no events)."""
        if decision.kind == "resume":
            run_input = self.build_input(resume=decision.resume, parent_run_id=decision.parent_run_id)
            self._show_decisions(decision)
        elif decision.kind == "legacy-resume":
            run_input = self.build_input(forwarded_props=decision.forwarded_props, parent_run_id=decision.parent_run_id)
        else:
            return _no_events()
        self._claim()  # a resume continues the interrupted turn: the transcript's tail stays where it is
        return self.stream(run_input, resuming=True)

    def _show_decisions(self, decision: Decision) -> None:
        """Show the person's decisions on the tool calls they were about.

        Approved ``editedArgs`` become the call's arguments (called after the request was built:
        producers run the edited call but do not re-stream its arguments); a call whose approval
        was denied (``approved: false``) or cancelled is marked rejected.
        """
        pending = self.tracker.pending
        by_id = {i.id: i for i in pending.interrupts} if pending else {}
        for entry in decision.resume or []:
            payload = entry.payload if isinstance(entry.payload, dict) else {}
            interrupt = by_id.get(entry.interrupt_id)
            if interrupt is None or not interrupt.tool_call_id:
                continue
            if entry.status == "resolved" and "editedArgs" in payload and payload.get("approved") is not False:
                # the call's arguments are shown and stored: a secret in them is masked (S23)
                shown = secret_parts(payload, interrupt.response_schema, lambda _part: "[masked]")[0]
                args = shown.get("editedArgs") if isinstance(shown, dict) else "[masked]"
                self.transcript.set_tool_call_args(interrupt.tool_call_id, args)
            if entry.status == "cancelled" or payload.get("approved") is False:
                self.transcript.set_tool_call_rejected(interrupt.tool_call_id)

    # -- frontend tools (S26-S31) ------------------------------------------------------------------

    def respond(self, tool_call_id: str, result: Any) -> AsyncGenerator[BaseEvent, None]:
        """Answer a waiting frontend-tool call; the last answer starts the next run (iterate it).

        The result (a string as it is, anything else as JSON) becomes the call's ``tool`` message,
        once (S28). While other calls of the run still wait, nothing runs yet (no events).

        Raises:
            ToolCallNotWaiting: the call does not wait (answered already, or never asked).
            RunInFlight: a run is in flight.
        """
        return self._answer(tool_call_id, result_text(result))

    def decline(self, tool_call_id: str) -> AsyncGenerator[BaseEvent, None]:
        """The person declines a cancellable call: its result says so (S31); otherwise as :meth:`respond`."""
        wait = self._waiting(tool_call_id)
        if not wait.cancellable:
            raise ToolCallNotWaiting(f"the call to {wait.name!r} cannot be declined: it needs an answer")
        return self._answer(tool_call_id, result_text(DECLINED))

    async def answer_handlers(self) -> AsyncGenerator[BaseEvent, None]:
        """Run the server-side handlers of the waiting calls; then the next run, if nothing else waits (S30)."""
        handled = [w for w in self.tool_waits if w.handled and w.name in self.tools.by_name]
        for wait in handled:
            self._record(wait, await self.tools.handle(wait))
        if not handled or self.tool_waits:
            return
        if self._automatic_runs >= MAX_AUTOMATIC_RUNS:
            self.error = (f"the agent called server-side tools {MAX_AUTOMATIC_RUNS} runs in a row; send a message"
                          " to let it go on")
            return
        self._automatic_runs += 1
        async for event in self._continue():
            yield event

    @property
    def needs_handlers(self) -> bool:
        """Some waiting call is answered on the server (drive :meth:`answer_handlers`)."""
        return any(w.handled for w in self.tool_waits)

    def _waiting(self, tool_call_id: str) -> ToolWait:
        wait = next((w for w in self.tool_waits if w.tool_call_id == tool_call_id), None)
        if wait is None:
            raise ToolCallNotWaiting(f"the tool call {short_text(tool_call_id, 60)!r} does not wait for a result")
        return wait

    def _answer(self, tool_call_id: str, content: str) -> AsyncGenerator[BaseEvent, None]:
        wait = self._waiting(tool_call_id)
        if self.running:
            raise RunInFlight(f"a run is already in flight on thread {self.thread_id}")
        self._record(wait, content)
        return _no_events() if self.tool_waits else self._continue()

    def _record(self, wait: ToolWait, content: str) -> None:
        """The call's result, as the tool message the next run sends; the call no longer waits.

        ``confirm_changes`` settles a predicted change (S35): declined or ``{"accepted": false}`` restores.
        """
        if wait.name == CONFIRM_TOOL:
            self.transcript.settle_prediction(kept=content != result_text(DECLINED) and not rejects(content))
        self.transcript.apply(ToolCallResultEvent(message_id=f"result-{wait.tool_call_id}",
                                                  tool_call_id=wait.tool_call_id, content=content, role="tool"))
        self.tool_waits = [w for w in self.tool_waits if w.tool_call_id != wait.tool_call_id]

    def _continue(self) -> AsyncGenerator[BaseEvent, None]:
        """The run that takes the tools' results to the agent: the same turn goes on."""
        self._claim()
        return self.stream(self.build_input())

    def _collect_waits(self) -> None:
        """After a finished run: its calls to frontend tools wait; those that cannot be answered get an error (S29)."""
        if self.error is not None or self.transcript.status != "finished" or not self.tools:
            self.tool_waits = []
            return
        call_ids = self.transcript.run_tool_call_ids()
        waits = self.tools.waits(self.transcript, call_ids, _held(self.tracker.pending, set(call_ids)))
        self.tool_waits = [w for w in waits if w.error is None]
        for wait in waits:
            if wait.error is not None:
                self._record(wait, error_result(wait.error))

    def cancel(self) -> bool:
        """Stop the run in flight (stop button). Returns False when nothing was running.

        A run handed out by ``send``/``submit`` that has not started streaming yet is stopped as
        soon as it starts (a stop that lands between the claim and the first read is not lost).
        """
        if self._run is None:
            if not self._claimed:
                return False
            self._stop_requested = True
            return True
        self._run.cancel()
        return True

    def halt(self, reason: str) -> None:
        """Stop the next run as soon as the agent starts it, its transcript saying ``reason`` (a denial limit).

        Its request is sent (the agent gets the answer that leads to the halt); the run it starts is stopped.
        ``""``: no halt.
        """
        self._halt = reason

    @property
    def halting(self) -> str:
        """Why the next run will be stopped as it starts ("" when it will not: :meth:`halt`)."""
        return str(self.__dict__.get("_halt") or "")

    def _halt_if_asked(self, run: Any, started: bool) -> None:
        if started and self.__dict__.get("_halt") and not run.cancelled:
            self.tracker.delivered()  # the answer reached the agent: its set is not offered again
            run.cancel()  # the run it started goes no further

    def read_at(self, when: float) -> None:
        """The run in flight reads its stream next at the event loop's time ``when`` (a push tick), not before."""
        if self._run is not None:
            self._run.read_at = when

    def abandon(self, message: str) -> None:
        """End the run in flight as failed with ``message``: the process that drove it is gone.

        For a copy of the session (restored from a shared state) whose run another process drove.
        The run may have started, so it fails like a run that broke off mid-stream (S5, S15).
        """
        self._run, self._claimed = None, False
        self._failed(message)

    async def stream(self, run_input: RunAgentInput, *, resuming: bool = False) -> AsyncGenerator[BaseEvent, None]:
        """Run the agent; yield each event after it has been applied to transcript and tracker."""
        self._claimed = False
        self.error = None
        self.last_run_id = run_input.run_id
        self._run_start = len(self.transcript.messages)
        self.transcript.status, self.transcript.error = "running", None
        client = self.client or AgentClient("")  # restored from a pickle without a client: a clear error
        run = self._run = client.run(run_input, message_json=self.transcript.message_json)
        if self.__dict__.pop("_stop_requested", False):
            run.cancel()
        self.tracker.new_stream()
        chunks, verifier = ChunkExpander(), Verifier()
        started = finished = False
        batches = aiter(run.batches())
        try:
            while (batch := await _next(batches, AFTER_FINISH_SECONDS if finished else None)) is not None:
                events, broken = _expand(chunks, batch)
                for left, event in zip(range(len(events) - 1, -1, -1), events, strict=True):
                    if run.cancelled:  # stopped while a batch is applied: nothing after the stop counts
                        raise RunCancelled("the run was stopped")
                    self._apply(verifier, event)
                    started = started or event.type == EventType.RUN_STARTED
                    if event.type in (EventType.RUN_FINISHED, EventType.RUN_STARTED):
                        finished = event.type == EventType.RUN_FINISHED
                    self.read_ahead = left
                    yield event
                    self._halt_if_asked(run, started)
                if broken is not None:
                    raise broken
            self.read_ahead = 0
            for event in chunks.flush():
                self._apply(verifier, event)
                yield event
            verifier.end_of_stream()  # an empty or truncated stream is a failed run
        except RunCancelled:
            self._failed("stopped", cancelled=True, before_start=resuming and not started)
        except (AgentError, ChunkError, ProtocolViolation) as exc:
            log.warning("run %s on %s failed at %s (%s): %s", run_input.run_id, self.thread_id,
                        display_url(self.client.url if self.client else ""), type(exc).__name__, exc)  # no secrets
            # the agent's own RUN_ERROR reason wins over a complaint about what it sent after it
            reason = self.error if self.error and isinstance(exc, ProtocolViolation) else short_text(exc)
            self._failed(reason, before_start=resuming and not started)
        except (GeneratorExit, asyncio.CancelledError):
            # the consumer stopped iterating (or its task was cancelled): stop a run it left open
            try:
                verifier.end_of_stream()
            except ProtocolViolation:
                self._failed("stopped", cancelled=True, before_start=resuming and not started)
            else:
                self.tracker.finalize()
                self._after_run()
            raise
        else:
            self.tracker.finalize()
            self._after_run()
        finally:
            self._run, self.read_ahead = None, 0
            self.__dict__.pop("_halt", None)
            await run.aclose()  # close the HTTP response now, not when the iterator is collected

    def _apply(self, verifier: Verifier, event: BaseEvent) -> None:
        verifier.check(event)
        self.transcript.apply(event)
        self.tracker.observe(event)
        if event.type == EventType.RUN_ERROR:
            self.error = self.transcript.error
            log.warning("run %r on %r failed (RUN_ERROR from the agent): %r", self.last_run_id, self.thread_id,
                        (self.error or "")[:300])  # the agent's text: repr, so no line is forged

    def _failed(self, message: str, *, cancelled: bool = False, before_start: bool = False) -> None:
        if before_start:
            self.tracker.submission_failed(message)  # S15: answers kept, seal lifted
        else:
            self.tracker.fail(message)  # S5
            self.tracker.finalize()
        if cancelled:
            self.transcript.fail(self.__dict__.get("_halt") or STOPPED)
            self.transcript.status = "cancelled"
            self.error = None
        else:
            self.transcript.fail(message)
            self.error = message
        self._after_run()

    def _after_run(self) -> None:
        pending = self.tracker.pending
        if pending is not None and pending.run_id and not any(r[0] == pending.run_id for r in self.runs[-3:]):
            self.runs.append([pending.run_id, self._run_start])
        if self.error is None and self.transcript.status == "error":
            self.error = self.transcript.error
        self._collect_waits()
        awaited = {i.tool_call_id for i in pending.interrupts if i.tool_call_id} if pending else set()
        self.transcript.set_awaiting(awaited | {w.tool_call_id for w in self.tool_waits})  # S27: they wait too


STOPPED = "Stopped."  # a stopped run's transcript says this; a halted one (:meth:`AgentSession.halt`) its reason


def _expand(chunks: ChunkExpander, batch: list[BaseEvent]) -> tuple[list[BaseEvent], ChunkError | None]:
    """A batch's events with chunks expanded and deltas joined; a chunk error comes after what preceded it."""
    out: list[BaseEvent] = []
    for wire_event in batch:
        try:
            out += chunks.feed(wire_event)
        except ChunkError as exc:
            return coalesce(out), exc
    return coalesce(out), None


def _held(pending: Pending | None, call_ids: set[str]) -> set[str]:
    """The run's calls its pending interrupts are about; they wait for the interrupt, not for a result.

    Each interrupt's ``toolCallId``, and any of the run's call ids its metadata names: ADK asks
    through a confirmation call of its own and names the real call in
    ``metadata.adk.originalFunctionCall``.
    """
    held: set[str] = set()
    for interrupt in pending.interrupts if pending is not None else ():
        if interrupt.tool_call_id:
            held.add(interrupt.tool_call_id)
        held |= _strings(interrupt.metadata) & call_ids
    return held


def _strings(value: Any) -> set[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*map(_strings, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(_strings, value)) if value else set()
    return set()


async def _next(batches: AsyncIterator[list[BaseEvent]], timeout: float | None) -> list[BaseEvent] | None:
    """The next batch of events; None at the end of the stream, or when ``timeout`` passes without one.

    After ``RUN_FINISHED`` the run is over: an agent that keeps the stream open and silent must not
    turn it into a timeout failure (and lose its interrupts), so a short wait ends the stream.
    """
    try:
        if timeout is None:
            return await anext(batches)
        async with asyncio.timeout(timeout):  # in this task (wait_for would start one per read)
            return await anext(batches)
    except StopAsyncIteration:
        return None
    except (TimeoutError, AgentTimeoutError):
        if timeout is None:
            raise
        log.info("the agent kept the stream open after RUN_FINISHED; the run is over")
        return None


async def _no_events() -> AsyncGenerator[BaseEvent, None]:
    return
    yield  # pragma: no cover - makes this an async generator
