r"""What a hostile agent can send that must not poison a thread: bounded, repaired, redacted text.

- :func:`too_deep`: JSON nested deeper than :data:`MAX_DEPTH` is refused (Python and pydantic
  recurse over it; a deep enough value breaks every later request of the thread).
- :class:`SurrogateRepair`: JSON ``\uD83D`` escapes can carry half of a UTF-16 pair. A pair
  split across two deltas of one message is rejoined; any other lone half becomes U+FFFD, so no
  string that cannot be encoded as UTF-8 ever enters the transcript.
- :func:`short_text`, :func:`display_url`, :func:`redact`: error text a person reads is short,
  plain, one line, and never shows credentials from the agent URL.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

__all__ = ["MAX_DEPTH", "MAX_ERROR_CHARS", "SurrogateRepair", "display_url", "parse_json", "redact", "scrub",
           "short_text", "too_deep"]

MAX_DEPTH = 100  # JSON nesting levels in one event (pydantic serialises about 250 at most)
MAX_ERROR_CHARS = 300

_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_DELTA_KEYS = {"TEXT_MESSAGE_CONTENT": "messageId", "TEXT_MESSAGE_CHUNK": "messageId",
               "REASONING_MESSAGE_CONTENT": "messageId", "REASONING_MESSAGE_CHUNK": "messageId",
               "TOOL_CALL_ARGS": "toolCallId", "TOOL_CALL_CHUNK": "toolCallId"}


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (decoded JSON) nests containers deeper than ``limit`` (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate replaced by U+FFFD (keys included)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


class SurrogateRepair:
    """Per run: rejoins UTF-16 pairs split across deltas, replaces every other lone half."""

    def __init__(self) -> None:
        """Start a run: no half pair carried over."""
        self._carry: dict[str, str] = {}  # a delta's trailing high surrogate, by message / tool call id

    def needed(self, data: str) -> bool:
        """Whether a ``data:`` line can hold a surrogate (only a JSON escape can make one)."""
        return bool(self._carry) or ("\\u" in data and _ESCAPED_SURROGATE.search(data) is not None)

    def repair(self, obj: Any) -> Any:
        """The decoded event, repaired; None when a delta is left with nothing to say."""
        if not isinstance(obj, dict):
            return scrub(obj)
        key_name = _DELTA_KEYS.get(str(obj.get("type")))
        key = obj.get(key_name) if key_name else None
        delta = obj.get("delta")
        if isinstance(key, str) and isinstance(delta, str):
            delta = self._carry.pop(key, "") + delta
            if delta and "\ud800" <= delta[-1] <= "\udbff":  # a high half: its low half may come next
                self._carry[key], delta = delta[-1], delta[:-1]
            if not delta:
                return None
            obj = {**obj, "delta": delta}
        return scrub(obj)


def parse_json(text: str) -> Any:
    """``json.loads`` for agent-supplied text: repaired surrogates, bounded depth.

    Raises:
        ValueError: not JSON, nested deeper than :data:`MAX_DEPTH`, or past Python's limits.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if too_deep(value):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return scrub(value)


def short_text(text: Any, limit: int = MAX_ERROR_CHARS) -> str:
    """One line of plain text, at most ``limit`` characters (an ellipsis marks a cut).

    The text stays as the agent wrote it, ``<…>`` included ("expected <class 'int'>", "<lambda>"): a
    page draws it as text, escaped, never as markup. Only control characters and line breaks go.
    """
    line = " ".join(_CONTROL.sub(" ", scrub(str(text))).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def display_url(url: str) -> str:
    """``url`` as it may be shown: no user name or password, no query values."""
    try:
        parsed = httpx.URL(url)
        shown = parsed.copy_with(username=None, password=None, query=None, fragment=None)
    except (httpx.InvalidURL, TypeError, ValueError):
        return "the agent URL"
    return str(shown) + ("?…" if parsed.query else "")


def redact(text: str, url: str) -> str:
    """``text`` with ``url`` shown as :func:`display_url` and its password and query blanked out."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return text
    text = text.replace(url, display_url(url))
    secrets = [s for s in (parsed.password, parsed.query.decode("ascii", "replace")) if s and len(s) >= 4]
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
