"""Branches: a thread as a tree of messages, kept as the shown path plus hidden continuations.

Each message has a parent, the message before it (the first one: :data:`ROOT`). Editing a user
message or regenerating an answer gives a parent a second child: a *fork*, whose children are
*versions*, oldest first. The transcript holds the shown path, root to leaf, so the history a run
sends is always that linear path. Every version not shown is a *tail*: the record of the
continuation from the fork on (its messages and everything that belongs to them: the pending set
and its answers, waiting tool calls, run status, shared state and the runs that made it), kept
outside the thread's own record by whoever stores it. Switching versions swaps the shown tail for
a hidden one; forks inside a hidden tail stay in the index (they are keyed by message id) and are
on the path again when their tail is.

Pure functions over session records (:func:`~.records.session_record`): framework-free, no I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ROOT", "BranchError", "Branches", "Fork", "Tail", "branch_off", "switch", "tail_text"]

ROOT = ""  # the parent key of a thread's first message

#: Record keys that belong to a continuation, not to the thread: they travel with a tail.
TAIL_KEYS = ("state", "pending", "answers", "sealed", "trackerError", "status", "statusError", "lastRunId", "error",
             "toolWaits")
#: What a new version starts with (the shared state is carried over: the agent's last one).
_FRESH: dict[str, Any] = {"pending": None, "answers": [], "sealed": False, "trackerError": None, "status": "idle",
          "statusError": None, "error": None, "toolWaits": []}
_TEXT_ROLES = ("user", "assistant")


class BranchError(ValueError):
    """A branch operation that does not fit the thread (no such message, fork or version)."""


@dataclass
class Fork:
    """The versions under one parent: branch ids, oldest first, and which one the path shows.

    ``runs``: for each hidden version, the runs that made it (their audit entries are not shown).
    """

    versions: list[str]
    shown: int = 0
    runs: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """As stored in the thread record."""
        runs = {k: list(v) for k, v in self.runs.items()}
        return {"versions": list(self.versions), "shown": self.shown, "runs": runs}

    @classmethod
    def from_json(cls, raw: Any) -> Fork:
        """From :meth:`to_json` (a malformed entry raises :class:`BranchError`)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("versions"), list) or not raw["versions"]:
            raise BranchError("a fork needs a non-empty list of versions")
        versions = [str(v) for v in raw["versions"]]
        shown = raw.get("shown", 0)
        if not isinstance(shown, int) or not 0 <= shown < len(versions):
            raise BranchError(f"a fork's shown version {shown!r} is not one of its {len(versions)}")
        runs = raw.get("runs") or {}
        return cls(versions, shown, {str(k): [str(r) for r in v] for k, v in runs.items() if isinstance(v, list)}
                   if isinstance(runs, dict) else {})


@dataclass
class Tail:
    """A hidden continuation: the version ``branch_id`` under ``parent_id``, as a partial record."""

    branch_id: str
    parent_id: str
    record: dict[str, Any]

    @property
    def text(self) -> str:
        """What search reads: the text of its user and assistant messages."""
        return tail_text(self.record.get("messages") or [])


@dataclass
class Branches:
    """A thread's forks by parent message id (:data:`ROOT` for the first message)."""

    forks: dict[str, Fork] = field(default_factory=dict)
    local: dict[str, dict[str, Any]] = field(default_factory=dict)  # hidden tails held in memory (no store)

    def keep_local(self, put: Iterable[Tail], drop: Iterable[str]) -> None:
        """Hold hidden tails here (a thread without a store): ``put`` kept, ``drop`` forgotten."""
        for tail in put:
            self.local[tail.branch_id] = tail.record
        for branch_id in drop:
            self.local.pop(branch_id, None)

    def to_json(self) -> dict[str, Any]:
        """As stored in the thread record (``branches``; tails held in memory are not in it)."""
        return {parent: fork.to_json() for parent, fork in self.forks.items()}

    @classmethod
    def from_json(cls, raw: Any) -> Branches:
        """From :meth:`to_json`; None or ``{}``: no forks."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise BranchError("branches must be an object")
        return cls({str(parent): Fork.from_json(fork) for parent, fork in raw.items()})

    def nav(self, path: Sequence[str]) -> dict[str, tuple[int, int]]:
        """For each message of the path that has other versions: (shown, count), shown counting from 1."""
        out: dict[str, tuple[int, int]] = {}
        if not self.forks:
            return out
        for index, message_id in enumerate(path):
            fork = self.forks.get(path[index - 1] if index else ROOT)
            if fork is not None:
                out[message_id] = (fork.shown + 1, len(fork.versions))
        return out

    def hidden_runs(self) -> set[str]:
        """The runs of every hidden version (their audit entries belong to a branch not shown)."""
        return {run for fork in self.forks.values() for runs in fork.runs.values() for run in runs}


def _new_branch_id() -> str:
    return f"branch-{uuid.uuid4().hex[:16]}"


def _split(record: dict[str, Any], index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record cut before message ``index``: (the head, with the tail's keys, and the tail)."""
    messages = list(record.get("messages") or [])
    tail_calls = {c.get("id") for m in messages[index:] if isinstance(m, dict) for c in m.get("toolCalls") or []
                  if isinstance(c, dict)}
    flags = record.get("toolCalls") or {}
    runs = [r for r in record.get("runs") or [] if isinstance(r, list) and len(r) == 2]
    tail = {key: record.get(key) for key in TAIL_KEYS if key in record}
    tail.update(messages=messages[index:], toolCalls={k: v for k, v in flags.items() if k in tail_calls},
                runs=[r for r in runs if r[1] >= index])
    head = {**record, "messages": messages[:index], "runs": [r for r in runs if r[1] < index],
            "toolCalls": {k: v for k, v in flags.items() if k not in tail_calls}}
    return head, tail


def _join(head: dict[str, Any], tail: dict[str, Any]) -> dict[str, Any]:
    out = {**head, **{key: tail[key] for key in TAIL_KEYS if key in tail}}
    out["messages"] = list(head.get("messages") or []) + list(tail.get("messages") or [])
    out["toolCalls"] = {**(head.get("toolCalls") or {}), **(tail.get("toolCalls") or {})}
    out["runs"] = list(head.get("runs") or []) + list(tail.get("runs") or [])
    return out


def _parent(record: dict[str, Any], index: int) -> str:
    messages = record.get("messages") or []
    if not 0 <= index < len(messages):
        raise BranchError(f"no message at position {index}")
    return str(messages[index - 1].get("id")) if index else ROOT


def branch_off(record: dict[str, Any], branches: Branches, index: int) -> tuple[dict[str, Any], Tail]:
    """Start a new version at message ``index``: the shown continuation from there becomes a hidden tail.

    Returns the record of the path up to ``index`` (nothing pending, the shared state kept), ready
    for the new version's first message, and the tail to store. ``branches`` gains (or extends) the
    fork, with the new version shown.
    """
    parent = _parent(record, index)
    head, tail = _split(record, index)
    fork = branches.forks.get(parent)
    if fork is None:
        fork = branches.forks[parent] = Fork([_new_branch_id()])
    hidden = fork.versions[fork.shown]
    fork.runs[hidden] = [r[0] for r in tail["runs"]]
    fork.versions.append(_new_branch_id())
    fork.shown = len(fork.versions) - 1
    return {**head, **_FRESH}, Tail(hidden, parent, tail)


def switch(record: dict[str, Any], branches: Branches, message_id: str, target: int,
           load: Any) -> tuple[dict[str, Any], Tail, str]:
    """Show version ``target`` (counting from 0) of the fork whose shown version starts at ``message_id``.

    ``load(branch_id)`` returns the hidden tail's record (or None: it is missing). Returns the new
    record, the tail that was shown (now hidden, to store) and the id of the tail now shown (to drop).

    Raises:
        BranchError: no such message or fork, a target out of range or the shown one, a missing tail.
    """
    messages = record.get("messages") or []
    index = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("id") == message_id), None)
    if index is None:
        raise BranchError(f"message {message_id:.80} is not on the shown path")
    parent = _parent(record, index)
    fork = branches.forks.get(parent)
    if fork is None:
        raise BranchError(f"message {message_id:.80} has no other versions")
    if not 0 <= target < len(fork.versions) or target == fork.shown:
        raise BranchError(f"no version {target + 1} to switch to (of {len(fork.versions)}, showing {fork.shown + 1})")
    wanted = fork.versions[target]
    stored = load(wanted)
    if not isinstance(stored, dict):
        raise BranchError(f"version {target + 1} of this message is missing")
    head, tail = _split(record, index)
    hidden = fork.versions[fork.shown]
    fork.runs[hidden] = [r[0] for r in tail["runs"]]
    fork.runs.pop(wanted, None)
    fork.shown = target
    return _join(head, stored), Tail(hidden, parent, tail), wanted


def tail_text(messages: Iterable[Any]) -> str:
    """The text of a tail's user and assistant messages, one per line (what a thread search reads)."""
    out = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in _TEXT_ROLES:
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        if isinstance(content, str) and content:
            out.append(content.replace("\x00", ""))
    return "\n".join(out)
