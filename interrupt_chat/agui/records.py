"""Sessions as plain JSON records, for a thread database (no pickle).

A record is what a thread needs to come back after a restart (S25): the AG-UI messages the next
run sends, the shared state, the pending interrupts and the answers recorded so far — never an
answer holding a masked field (S23, D6) — plus the few things a chat shows that AG-UI messages do
not carry (a tool call's ``rejected`` / ``failed`` flags, the run status). Version 1::

    {
      "version": 1,
      "threadId": "thread-…",
      "messages": [{"id": …, "role": "user", "content": …}, …],   # Transcript.to_messages(), wire dicts
      "toolCalls": {"call-1": {"rejected": true}},                # only calls with a flag set
      "state": {…},                                               # the last agent state
      "pending": {"kind": "standard", "interrupts": […], "event": {…}, "runId": …} | null,
      "answers": [{"interruptId": …, "status": "resolved", "payload": …}, …],
      "sealed": false,
      "trackerError": null,
      "status": "finished", "statusError": null,                   # Transcript.status / .error
      "lastRunId": "run-…",
      "error": null,
      "toolWaits": [{"toolCallId": …, "name": …, "args": …, "cancellable": true, "handled": false}]
    }

(``toolWaits``: the frontend-tool calls that wait for a result, S27; absent in older records.)

Messages are the AG-UI wire shape (camelCase keys, no nulls): assistant messages keep their
``toolCalls`` and tool messages their ``toolCallId``; activity messages are UI-only and left out,
as in every run input. Framework-free: no Reflex import.

A record of another version is read as far as it is understood: an older one is migrated, fields
this code does not know are reported in a warning (never dropped silently), and a record that
cannot be read raises :class:`RecordError`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from ag_ui.core import Message, MessagesSnapshotEvent
from pydantic import TypeAdapter, ValidationError

from .branches import BranchError, Branches
from .frontend_tools import ToolWait
from .session import AgentSession
from .transcript import MessageView, ToolCallView, Transcript
from .transport import AgentClient

__all__ = ["RECORD_VERSION", "MessageDigests", "RecordError", "message_dict", "message_digest", "migrate_record",
           "session_from_record", "session_record", "view_message", "wire_messages"]

log = logging.getLogger(__name__)

RECORD_VERSION = 1

_MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)
_KNOWN_KEYS = frozenset({"version", "threadId", "messages", "toolCalls", "state", "pending", "answers", "sealed",
                         "trackerError", "status", "statusError", "lastRunId", "error", "toolWaits", "branches",
                         "runs", "prediction"})
_RESTORABLE_STATUS = frozenset({"idle", "finished", "cancelled", "error"})


class RecordError(ValueError):
    """A record that cannot be turned back into a session (wrong shape, invalid message, …)."""


# -- writing ---------------------------------------------------------------------------------------


def message_dict(message: Message) -> dict[str, Any]:
    """An AG-UI message as its wire dict (camelCase keys, no nulls), as a run input carries it."""
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


def wire_messages(transcript: Transcript) -> list[dict[str, Any]]:
    """The transcript's messages as the next run would send them (activity messages left out)."""
    return [message_dict(m) for m in transcript.to_messages()]


def view_message(transcript: Transcript, view: MessageView) -> dict[str, Any] | None:
    """One message of ``transcript`` as :func:`wire_messages` gives it; None for a UI-only one."""
    message = transcript._to_message(view)  # the one conversion runs use too (Transcript.to_messages)
    return message_dict(message) if message is not None else None


def message_digest(body: dict[str, Any]) -> str:
    """A digest of a wire message (32 hex digits): equal bodies, equal digests, whatever the key order."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))  # ASCII: a lone surrogate cannot break it
    return hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest()


def _view_key(calls: dict[str, ToolCallView], view: MessageView) -> tuple[Any, ...]:
    """Everything :func:`view_message` reads from a view and its tool calls (cheap to build and compare)."""
    parts = view.parts
    content = parts[0] if len(parts) == 1 else view.content  # MessageView.content, without the call
    ids = view.tool_call_ids
    tool_calls = tuple((c.id, c.name, c.args_text, c.encrypted_value)
                       for c in (calls[i] for i in ids if i in calls)) if ids else ()
    return (view.role, content, view.raw_content, view.name, view.encrypted_value, view.tool_call_id, view.error,
            tool_calls)


class MessageDigests:
    """The digests of one thread's wire messages, recomputed only for the messages that changed.

    Each message's view is reduced to a cheap key (its text, name, tool calls' arguments, …); a
    message whose key is the one seen last time keeps its digest, the others are converted
    (:func:`view_message`) and digested again. A save after one new message so costs one
    conversion, not one per message of the history.
    """

    def __init__(self) -> None:
        """Start with nothing seen."""
        self._seen: dict[str, tuple[tuple[Any, ...], str | None]] = {}

    def scan(self, transcript: Transcript) -> list[tuple[MessageView, str]]:
        """``(view, digest)`` of each message :func:`wire_messages` gives, in the same order."""
        out: list[tuple[MessageView, str]] = []
        seen: dict[str, tuple[tuple[Any, ...], str | None]] = {}
        calls, before = transcript.tool_calls, self._seen
        for view in transcript.messages:
            key = _view_key(calls, view)
            known = before.get(view.id)
            if known is not None and known[0] == key:
                digest = known[1]
            else:
                body = view_message(transcript, view)
                digest = message_digest(body) if body is not None else None
            seen[view.id] = (key, digest)
            if digest is not None:
                out.append((view, digest))
        self._seen = seen
        return out


def session_record(session: AgentSession, *, messages: bool = True) -> dict[str, Any]:
    """A session as a plain JSON record (see the module doc); no masked answer is in it (S23).

    The record shares the session's state object: serialize it before the session changes again.

    Args:
        session: the thread.
        messages: False leaves ``messages`` out (a store that writes them itself, one by one).
    """
    transcript = session.transcript
    flags: dict[str, dict[str, bool]] = {}
    for call in (transcript.tool_calls[i] for m in transcript.messages for i in m.tool_call_ids
                 if i in transcript.tool_calls):  # calls a snapshot dropped with their message are gone
        marks = {name: True for name, on in (("rejected", call.rejected), ("failed", call.failed)) if on}
        if marks:
            flags[call.id] = marks
    tracker = session.tracker.export()
    return {
        "version": RECORD_VERSION,
        "threadId": session.thread_id,
        **({"messages": wire_messages(transcript)} if messages else {}),
        "toolCalls": flags,
        "state": transcript.state,
        "pending": tracker["pending"],
        "answers": tracker["answers"],
        "sealed": tracker["sealed"],
        "trackerError": tracker["error"],
        "status": transcript.status,
        "statusError": transcript.error,
        "lastRunId": session.last_run_id,
        "error": session.error,
        "toolWaits": [{"toolCallId": w.tool_call_id, "name": w.name, "args": w.args, "cancellable": w.cancellable,
                       "handled": w.handled} for w in session.tool_waits],
        **({"branches": session.branches.to_json()} if session.branches.forks else {}),
        **({"runs": [list(r) for r in session.runs]} if session.runs else {}),
        **({"prediction": held} if (held := transcript.predictor.export()) is not None else {}),
    }


# -- reading ---------------------------------------------------------------------------------------


def _from_v0(record: dict[str, Any]) -> dict[str, Any]:
    """Version 0: records without a ``version`` key, as the first draft of this module wrote them.

    Keys were snake_case (``thread_id``, ``last_run_id``, ``tool_calls``, ``tracker_error``, and
    ``run_id`` / ``raw_value`` in the pending set) and the answers a mapping by interrupt id.
    """
    renames = {"thread_id": "threadId", "last_run_id": "lastRunId", "tool_calls": "toolCalls",
               "tracker_error": "trackerError", "status_error": "statusError"}
    out = {renames.get(key, key): value for key, value in record.items()}
    pending = out.get("pending")
    if isinstance(pending, dict):
        out["pending"] = {{"run_id": "runId", "raw_value": "rawValue"}.get(k, k): v for k, v in pending.items()}
    answers = out.get("answers")
    if isinstance(answers, dict):
        out["answers"] = [{"interruptId": key, **entry} if isinstance(entry, dict) and "interruptId" not in entry
                          else entry for key, entry in answers.items()]
    out["version"] = 1
    return out


#: ``version -> function`` turning a record of that version into one of the next version.
_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _from_v0}


def migrate_record(record: Any) -> dict[str, Any]:
    """``record`` brought to :data:`RECORD_VERSION`, as far as it is understood.

    A record without ``version`` is version 0. Older versions are migrated step by step; a newer
    one is read as if it were the current version, with a warning. Fields no version here knows
    are named in a warning and ignored.

    Raises:
        RecordError: ``record`` is not an object, or its ``version`` is not an integer.
    """
    if not isinstance(record, dict):
        raise RecordError(f"a thread record must be an object, got {type(record).__name__}")
    version = record.get("version", 0)
    if isinstance(version, bool) or not isinstance(version, int):
        raise RecordError(f"a thread record's version must be an integer, got {version!r:.40}")
    out = dict(record)
    if version > RECORD_VERSION:
        log.warning("thread record %.80r has version %d, newer than this code (%d): reading the fields it knows",
                    out.get("threadId"), version, RECORD_VERSION)
    while version < RECORD_VERSION:
        migrate = _MIGRATIONS.get(version)
        if migrate is None:
            log.warning("thread record %.80r has version %d, which no migration knows: reading the fields it knows",
                        out.get("threadId", out.get("thread_id")), version)
            break
        out = migrate(out)
        version = out["version"]
    unknown = sorted(set(out) - _KNOWN_KEYS)
    if unknown:
        log.warning("thread record %.80r: ignoring fields this version does not know: %s",
                    out.get("threadId"), ", ".join(k[:40] for k in unknown[:20]))
    out["version"] = RECORD_VERSION
    return out


def session_from_record(record: Any, client: AgentClient | None = None, *,
                        now: Callable[[], datetime] | None = None) -> AgentSession:
    """Rebuild a session from :func:`session_record`'s record (any version :func:`migrate_record` reads).

    The rebuilt session has the same transcript (messages, tool calls and their flags, state),
    pending set (its tool calls awaiting approval again), answers, seal and errors, so its next
    :meth:`AgentSession.build_input` carries the same history and state. A record saved while a
    run was in flight comes back with no run: its status is ``idle`` and a set that run still owed
    is pending again (S15). The session has no client unless ``client`` is given (attach one with
    ``session.client = AgentClient(...)`` before running it).

    Args:
        record: the record (a dict).
        client: the agent client for the session, or None.
        now: the tracker's clock (S11), UTC wall time by default.

    Raises:
        RecordError: the record cannot be read (a wrong shape, a message or interrupt that does
            not validate).
    """
    data = migrate_record(record)
    thread_id = data.get("threadId")
    if not isinstance(thread_id, str) or not thread_id:
        raise RecordError("a thread record needs a threadId")
    raw_messages = data.get("messages") or []
    if not isinstance(raw_messages, list):
        raise RecordError(f"thread {thread_id:.80}: messages must be a list")
    try:
        messages = [_MESSAGE_ADAPTER.validate_python(m) for m in raw_messages]
    except ValidationError as exc:
        raise RecordError(f"thread {thread_id:.80}: a message does not validate: {_first_error(exc)}") from None
    session = AgentSession(client if client is not None else AgentClient(""), thread_id=thread_id, now=now)
    session.client = client
    transcript = session.transcript
    if messages:
        transcript.apply(MessagesSnapshotEvent(messages=messages))
        transcript.mark_tail()  # everything restored is history
    _restore_tool_calls(transcript, raw_messages, data.get("toolCalls"))
    transcript.state = data.get("state", {})
    try:
        session.tracker.restore({"pending": data.get("pending"), "answers": data.get("answers"),
                                 "sealed": data.get("sealed", False), "error": data.get("trackerError")})
    except ValidationError as exc:
        raise RecordError(f"thread {thread_id:.80}: the pending set does not validate: {_first_error(exc)}") from None
    except ValueError as exc:
        raise RecordError(f"thread {thread_id:.80}: {exc}") from None
    _restore_branches(session, data)
    transcript.predictor.restore(data.get("prediction"))
    session.last_run_id = _opt_str(data.get("lastRunId"))
    session.error = _opt_str(data.get("error"))
    status = data.get("status")
    transcript.status = status if status in _RESTORABLE_STATUS else "idle"
    transcript.error = _opt_str(data.get("statusError"))
    transcript.thread_id, transcript.run_id = thread_id, session.last_run_id
    pending = session.tracker.pending
    session.tool_waits = _tool_waits(thread_id, data.get("toolWaits"), transcript)
    awaited = _awaited(pending.interrupts) if pending else set()
    transcript.set_awaiting(awaited | {w.tool_call_id for w in session.tool_waits})
    return session


def _restore_branches(session: AgentSession, data: dict[str, Any]) -> None:
    """The forks' index and the shown path's runs (agui/branches.py); absent in records without branches."""
    try:
        session.branches = Branches.from_json(data.get("branches"))
    except BranchError as exc:
        raise RecordError(f"thread {session.thread_id:.80}: {exc}") from None
    runs = data.get("runs")
    session.runs = [[str(r[0]), r[1]] for r in runs if isinstance(r, list) and len(r) == 2 and isinstance(r[1], int)
                    ] if isinstance(runs, list) else []


def _tool_waits(thread_id: str, raw: Any, transcript: Transcript) -> list[ToolWait]:
    """The waiting frontend-tool calls of a record: only calls the transcript has, still without a result."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(w, dict) for w in raw):
        raise RecordError(f"thread {thread_id:.80}: toolWaits must be a list of objects")
    waits = []
    for item in raw:
        call = transcript.tool_calls.get(item.get("toolCallId"))
        if call is None or call.result is not None or not isinstance(item.get("name"), str):
            continue
        waits.append(ToolWait(call.id, item["name"], item.get("args"), cancellable=item.get("cancellable") is not False,
                              handled=item.get("handled") is True))
    return waits


def _restore_tool_calls(transcript: Transcript, raw_messages: list[Any], flags: Any) -> None:
    """What ``MESSAGES_SNAPSHOT`` does not rebuild: tool calls' encrypted values and UI flags."""
    for raw in raw_messages:
        for raw_call in (raw.get("toolCalls") or []) if isinstance(raw, dict) else []:
            if isinstance(raw_call, dict) and raw_call.get("encryptedValue") is not None:
                call = transcript.tool_calls.get(str(raw_call.get("id")))
                if call is not None:
                    call.encrypted_value = raw_call["encryptedValue"]
    if not isinstance(flags, dict):
        if flags is not None:
            log.warning("thread record: ignoring toolCalls flags that are not an object")
        return
    for call_id, marks in flags.items():
        call = transcript.tool_calls.get(call_id)
        if call is None or not isinstance(marks, dict):
            log.warning("thread record: ignoring flags of unknown tool call %.80r", call_id)
            continue
        call.rejected, call.failed = bool(marks.get("rejected")), bool(marks.get("failed"))


def _awaited(interrupts: Iterable[Any]) -> set[str]:
    return {i.tool_call_id for i in interrupts if i.tool_call_id}


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return str(exc)
    first = errors[0]
    return f"{'.'.join(str(p) for p in first.get('loc', ()))}: {first.get('msg')}"
