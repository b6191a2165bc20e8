"""Secrets in a JSON Schema (S23): the one recursive test the store, the forms and the validator share.

A value is a secret when its schema says ``format: password`` or ``writeOnly: true``, at any depth:
a field, a field of a nested object, the items of an array, or the whole answer. Framework-free.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

__all__ = ["SecretMap", "holds_secret", "is_secret_schema", "secret_in", "secret_parts"]

_SCAN_LIMIT = 10_000  # schema nodes looked at; a bigger schema is taken to hold a secret
_MAX_DEPTH = 100  # payload levels (check_answer's bound); anything deeper under a secret-holding schema is hidden


def is_secret_schema(prop: Any, root: Any = None) -> bool:
    """Whether a value under ``prop`` is a secret: ``format: password`` or ``writeOnly: true``.

    Also through what applies to the same value: ``allOf`` / ``anyOf`` / ``oneOf`` / ``if`` / ``then``
    / ``else`` / ``dependentSchemas`` and local ``$ref`` s (resolved in ``root``, default ``prop``).
    """
    return any(_is_secret(s) for s in _applying([prop], prop if root is None else root))


def holds_secret(schema: Any, root: Any = None) -> bool:
    """Whether a secret is anywhere in ``schema``: itself, any part, any local ``$ref`` it names (S23).

    Any part counts, also one under ``$defs``, ``not`` or ``default``: when in doubt, a secret.
    ``root`` (default ``schema``) resolves the refs; see :class:`SecretMap` for many questions.
    """
    return SecretMap(schema if root is None else root).holds(schema)


class SecretMap:
    """Which parts of one schema hold a secret (:func:`holds_secret`), from one pass over it.

    An agent's schema may be big: a form asks this of every field, a walk of every value. The parts
    are kept while the map lives, so their ids stay theirs. A schema of more than ``_SCAN_LIMIT``
    parts is taken to hold a secret everywhere.
    """

    def __init__(self, root: Any) -> None:
        """Find every part of ``root`` that is or reaches a secret (through its parts and local refs)."""
        self.root = root
        self._parts: dict[int, Any] = {}
        parents: dict[int, list[int]] = {}
        secrets: list[int] = []
        stack = [root]
        while stack and len(self._parts) <= _SCAN_LIMIT:
            node = stack.pop()
            if not isinstance(node, dict | list) or id(node) in self._parts:
                continue
            self._parts[id(node)] = node
            if _is_secret(node):
                secrets.append(id(node))
            for part in ([*node.values(), _local_ref(root, node.get("$ref"))] if isinstance(node, dict) else node):
                if isinstance(part, dict | list):
                    parents.setdefault(id(part), []).append(id(node))
                    stack.append(part)
        self.everything = len(self._parts) > _SCAN_LIMIT
        self._holding = set(secrets)
        while secrets:  # every part a secret is reached from
            for parent in parents.get(secrets.pop(), ()):
                if parent not in self._holding:
                    self._holding.add(parent)
                    secrets.append(parent)

    def holds(self, schema: Any) -> bool:
        """Whether a secret is anywhere in ``schema`` (a part of the root, or any other schema)."""
        if self.everything:
            return True
        if id(schema) in self._parts:
            return id(schema) in self._holding
        return isinstance(schema, dict | list) and SecretMap(schema).holds(schema)  # not from this root


def _is_secret(node: Any) -> bool:
    return isinstance(node, dict) and (node.get("format") == "password" or node.get("writeOnly") is True)


def secret_parts(payload: Any, schema: Any, hide: Callable[[Any], Any]) -> tuple[Any, bool]:
    """``payload`` with each secret part replaced by ``hide(part)``, and whether it had one (S23).

    A part is secret when a schema that applies to it is (:func:`is_secret_schema`): object keywords,
    array keywords, combinators and local ``$ref`` s are followed to any depth. Where the schema holds
    a secret but the payload does not follow its shape (a string where an object of secrets is asked),
    that whole part counts as secret. A key no keyword describes is no secret, and ``None`` never is.
    """
    return _walk(payload, [schema], _Walk(schema, hide), 0)


def secret_in(payload: Any, schema: Any) -> bool:
    """Whether ``payload`` holds a secret part (:func:`secret_parts`): such an answer is never stored."""
    return secret_parts(payload, schema, _nothing)[1]


def _nothing(_part: Any) -> None:
    return None


def _walk(payload: Any, schemas: list[Any], walk: _Walk, depth: int) -> tuple[Any, bool]:
    applying = walk.applying(schemas)
    if payload is None or not any(walk.holds(s) for s in applying):
        return payload, False
    if depth < _MAX_DEPTH and not any(_is_secret(s) for s in applying):
        if isinstance(payload, dict):
            keyed = {k: _walk(v, _for_key(applying, str(k)), walk, depth + 1) for k, v in payload.items()}
            return {k: v for k, (v, _) in keyed.items()}, any(found for _, found in keyed.values())
        if isinstance(payload, list):
            items = [_walk(v, _for_index(applying, i), walk, depth + 1) for i, v in enumerate(payload)]
            return [v for v, _ in items], any(found for _, found in items)
    return walk.hide(payload), True


class _Walk:
    """One walk: its :class:`SecretMap`, its ``hide``, and the schemas applying to a value, by the schemas it got."""

    def __init__(self, root: Any, hide: Callable[[Any], Any]) -> None:
        self.secrets, self.root, self.hide = SecretMap(root), root, hide
        self._applying: dict[tuple[int, ...], list[dict[str, Any]]] = {}

    def holds(self, schema: dict[str, Any]) -> bool:
        return self.secrets.holds(schema)

    def applying(self, schemas: list[Any]) -> list[dict[str, Any]]:
        key = tuple(map(id, schemas))  # the items of an array all get the same schemas
        if key not in self._applying:
            self._applying[key] = _applying(schemas, self.root)
        return self._applying[key]


def _applying(schemas: list[Any], root: Any) -> list[dict[str, Any]]:
    """The object schemas that apply to one value: these, their combinators' and their local refs'."""
    out: list[dict[str, Any]] = []
    stack, seen = list(schemas), set()
    while stack and len(out) < _SCAN_LIMIT:
        s = stack.pop()
        if isinstance(s, dict) and id(s) not in seen:
            seen.add(id(s))
            out.append(s)
            for key in ("allOf", "anyOf", "oneOf"):
                stack.extend(s[key] if isinstance(s.get(key), list) else [])
            extra = s.get("dependentSchemas")
            stack.extend([s.get("if"), s.get("then"), s.get("else"), _local_ref(root, s.get("$ref")),
                          *(extra.values() if isinstance(extra, dict) else [])])
    return out


def _for_key(applying: list[dict[str, Any]], key: str) -> list[Any]:
    found: list[Any] = []
    for s in applying:
        props, patterns = s.get("properties"), s.get("patternProperties")
        named = [props[key]] if isinstance(props, dict) and key in props else []
        named += [sub for p, sub in patterns.items() if _matches(p, key)] if isinstance(patterns, dict) else []
        found += named or [s.get("additionalProperties"), s.get("unevaluatedProperties")]
    return [f for f in found if isinstance(f, dict)]


def _for_index(applying: list[dict[str, Any]], index: int) -> list[Any]:
    found: list[Any] = []
    for s in applying:
        prefix, rest = s.get("prefixItems"), s.get("items")
        if isinstance(rest, list):  # draft 4-7 tuples
            prefix, rest = rest, s.get("additionalItems")
        found += [prefix[index] if isinstance(prefix, list) and index < len(prefix) else rest,
                  s.get("contains"), s.get("unevaluatedItems")]
    return [f for f in found if isinstance(f, dict)]


MAX_PATTERN_CHARS = 200  # an agent's pattern and a browser's key are both hostile: longer ones count as matching
MAX_KEY_CHARS = 200


def _matches(pattern: Any, key: str) -> bool:
    text = str(pattern)
    if len(text) > MAX_PATTERN_CHARS or len(key) > MAX_KEY_CHARS:
        return True  # never run a long pattern on a long key (catastrophic backtracking): a secret, to be safe
    try:
        return re.search(text, key) is not None
    except re.error:
        return True  # a pattern we cannot read might match: count it


def _local_ref(root: Any, ref: Any) -> Any:
    """What a local ``$ref`` (``#/$defs/x``, a JSON pointer) names in ``root``, or None."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node = root
    for part in unquote(ref[1:]).split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdecimal() and len(part) < 10 and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
