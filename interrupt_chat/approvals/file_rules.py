"""Rules as code: the policy file a chat's rules are checked against first (§6.4, docs/guides/rules.md).

``ic.Chat(policy_file=...)``, else ``INTERRUPT_CHAT_POLICY_FILE``: a YAML list of rules (parsed and
validated by :mod:`interrupt_chat.model.policy_file`). It is read when the chat is declared — a
malformed file stops the app there, before anything is served, with the file, the line and the
reason — and again when it changes (checked at most once a second, when a rule is needed); a
file that becomes malformed while the app runs is logged once and the last good rules stay.
"""

from __future__ import annotations

import os
from typing import Any

from ..model.policy_file import FileRule, PolicyFile

__all__ = ["ENV", "declare", "file_of", "rules_of"]

ENV = "INTERRUPT_CHAT_POLICY_FILE"

_files: dict[str, PolicyFile] = {}  # by absolute path: one reader per file, whichever chats use it


def _open(path: str | os.PathLike[str]) -> PolicyFile:
    key = os.path.abspath(os.fspath(path))
    if key not in _files:
        _files[key] = PolicyFile(key)  # strict: a malformed or missing file raises PolicyFileError here
    return _files[key]


def declare(chat_cls: Any, policy_file: str | os.PathLike[str] | None) -> None:
    """At declaration: read the chat's policy file (or the environment's) now, so a bad one stops the start.

    Raises:
        PolicyFileError: the file is missing, not YAML, or breaks the rules' shape (its line and why).
    """
    if policy_file is not None:
        chat_cls.policy_file = _open(policy_file)
    elif os.environ.get(ENV, "").strip():
        _open(os.environ[ENV].strip())


def file_of(chat_cls: Any) -> PolicyFile | None:
    """The policy file a chat follows: its own, else the environment's, else none."""
    own = getattr(chat_cls, "policy_file", None)
    if isinstance(own, PolicyFile):
        return own
    path = os.environ.get(ENV, "").strip()
    return _open(path) if path else None


def rules_of(chat_cls: Any) -> tuple[FileRule, ...]:
    """The chat's file rules as they stand now (re-read when the file changed)."""
    found = file_of(chat_cls)
    return found.rules() if found is not None else ()
