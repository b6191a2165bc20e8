"""The audit's hash chain (contracts §6.5, issue 44): each entry carries the hash of the one before it.

Framework-free. An entry's hash is SHA-256 over the previous entry's hash and the entry's canonical
encoding (RFC 8785, the JSON Canonicalization Scheme: sorted keys, no spaces, numbers as ECMAScript
prints them), so the chain depends on what an entry says, never on how a database or a JSON library
happened to lay it out. Editing, deleting or reordering an entry breaks every hash after it;
appending is what the chain allows. :func:`verify` walks entries in their order and names the first
that does not match.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

__all__ = ["GENESIS", "HASH_KEYS", "Broken", "Verified", "canonical", "entry_hash", "verify"]

GENESIS = "0" * 64  # the hash "before" the first entry of a chain
HASH_KEYS = ("hash", "prev_hash")  # an entry's own chain fields: never part of what is hashed


def canonical(entry: Mapping[str, Any]) -> bytes:
    """The entry's RFC 8785 encoding, without its chain fields (:data:`HASH_KEYS`).

    Raises:
        rfc8785.CanonicalizationError: a value JSON cannot carry canonically (NaN, an integer beyond 2**53…).
    """
    return rfc8785.dumps({key: value for key, value in entry.items() if key not in HASH_KEYS})


def entry_hash(prev_hash: str, entry: Mapping[str, Any]) -> str:
    """The hash an entry carries: SHA-256 (hex) of the previous hash's text and the entry's canonical bytes."""
    return hashlib.sha256(prev_hash.encode("ascii") + b"\n" + canonical(entry)).hexdigest()


@dataclass(frozen=True)
class Verified:
    """A chain that holds: how many entries it has, and the hash of the last (the head)."""

    count: int
    head: str


@dataclass(frozen=True)
class Broken:
    """A chain that does not hold: the first entry that does not match, and why."""

    entry_id: Any
    index: int  # 0-based position in the walk
    reason: str


def verify(entries: Iterable[Mapping[str, Any]], *, key: str = "id") -> Verified | Broken:
    """Walk ``entries`` in order: each must name the previous entry's hash and carry its own.

    Args:
        entries: the chain's entries, oldest first, each with ``prev_hash`` and ``hash``.
        key: the field that names an entry in the result (its database id).
    """
    previous, count = GENESIS, 0
    for index, entry in enumerate(entries):
        name = entry.get(key)
        if entry.get("prev_hash") != previous:
            why = "an entry before it was changed, removed or moved" if index else "the chain does not start here"
            return Broken(name, index, f"prev_hash does not match: {why}")
        try:
            expected = entry_hash(previous, entry)
        except rfc8785.CanonicalizationError as error:
            return Broken(name, index, f"not canonical JSON: {error}")
        if entry.get("hash") != expected:
            return Broken(name, index, "hash does not match: the entry was changed")
        previous, count = expected, count + 1
    return Verified(count, previous)
