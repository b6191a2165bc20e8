"""The page-wide keys of streamed texts: a message's text, a tool call's arguments (short: they go with every chunk)."""

from __future__ import annotations

import hashlib

__all__ = ["args_key", "text_key"]


def _key(*parts: str) -> str:
    return hashlib.blake2s("\x00".join(parts).encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()


def text_key(thread_id: str, message_id: str) -> str:
    """The page-wide key of a message's text (short: it goes with every chunk)."""
    return _key(thread_id, "m", message_id)


def args_key(thread_id: str, tool_call_id: str) -> str:
    """The page-wide key of a tool call's streamed arguments."""
    return _key(thread_id, "a", tool_call_id)
