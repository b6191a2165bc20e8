"""The interrupt tracker: rules S1-S15 of ``docs/semantics.md``.

A run that needs a person ends with ``RUN_FINISHED.outcome = {"type": "interrupt", ...}``
(standard) or sends ``CUSTOM name="on_interrupt"`` (legacy, LangGraph-style). The tracker
collects both while the run streams, surfaces the pending set when the run finalizes, records
answers and says, through a :class:`Decision`, when and what to send back. It never does I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    ResumeEntry,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
)

from .events import MalformedEvent, parse_event
from .sanitize import parse_json, scrub
from .secret_schema import SecretMap, holds_secret, is_secret_schema, secret_in, secret_parts

__all__ = ["Decision", "InterruptTracker", "Pending", "SecretMap", "holds_secret", "interrupt_dict", "is_expired",
           "is_secret_schema", "parse_expiry", "secret_in", "secret_parts"]

log = logging.getLogger(__name__)

LEGACY_EVENT_NAME = "on_interrupt"

DecisionKind = Literal["ignored", "waiting", "expired", "resume", "legacy-resume", "dismiss"]


@dataclass(frozen=True)
class Pending:
    """The set of interrupts the chat is waiting on.

    Attributes:
        kind: ``"standard"`` (from ``RUN_FINISHED.outcome``) or ``"legacy"`` (``on_interrupt``).
        interrupts: the open standard interrupts in protocol order; ``[]`` for legacy.
        event: the legacy-shaped event ``{"name": "on_interrupt", "value": ...}`` (S19); for a
            standard set ``value`` is the first interrupt.
        run_id: id of the run that raised the set (the resume's ``parentRunId``).
        raw_value: legacy only: the event's ``value`` as received (S13's ``interruptEvent``).
    """

    kind: Literal["standard", "legacy"]
    interrupts: list[Interrupt]
    event: dict[str, Any]
    run_id: str | None
    raw_value: Any = None

    @property
    def ids(self) -> list[str]:
        """The open interrupts' ids, in protocol order."""
        return [i.id for i in self.interrupts]

    def target(self, interrupt_id: str | None) -> Interrupt | None:
        """The open interrupt an answer names (the first when it names none); None when none is open by that id."""
        wanted = interrupt_id if interrupt_id is not None else (self.ids[0] if self.ids else "")
        return next((i for i in self.interrupts if i.id == wanted), None)

    @property
    def wire_interrupts(self) -> list[dict[str, Any]]:
        """The open interrupts as wire dicts (camelCase), ready for a UI's state (S19)."""
        return [interrupt_dict(i) for i in self.interrupts]

    @property
    def wire_event(self) -> dict[str, Any]:
        """:attr:`event` as plain JSON data: a standard set's first interrupt as its wire dict (S19)."""
        value = self.event["value"]
        return {"name": LEGACY_EVENT_NAME, "value": interrupt_dict(value) if isinstance(value, Interrupt) else value}

    def schema_for(self, interrupt_id: str | None) -> Any:
        """The ``responseSchema`` an answer to ``interrupt_id`` must satisfy, or None.

        A legacy set has one interrupt and no ids: its value's own ``responseSchema`` (S22).
        """
        if self.kind == "legacy":
            value = self.event["value"]
            return value.get("responseSchema") if isinstance(value, dict) else None
        return next((i.response_schema for i in self.interrupts if i.id == interrupt_id), None)


@dataclass(frozen=True)
class Decision:
    """What the caller must do after ``resolve`` / ``cancel``.

    ``kind`` is one of ``ignored``, ``waiting``, ``expired``, ``resume`` (send ``resume`` now),
    ``legacy-resume`` (send ``forwarded_props`` now) and ``dismiss`` (nothing to send).
    """

    kind: DecisionKind
    resume: list[ResumeEntry] | None = None
    forwarded_props: dict[str, Any] | None = None
    parent_run_id: str | None = None
    interrupt_id: str | None = None
    reason: str | None = None

    @property
    def sends(self) -> bool:
        """True when the caller must start a resume run now."""
        return self.kind in ("resume", "legacy-resume")


def parse_expiry(value: Any) -> datetime | None:
    """``expiresAt`` as an aware datetime; naive times are UTC; unparseable -> None (S11)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text[-1] in "zZ":
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def is_expired(interrupt: Interrupt, now: datetime) -> bool:
    """An interrupt is expired when its ``expiresAt`` parses and is <= now (S11)."""
    moment = parse_expiry(interrupt.expires_at)
    if moment is None:
        return False
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return moment <= now


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class _RunCollection:
    """What one run has collected so far (S1, S2)."""

    run_id: str | None = None
    standard: list[Interrupt] | None = None
    legacy: Any = field(default=None)
    has_legacy: bool = False
    failed: bool = False


class InterruptTracker:
    """Collects, surfaces and answers the interrupts of one thread (rules S1-S15).

    Args:
        now: a clock returning an aware datetime, for expiry (S11). Defaults to UTC wall time.
    """

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        """Start with nothing pending."""
        self._now = now or _utc_now
        self._reset()

    def _reset(self) -> None:
        self.pending: Pending | None = None
        self._answers: dict[str, ResumeEntry] = {}
        self._sealed = False
        self._run: _RunCollection | None = None  # the run being streamed, None between runs
        self._owed: Pending | None = None  # the set cleared by the current run's RUN_STARTED
        self._finalized: tuple[_RunCollection, Pending | None] | None = None  # last run, its owed set
        self.error: str | None = None

    # -- pickling: an unsent answer holding a secret (S23) never leaves the process -------------

    def __getstate__(self) -> dict[str, Any]:
        """State for a state manager: answers with a masked field's value are left out (S23).

        Everything else survives a round trip (Redis pickles between events): the other answers
        still accumulate (S7) and the seal still holds (S10); a dropped answer is asked again.
        """
        state = self.__dict__.copy()
        state["_answers"] = self._storable_answers()
        if len(state["_answers"]) < len(self._answers):
            state["_sealed"] = False
        state.pop("_now", None)
        return state

    def _storable_answers(self) -> dict[str, ResumeEntry]:
        """The recorded answers that may leave the process: none holding a masked field (S23, D6)."""
        schemas = {i.id: i.response_schema for i in self.pending.interrupts} if self.pending else {}
        return {k: v for k, v in self._answers.items() if not secret_in(v.payload, schemas.get(k))}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore from :meth:`__getstate__`; the clock is UTC wall time again (it is not pickled)."""
        self.__dict__.update(state)
        self._now = _utc_now

    # -- plain JSON for a thread database (S23, S25) ----------------------------------------------

    def export(self) -> dict[str, Any]:
        """The tracker's lasting state as plain JSON data (no pickle), for a thread database.

        The same rule as :meth:`__getstate__`: an answer holding a masked field's value is left out
        and then the seal is lifted (S23, D6); the other answers and the seal are kept (S7, S10).
        A run in flight is not exported: a set that run cleared at its ``RUN_STARTED`` and still
        owes the agent (S15) is exported as the pending set, without answers, as if the run failed.

        Returns:
            ``{"pending": dict | None, "answers": [ResumeEntry wire dicts], "sealed": bool,
            "error": str | None}``; ``pending`` has ``kind``, ``interrupts`` (wire dicts),
            ``event`` (:attr:`Pending.wire_event`), ``runId`` and, for a legacy set, ``rawValue``.
        """
        pending, answers, sealed = self.pending, self._storable_answers(), self._sealed
        if len(answers) < len(self._answers):
            sealed = False
        if self._run is not None and pending is None and self._owed is not None:
            pending, answers, sealed = self._owed, {}, False
        return {
            "pending": _pending_dict(pending) if pending is not None else None,
            "answers": [answers[i].model_dump(mode="json", by_alias=True, exclude_unset=True)
                        for i in (pending.ids if pending is not None else []) if i in answers],
            "sealed": sealed,
            "error": self.error,
        }

    def restore(self, data: dict[str, Any]) -> None:
        """Replace this tracker's state with one :meth:`export` returned (no run in flight).

        An answer to an interrupt that is not in the pending set is dropped with a warning.

        Raises:
            ValueError: ``data`` does not have the shape :meth:`export` gives (a pydantic
                ``ValidationError`` for an interrupt or an answer that does not validate).
        """
        if not isinstance(data, dict):
            raise ValueError(f"tracker data must be an object, got {type(data).__name__}")
        raw_pending = data.get("pending")
        pending = _pending_from_dict(raw_pending) if raw_pending is not None else None
        raw_answers = data.get("answers") or []
        if not isinstance(raw_answers, list):
            raise ValueError("tracker answers must be a list")
        answers: dict[str, ResumeEntry] = {}
        for raw in raw_answers:
            entry = ResumeEntry.model_validate(raw)
            if pending is None or entry.interrupt_id not in pending.ids:
                log.warning("restoring a tracker: dropping an answer to %.80r (not pending)", entry.interrupt_id)
                continue
            answers[entry.interrupt_id] = entry
        error = data.get("error")
        self._reset()
        self.pending, self._answers = pending, answers
        self._sealed = bool(data.get("sealed")) and pending is not None
        self.error = str(error) if error is not None else None

    # -- observing a run -------------------------------------------------------------------------

    @property
    def answers(self) -> dict[str, ResumeEntry]:
        """Answers recorded for the pending set, by interrupt id (a copy)."""
        return dict(self._answers)

    @property
    def sealed(self) -> bool:
        """True between a submitted resume and the next ``RUN_STARTED`` or failure (S10)."""
        return self._sealed

    @property
    def streaming(self) -> bool:
        """True while a run has started and not yet finalized or failed."""
        return self._run is not None

    def now(self) -> datetime:
        """The tracker's clock: the time expiry is judged against (S11)."""
        return self._now()

    def observe(self, event: BaseEvent | dict[str, Any]) -> None:
        """Feed one event of the current run. Unknown or malformed events never raise."""
        try:
            parsed = parse_event(event)
        except MalformedEvent as exc:
            log.warning("interrupt tracker ignoring a malformed event: %s", exc)
            return
        if isinstance(parsed, RunStartedEvent):
            self._on_run_started(parsed.run_id)
        elif isinstance(parsed, RunFinishedEvent):
            self._on_run_finished(parsed)
        elif isinstance(parsed, RunErrorEvent):
            if self._run is None and self._finalized is not None and not self._sealed:
                self._reopen_finalized(*self._finalized)  # a late RUN_ERROR still fails the run it follows (S5)
            self.fail(parsed.message or "the agent reported an error")
        elif isinstance(parsed, CustomEvent) and parsed.name == LEGACY_EVENT_NAME:
            run = self._current_run()
            run.legacy, run.has_legacy = parsed.value, True  # S1: the last one wins

    def _current_run(self) -> _RunCollection:
        if self._run is None:  # events without RUN_STARTED: collect them anyway
            self._run = _RunCollection()
        return self._run

    def _on_run_started(self, run_id: str) -> None:
        # S4: a new run clears the pending set, the answers and the seal. The cleared set is
        # remembered: if this run fails, those interrupts are still owed to the agent (S15).
        owed = self.pending or self._owed
        self.pending = None
        self._answers = {}
        self._sealed = False
        self.error = None
        self._owed = owed
        self._finalized = None
        self._run = _RunCollection(run_id=run_id)

    def _on_run_finished(self, event: RunFinishedEvent) -> None:
        run = self._current_run()
        run.run_id = event.run_id or run.run_id
        outcome = event.outcome
        if isinstance(outcome, RunFinishedInterruptOutcome):  # outcome type "interrupt"
            run.standard = list(outcome.interrupts)
        else:
            run.standard = None

    def finalize(self) -> None:
        """The run's stream ended: surface what it collected (S3)."""
        run, self._run = self._run, None
        if run is None:
            if self._sealed:  # a resume request whose stream ended before RUN_STARTED
                self.submission_failed("the agent closed the stream before the run started")
            return
        if run.failed:
            return
        self._finalized, self._owed = (run, self._owed), None
        if run.standard:  # S2: the standard flow wins over the legacy one
            self._surface(Pending("standard", run.standard,
                                  {"name": LEGACY_EVENT_NAME, "value": run.standard[0]}, run.run_id))
        elif run.has_legacy:
            self._surface(Pending("legacy", [], {"name": LEGACY_EVENT_NAME, "value": _legacy_value(run.legacy)},
                                  run.run_id, raw_value=run.legacy))

    def _reopen_finalized(self, run: _RunCollection, owed: Pending | None) -> None:
        self._finalized = None
        if self.pending is not None and not self._sealed and self.pending.run_id == run.run_id:
            self.pending = None
        self._run, self._owed = run, owed

    def _surface(self, pending: Pending) -> None:
        self.pending = pending
        self._answers = {}
        self._sealed = False

    def fail(self, error: Any = None) -> None:
        """The run failed (``RUN_ERROR``, transport error, invalid stream): S5 and S15."""
        self.error = str(error) if error is not None else "the run failed"
        if self._sealed and self._run is None:  # the resume request never reached RUN_STARTED
            self.submission_failed(error)
            return
        run, self._run = self._run, None
        if run is not None:
            run.failed = True
            self._run = run  # keep swallowing this run's late events until finalize
        if self._owed is not None:  # S15: the last interrupted run's set is offered again
            self.pending, self._owed = self._owed, None
            self._answers = {}
            self._sealed = False

    def delivered(self) -> None:
        """The resume's run started and is being stopped on purpose (a halt): its answers reached the agent.

        So a failure of this run does not offer its set again (S15 is for a resume that may not have arrived).
        """
        self._owed = None

    def new_stream(self) -> None:
        """A new request's stream begins.

        A ``RUN_ERROR`` before its ``RUN_STARTED`` refuses that request (ADK refuses a new message
        while an interrupt waits); it is no late error of the run before, whose interrupts stay
        pending (S5).
        """
        self._finalized = None

    def submission_failed(self, error: Any = None) -> None:
        """The resume request failed before ``RUN_STARTED``: keep answers, lift the seal (S15)."""
        if error is not None:
            self.error = str(error)
        self._sealed = False

    # -- answering -------------------------------------------------------------------------------

    def is_expired(self, interrupt: Interrupt) -> bool:
        """Whether ``interrupt`` has expired by the tracker's clock (S11)."""
        return is_expired(interrupt, self._now())

    def resolve(self, payload: Any = None, interrupt_id: str | None = None) -> Decision:
        """Answer one interrupt (S6); sends when every open interrupt is answered (S7)."""
        pending = self._answerable("resolve")
        if pending is None:
            return Decision("ignored")
        if pending.kind == "legacy":
            return self._legacy_resolve(pending, payload, interrupt_id)
        target = self._target(pending, interrupt_id, "resolve")
        if target is None:
            return Decision("ignored", interrupt_id=interrupt_id)
        if self.is_expired(target):
            log.info("interrupt %r has expired; it can only be cancelled", target.id)
            return Decision("expired", interrupt_id=target.id)
        given = {} if payload is None else {"payload": payload}  # S7: no payload key unless given
        return self._record(pending, ResumeEntry(interrupt_id=target.id, status="resolved", **given))

    def cancel(self, interrupt_id: str | None = None) -> Decision:
        """Abandon one interrupt (S6); always allowed, expired or not (S11). Legacy: S14."""
        pending = self._answerable("cancel")
        if pending is None:
            return Decision("ignored")
        if pending.kind == "legacy":
            if interrupt_id:
                log.warning("ignoring cancel for id %r: a legacy interrupt has no id", interrupt_id)
                return Decision("ignored", interrupt_id=interrupt_id)
            log.warning("legacy interrupt dismissed: on_interrupt has no cancel, nothing is sent to the agent")
            self.pending = None
            self._answers = {}
            return Decision("dismiss", parent_run_id=pending.run_id)
        target = self._target(pending, interrupt_id, "cancel")
        if target is None:
            return Decision("ignored", interrupt_id=interrupt_id)
        return self._record(pending, ResumeEntry(interrupt_id=target.id, status="cancelled"))

    def carry(self, entry: ResumeEntry) -> bool:
        """Record an answer another copy of this thread holds for the same open set (not sealed).

        For a thread store that replaced a stale copy: answers it never stores (masked, S23) are
        carried over instead of asked again. Returns False when the entry does not fit the set.
        """
        if self.pending is None or self._sealed or entry.interrupt_id not in self.pending.ids:
            return False
        self._answers[entry.interrupt_id] = entry
        return True

    def _answerable(self, verb: str) -> Pending | None:
        if self.pending is None:
            log.debug("%s ignored: nothing is pending", verb)
            return None
        if self._sealed:
            log.info("%s ignored: the answer was already submitted (S10)", verb)
            return None
        return self.pending

    def _target(self, pending: Pending, interrupt_id: str | None, verb: str) -> Interrupt | None:
        if interrupt_id is None:
            if len(pending.interrupts) > 1:
                log.warning("%s without interrupt_id while %d interrupts are open: targeting the first (%r)",
                            verb, len(pending.interrupts), pending.interrupts[0].id)
            return pending.interrupts[0]
        for interrupt in pending.interrupts:
            if interrupt.id == interrupt_id:
                return interrupt
        log.warning("%s ignored: unknown interrupt_id %.100r (open: %.300r)", verb, interrupt_id, pending.ids)
        return None

    def _record(self, pending: Pending, entry: ResumeEntry) -> Decision:
        self._answers[entry.interrupt_id] = entry  # S6: a later answer replaces an earlier one
        if any(i.id not in self._answers for i in pending.interrupts):
            return Decision("waiting", interrupt_id=entry.interrupt_id)
        now = self._now()
        resume = []
        for interrupt in pending.interrupts:  # S7: protocol order, not click order
            answer = self._answers[interrupt.id]
            if answer.status == "resolved" and is_expired(interrupt, now):
                answer = ResumeEntry(interrupt_id=interrupt.id, status="cancelled")  # S11
            resume.append(answer)
        self._sealed = True
        return Decision("resume", resume=resume, parent_run_id=pending.run_id, interrupt_id=entry.interrupt_id)

    def _legacy_resolve(self, pending: Pending, payload: Any, interrupt_id: str | None) -> Decision:
        if interrupt_id:
            log.warning("resolve ignored: unknown interrupt_id %r (a legacy interrupt has no id)", interrupt_id)
            return Decision("ignored", interrupt_id=interrupt_id)
        command: dict[str, Any] = {"interruptEvent": pending.raw_value}
        if payload is not None:
            command = {"resume": payload, **command}
        self._sealed = True
        return Decision("legacy-resume", forwarded_props={"command": command}, parent_run_id=pending.run_id)


def interrupt_dict(interrupt: Interrupt) -> dict[str, Any]:
    """An interrupt as its wire dict (camelCase keys, no nulls)."""
    return interrupt.model_dump(mode="json", by_alias=True, exclude_none=True)


def _pending_dict(pending: Pending) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": pending.kind, "interrupts": pending.wire_interrupts, "event": pending.wire_event,
                           "runId": pending.run_id}
    if pending.kind == "legacy":
        out["rawValue"] = pending.raw_value
    return out


def _pending_from_dict(data: Any) -> Pending:
    """Rebuild a :class:`Pending` from :func:`_pending_dict`'s data (ValueError when it does not fit)."""
    if not isinstance(data, dict):
        raise ValueError(f"a pending set must be an object, got {type(data).__name__}")
    run_id = data.get("runId")
    if run_id is not None and not isinstance(run_id, str):
        raise ValueError("a pending set's runId must be a string")
    kind = data.get("kind")
    if kind == "standard":
        raw = data.get("interrupts")
        if not isinstance(raw, list) or not raw:
            raise ValueError("a standard pending set needs a non-empty interrupts list")
        interrupts = [Interrupt.model_validate(i) for i in raw]
        return Pending("standard", interrupts, {"name": LEGACY_EVENT_NAME, "value": interrupts[0]}, run_id)
    if kind == "legacy":
        raw_value = data.get("rawValue")
        event = data.get("event")
        value = event["value"] if isinstance(event, dict) and "value" in event else _legacy_value(raw_value)
        return Pending("legacy", [], {"name": LEGACY_EVENT_NAME, "value": value}, run_id, raw_value=raw_value)
    raise ValueError(f"unknown pending kind {kind!r}")


def _legacy_value(value: Any) -> Any:
    """S1: a string value that parses as JSON is parsed; otherwise it is kept as the string."""
    if isinstance(value, str):
        try:
            return parse_json(value)  # bounded depth, no lone surrogates
        except ValueError:
            return scrub(value)
    return value
