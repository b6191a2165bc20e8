"""Row view models for the chat: messages, tool calls and threads as the page draws them.

Framework-free, like :mod:`interrupt_chat.model.cards`: plain dataclasses and functions that turn
the core's :class:`~interrupt_chat.agui.Transcript` into what ``rx.foreach`` iterates.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, overload

from ..agui import AgentSession, MessageView, Transcript
from ..agui.multimodal import attachments_of
from ..agui.sanitize import parse_json
from ..agui.transport import BROKEN, UNREACHABLE, UNREACHABLE_TIMEOUT
from .cards import Card
from .files import human_size
from .history import digest
from .stream_keys import args_key, text_key

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "BROKEN_MESSAGE",
    "UNREACHABLE_MESSAGE",
    "AttachmentRow",
    "HistoryRows",
    "InboxSet",
    "InboxToolRow",
    "MessageRow",
    "ToolCallRow",
    "ToolWaitRow",
    "attachment_rows",
    "branch_nav",
    "message_rows",
    "people_error",
    "regenerable",
    "thread_rows",
    "tool_rows",
    "waiting_count",
    "waits_for_person",
]

DRAWN_ROLES = ("user", "assistant", "tool", "reasoning")


def branch_nav(session: AgentSession) -> dict[str, str]:
    """Message id -> "shown/count" for the shown path's messages that have other versions (``branch-nav``)."""
    if not session.branches.forks:
        return {}
    found = session.branches.nav([m.id for m in session.transcript.messages])
    return {message_id: f"{k}/{n}" for message_id, (k, n) in found.items()}


def regenerable(session: AgentSession) -> str:
    """The id of the answer ``message-regenerate`` sits on: the last assistant message, after a user message."""
    answer = ""
    for message in reversed(session.transcript.messages):  # the last turn only
        if message.role == "user":
            return answer
        if message.role == "assistant" and not answer:
            answer = message.id
    return ""
TITLE_CHARS = 40


@dataclass
class ToolCallRow:
    """A tool call as the chat draws it."""

    id: str
    name: str
    status: str  # streaming | running | awaiting_approval | complete | failed
    args: str
    result: str
    rejected: bool = False  # its approval was denied or cancelled
    result_id: str = ""  # the tool message drawn inside this card ("" when it is drawn as its own row)
    stream: str = ""  # the arguments' stream key while they are frozen in the var (streaming.py)
    streaming: bool = False
    input: Any = None  # the arguments as JSON once the call is complete, for a custom renderer (chat(tool_renderers))
    output: Any = None  # the result as JSON when it is JSON (else None; ``result`` has the text)


@dataclass
class ToolWaitRow:
    """A frontend-tool call waiting for a person, as the chat draws it (S27)."""

    id: str
    name: str
    args: Any  # the arguments (JSON), validated against the tool's parameters
    args_json: str  # the same, pretty-printed for the default card
    cancellable: bool


@dataclass
class InboxToolRow:
    """A frontend-tool call waiting for the owner, as the approvals inbox lists it (answered in its thread)."""

    thread_id: str
    thread_title: str
    raised: str
    id: str
    name: str
    args_json: str


@dataclass
class InboxSet:
    """A waiting set that the chat's own slot takes (S20): the inbox draws it with that slot's ``render_fn``."""

    thread_id: str
    thread_title: str
    raised: str
    run_id: str
    slot: str  # the configuration's full name: which render_fn draws it
    event: dict[str, Any] | None = None
    interrupt: dict[str, Any] | None = None
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    cards: list[Card] = field(default_factory=list)
    id: str = ""  # the first interrupt's id (empty for legacy)
    reason: str = ""


@dataclass
class AttachmentRow:
    """A file of a sent message (or one ready to send): a thumbnail for images, name and size for the rest."""

    file_id: str
    name: str
    mime: str
    size: str  # for people: "12 KB"
    thumb: str = ""  # a small data: URL of an image's thumbnail


@dataclass
class MessageRow:
    """A transcript message as the chat draws it (``rx.foreach`` over typed rows)."""

    id: str
    role: str  # user | assistant | tool | reasoning
    content: str
    tool_calls: list[ToolCallRow]
    streaming: bool
    stream: str = ""  # the text's stream key while it is frozen in the var (streaming.py)
    attachments: list[AttachmentRow] = field(default_factory=list)  # a user message's files


def attachment_rows(content: Any) -> list[AttachmentRow]:
    """The drawn files of a message's multimodal content."""
    return [AttachmentRow(a["file_id"], a["name"], a["mime"], human_size(a["size"]), a["thumb"])
            for a in attachments_of(content)]


@dataclass(frozen=True)
class _Frozen:
    """Which texts the var holds only a prefix of: ``ChatState._frozen`` and the thread it keys."""

    thread_id: str
    lengths: Mapping[str, int]


def message_rows(messages: Sequence[MessageView], transcript: Transcript, thread_id: str = "",
                 frozen: Mapping[str, int] | None = None) -> list[MessageRow]:
    """The rows for ``messages`` (a slice of ``transcript.messages``), skipping what is not drawn.

    A tool result is drawn once: inside its call's card when both are in the slice (the card then
    carries the result message's id), else as a row of its own. A text in ``frozen`` (stream key
    to length, see :mod:`interrupt_chat.tab.streaming`) carries only that prefix and its stream key.
    """
    return HistoryRows(messages, transcript, thread_id, frozen)[:]


class HistoryRows(Sequence["MessageRow"]):
    """:func:`message_rows` of a slice, each row made only when it is read; their digests read at once.

    A history's rows are O(history) to make; a publish after a turn needs the digests of all of
    them (to find what changed) but only the changed rows. A row's digest is kept with its message
    (:meth:`Transcript.remember`) until the message changes, so a turn makes only its own rows.
    """

    def __init__(self, messages: Sequence[MessageView], transcript: Transcript, thread_id: str = "",
                 frozen: Mapping[str, int] | None = None) -> None:
        """The rows of ``messages``, a slice of ``transcript.messages`` (``frozen`` as :func:`message_rows`)."""
        drawn_calls = {call_id for message in messages for call_id in message.tool_call_ids}
        results: dict[str | None, str] = {m.tool_call_id: m.id for m in messages
                                          if m.role == "tool" and m.tool_call_id in drawn_calls}
        calls = transcript.tool_calls
        self._drawn = [m for m in messages if m.role in DRAWN_ROLES  # not: a result drawn in its card, an empty turn
                       and not (m.role == "tool" and m.tool_call_id in results)
                       and not (m.role == "assistant" and not m.streaming and not m.content
                                and not any(c in calls for c in m.tool_call_ids))]
        self._results: Mapping[str | None, str] = results
        self._transcript, self._cut = transcript, _Frozen(thread_id, frozen) if frozen else None
        self._made: dict[int, MessageRow] = {}

    def __len__(self) -> int:
        """How many rows: the drawn messages of the slice."""
        return len(self._drawn)

    @overload
    def __getitem__(self, index: int) -> MessageRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[MessageRow]: ...

    def __getitem__(self, index: int | slice) -> MessageRow | list[MessageRow]:
        """A row, or a list of rows for a slice (made now, once each)."""
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(len(self._drawn)))]
        return self._row(range(len(self._drawn))[index])

    def _row(self, index: int) -> MessageRow:
        row = self._made.get(index)
        if row is None:
            row = self._made[index] = _message_row(self._drawn[index], self._transcript, self._results, self._cut)
        return row

    def digests(self) -> list[bytes]:
        """Each row's :func:`~interrupt_chat.model.history.digest` (uncut rows: ``frozen`` changes none)."""
        transcript, results, out = self._transcript, self._results, []
        for index, message in enumerate(self._drawn):
            key = tuple(results.get(c, "") for c in message.tool_call_ids)  # what its cards draw of the slice
            found = transcript.remembered(message, key)
            if found is None:
                row = self._row(index) if self._cut is None else _message_row(message, transcript, results, None)
                found = digest(row)
                transcript.remember(message, key, found)
            out.append(found)
        return out


def _message_row(message: MessageView, transcript: Transcript, results: Mapping[str | None, str],
                 cut: _Frozen | None) -> MessageRow:
    """A drawn message's row (:class:`HistoryRows` leaves out the others)."""
    calls = [_tool_call_row(transcript, call_id, results.get(call_id, ""), cut) for call_id in message.tool_call_ids]
    content, stream = message.content, ""
    if cut is not None and (length := cut.lengths.get(key := text_key(cut.thread_id, message.id))) is not None:
        content, stream = content[:length], key
    files = attachment_rows(message.raw_content) if message.role == "user" and message.raw_content else []
    return MessageRow(id=message.id, role=message.role, content=content,
                      tool_calls=[call for call in calls if call is not None],
                      streaming=message.streaming, stream=stream, attachments=files)


def _tool_call_row(transcript: Transcript, call_id: str, result_id: str, cut: _Frozen | None) -> ToolCallRow | None:
    call = transcript.tool_calls.get(call_id)
    if call is None:
        return None
    parsed = call.args  # parsed on each access: once per row
    args = json.dumps(parsed, indent=2, ensure_ascii=False) if parsed is not None else call.args_text
    stream = ""
    if cut is not None and (length := cut.lengths.get(key := args_key(cut.thread_id, call.id))) is not None:
        args, stream = call.args_text[:length], key
    return ToolCallRow(id=call.id, name=call.name, status=call.status, args=args,
                       result=call.result or "" if result_id else "", rejected=call.rejected, result_id=result_id,
                       stream=stream, streaming=call.status == "streaming", input=parsed,
                       output=_json_or_none(call.result))


@functools.lru_cache(maxsize=256)  # rows are rebuilt on every push of the turn: parse each result once
def _json_or_none(text: str | None) -> Any:
    if not text:
        return None
    try:
        return parse_json(text)
    except ValueError:
        return None


class Summary(Protocol):
    """What the thread list reads of a stored thread (the store's ``ThreadSummary``)."""

    @property
    def thread_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def updated_at(self) -> datetime: ...
    @property
    def pending(self) -> bool: ...
    @property
    def pending_count(self) -> int: ...


def thread_rows(sessions: Mapping[str, AgentSession], current: str, summaries: Sequence[Summary] = (),
                titles: Mapping[str, str] | None = None, query: str = "") -> list[dict[str, str]]:
    """One row per thread: id, title, updated (UTC, minutes), pending and current flags.

    The database's list (newest first; with a ``query``, its search result) with what this state
    holds in memory laid over it: a thread only in memory comes first (when it matches the
    query), memory knows best whether one is pending, and ``titles`` are renames made here.
    """
    stored = {s.thread_id: s for s in summaries}
    fresh = [thread_id for thread_id in sessions if thread_id not in stored
             and (not query or _matches(sessions[thread_id], (titles or {}).get(thread_id, ""), query))]
    rows = []
    for thread_id in [*reversed(fresh), *stored]:
        summary, session = stored.get(thread_id), sessions.get(thread_id)
        first_user = next((m.content for m in session.transcript.messages if m.role == "user"), "") if session else ""
        title = ((titles or {}).get(thread_id) or (summary.title if summary else "") or first_user[:TITLE_CHARS]
                 or "New chat")
        pending = waits_for_person(session) if session else bool(summary and summary.pending)
        updated = summary.updated_at.strftime("%Y-%m-%d %H:%M") if summary else ""
        rows.append({"id": thread_id, "title": title, "updated": updated, "pending": _flag(pending),
                     "current": _flag(thread_id == current)})
    return rows


def _matches(session: AgentSession, title: str, query: str) -> bool:
    needle = query.casefold()
    return needle in title.casefold() or any(needle in m.content.casefold() for m in session.transcript.messages)


def _flag(value: Any) -> str:
    return "true" if value else "false"


def waiting_count(sessions: Mapping[str, AgentSession], summaries: Sequence[Summary]) -> int:
    """How many requests wait for the owner: open interrupts and waiting tool calls (memory knows best)."""
    count = sum(s.pending_count for s in summaries if s.thread_id not in sessions)
    for session in sessions.values():
        pending = session.tracker.pending
        if pending is not None:
            answered = session.tracker.answers
            count += 1 if pending.kind == "legacy" else sum(i.id not in answered for i in pending.interrupts)
        count += sum(not w.handled for w in session.tool_waits)
    return count


def waits_for_person(session: AgentSession) -> bool:
    """Interrupts are pending or frontend-tool calls wait for the person (S3, S27)."""
    return session.tracker.pending is not None or any(not w.handled for w in session.tool_waits)


def tool_rows(session: AgentSession) -> list[ToolWaitRow]:
    """The calls a person answers, in the order the agent made them (handler tools answer themselves)."""
    return [ToolWaitRow(id=w.tool_call_id, name=w.name, args=w.args, args_json=json.dumps(w.args, indent=2),
                        cancellable=w.cancellable) for w in session.tool_waits if not w.handled]


UNREACHABLE_MESSAGE = "The assistant is unreachable right now. Try again in a moment."
BROKEN_MESSAGE = "The assistant stopped before finishing its answer. Try again in a moment."


def people_error(error: str) -> str:
    """A run's error as the chat shows it: an agent that cannot be reached, or whose answer broke off, is said plainly.

    The URL and the cause (credentials redacted, the transport's own words) are in the log line the
    session writes; the page gets what to do. Every other error is already short and plain
    (docs/decisions/0010).
    """
    if error.startswith((UNREACHABLE, UNREACHABLE_TIMEOUT)):
        return UNREACHABLE_MESSAGE
    return BROKEN_MESSAGE if error.startswith(BROKEN) else error
