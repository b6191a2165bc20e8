"""Argument conditions: when a rule answers a call, judged by the call's arguments.

Framework-free. A condition set (:data:`When`) maps an argument's name to its conditions,
``{op: value}``; every condition of every argument must hold. They are security rules, so when in
doubt a condition FAILS (the call then goes to a person):

- ``equals``: JSON equality, strict about types: ``100`` equals ``100.0``, but ``"100"`` does not
  equal ``100`` and ``True`` does not equal ``1``. Lists and objects compare item by item.
- ``matches``: a glob (:func:`fnmatch.fnmatchcase`: ``*``, ``?``, ``[...]``, case-sensitive) on a
  string argument; any other argument fails.
- ``at-most`` / ``at-least``: a numeric comparison; the argument must be an int or float (not a
  bool, not a numeric string). NaN and infinities never hold.
- ``one-of``: JSON-equal (as ``equals``) to one of the list's values.
- An argument the call does not have fails every condition on it, and arguments that are not an
  object fail every non-empty condition set. The empty set holds for any call.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

__all__ = ["EDITOR_OPS", "OPS", "When", "check", "describe", "from_editor", "holds", "matched"]

OPS = ("equals", "matches", "at-most", "at-least", "one-of")
EDITOR_OPS = ("any", "equals", "matches", "at-most", "at-least")  # the rule editor's <select>; any = no condition

When = dict[str, dict[str, Any]]

_SYMBOLS = {"equals": "=", "matches": "matches", "at-most": "≤", "at-least": "≥", "one-of": "is one of"}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_json(value: Any) -> bool:
    """Whether ``value`` is plain JSON data (a YAML date, say, is not: it would never equal an argument)."""
    if value is None or isinstance(value, str | bool):
        return True
    if _is_number(value):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_json(item) for key, item in value.items())
    return False


def _check_op(arg: str, op: Any, value: Any) -> None:
    if op not in OPS:
        raise ValueError(f"{arg}: unknown op {op!r} (one of {', '.join(OPS)})")
    if op in ("at-most", "at-least") and not (_is_number(value) and math.isfinite(value)):
        raise ValueError(f"{arg}: {op} needs a number, not {value!r}")
    if op == "matches" and not isinstance(value, str):
        raise ValueError(f"{arg}: matches needs a string (a glob), not {value!r}")
    if op == "one-of" and not isinstance(value, list):
        raise ValueError(f"{arg}: one-of needs a list, not {value!r}")
    if op in ("equals", "one-of") and not _is_json(value):
        raise ValueError(f"{arg}: {op} needs a JSON value, not {value!r}")


def check(when: Any) -> When:
    """Validate a condition set's shape and return it as plain dicts.

    Several ops on one argument are fine (all must hold).

    Raises:
        ValueError: its reason: ``when`` not a mapping, an argument name that is not a string, an
            argument without conditions, an unknown op, or a value of the wrong kind for its op.
    """
    if not isinstance(when, dict):
        raise ValueError(f"conditions must be a mapping of argument to {{op: value}}, not {when!r}")
    out: When = {}
    for arg, conds in when.items():
        if not isinstance(arg, str):
            raise ValueError(f"argument name {arg!r} is not a string")
        if not isinstance(conds, dict) or not conds:
            raise ValueError(f"{arg}: needs at least one {{op: value}} condition")
        for op, value in conds.items():
            _check_op(arg, op, value)
        out[arg] = dict(conds)
    return out


def _equal(a: Any, b: Any) -> bool:
    """JSON equality, strict about types (a bool is not a number, a string is not a number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and a == b  # NaN == NaN is False, as it should be
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[key], b[key]) for key in a)
    return False


def _holds(op: str, expected: Any, value: Any) -> bool:
    if op == "equals":
        return _equal(value, expected)
    if op == "matches":
        return isinstance(value, str) and isinstance(expected, str) and fnmatchcase(value, expected)
    if op in ("at-most", "at-least"):
        if not (_is_number(value) and _is_number(expected) and math.isfinite(value) and math.isfinite(expected)):
            return False
        return value <= expected if op == "at-most" else value >= expected
    if op == "one-of":
        return isinstance(expected, list) and any(_equal(value, item) for item in expected)
    return False  # an op this code does not know never holds


def holds(when: When, args: Any) -> bool:
    """Whether every condition holds on ``args`` (the call's arguments); ``{}`` holds for anything."""
    if not when:
        return True
    if not isinstance(args, dict):
        return False
    for arg, conds in when.items():
        if arg not in args or not conds:
            return False
        if not all(_holds(op, expected, args[arg]) for op, expected in conds.items()):
            return False
    return True


def matched(when: When, args: Any) -> dict[str, Any]:
    """The argument values the conditions looked at (what the audit records); missing ones are left out."""
    if not when or not isinstance(args, dict):
        return {}
    return {arg: args[arg] for arg in when if arg in args}


def _number(arg: str, text: str) -> int | float:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"{arg}: not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{arg}: not a number")
    return number


def _typed(arg: str, text: str, shown: Any) -> Any:
    """``text`` read as the kind of value the call showed for ``arg``."""
    if isinstance(shown, bool):
        word = text.strip().lower()
        if word not in ("true", "false"):
            raise ValueError(f"{arg}: not true or false")
        return word == "true"
    if _is_number(shown):
        return _number(arg, text)
    if isinstance(shown, str):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        raise ValueError(f"{arg}: not valid JSON") from None
    if not _is_json(value):
        raise ValueError(f"{arg}: not valid JSON")
    return value


def from_editor(rows: Sequence[tuple[str, str, str]], shown: Any) -> When:
    """The condition set the rule editor's rows make, read against the call the card showed.

    Args:
        rows: ``(argument, op, text)``: the ``rule-arg`` name, its ``rule-arg-op`` and the text in
            ``rule-arg-value``. ``any`` adds no condition.
        shown: the shown call's arguments (a dict).

    ``equals`` reads the text as the type of the shown value (a number, ``true``/``false``, the
    text itself for a string, JSON otherwise); ``matches`` keeps the text as a glob; ``at-most`` and
    ``at-least`` always read a number.

    Raises:
        ValueError: an unknown op, an argument the call does not have, text that does not read as its
            type (``"amount: not a number"``), or an op that could never hold on the shown value's type
            (``matches`` on what is not text, ``at-most`` / ``at-least`` on what is not a number).
    """
    out: When = {}
    for arg, op, text in rows:
        if op not in EDITOR_OPS:
            raise ValueError(f"{arg}: unknown op {op!r}")
        if op == "any":
            continue
        if not isinstance(shown, dict) or arg not in shown:
            raise ValueError(f"{arg}: the call has no such argument")
        if op == "matches":
            if not isinstance(shown[arg], str):  # a rule that could never hold is refused, not stored
                raise ValueError(f"{arg}: only a text argument matches a pattern")
            value: Any = text
        elif op in ("at-most", "at-least"):
            if isinstance(shown[arg], bool) or not isinstance(shown[arg], int | float):
                raise ValueError(f"{arg}: only a number is at most or at least a value")
            value = _number(arg, text)
        else:
            value = _typed(arg, text, shown[arg])
        out.setdefault(arg, {})[op] = value
    return out


def describe(when: When) -> str:
    """The conditions in words: ``amount ≤ 10000, to matches *@example.com`` ("" for none)."""
    parts = []
    for arg, conds in when.items():
        for op, value in conds.items():
            text = value if op == "matches" and isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(f"{arg} {_SYMBOLS.get(op, op)} {text}")
    return ", ".join(parts)
