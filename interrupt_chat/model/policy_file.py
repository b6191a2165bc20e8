"""Rules as code: the policy file (``INTERRUPT_CHAT_POLICY_FILE``), read, checked and re-read on change.

Framework-free. The file is a YAML list of rules::

    - tool: send_email                       # a glob on the tool's name
      when: {to: {matches: "*@example.com"}}  # optional: argument conditions (model/conditions.py)
      effect: allow                          # allow | deny | ask
      risk: {level: low, why: Internal mail} # optional: low | medium | high, and the rationale
      mode: shadow                           # optional: shadow (decides nothing, is audited) | enforce

A malformed file (invalid YAML, or a rule that breaks this shape: an unknown key, effect, op or
level, no ``tool``, a condition value of the wrong kind) is a :class:`PolicyFileError` naming the
1-based line of the offending rule or key and the reason. Start-up refuses it; a file that turns
malformed later is logged once by :class:`PolicyFile` and its last good rules stay.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from . import conditions
from .conditions import When

__all__ = ["FILE_EFFECTS", "LEVELS", "SCHEMA", "FileRule", "PolicyFile", "PolicyFileError", "Risk", "load", "parse"]

LEVELS = ("low", "medium", "high")
FILE_EFFECTS = ("allow", "deny", "ask")
MODES = ("shadow", "enforce")

log = logging.getLogger(__name__)

_OP_SCHEMA = {"type": "object", "additionalProperties": False, "minProperties": 1,
              "properties": {op: {} for op in conditions.OPS}}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["tool", "effect"],
        "properties": {
            "tool": {"type": "string", "minLength": 1},
            "effect": {"enum": list(FILE_EFFECTS)},
            "when": {"type": "object", "additionalProperties": _OP_SCHEMA},
            "risk": {"type": "object", "additionalProperties": False, "required": ["level"],
                     "properties": {"level": {"enum": list(LEVELS)}, "why": {"type": "string"}}},
            "mode": {"enum": list(MODES)},
        },
    },
}
_VALIDATOR = Draft202012Validator(SCHEMA)


@dataclass(frozen=True)
class Risk:
    """How risky a call a file rule covers is: ``level`` (low, medium, high) and ``why`` (the card shows it)."""

    level: str
    why: str = ""


@dataclass(frozen=True)
class FileRule:
    """One rule of the policy file.

    Attributes:
        tool: a glob on the tool's name (:func:`fnmatch.fnmatchcase`).
        effect: ``allow``, ``deny`` or ``ask`` (a person must answer, whatever their own rules say).
        when: the argument conditions (all must hold).
        risk: the risk the card shows, if any.
        shadow: ``mode: shadow``: decides nothing; the app audits what it would have done.
        line: the rule's 1-based line in the file.
    """

    tool: str
    effect: str
    when: When = field(default_factory=dict)
    risk: Risk | None = None
    shadow: bool = False
    line: int = 0

    def applies(self, tool: str, args: Any) -> bool:
        """Whether this rule covers a call of ``tool`` with ``args``."""
        return fnmatchcase(tool, self.tool) and conditions.holds(self.when, args)

    def describe(self) -> str:
        """The rule in words: ``policy file, line 4: deny send_email when to matches *@rival.com``."""
        text = f"policy file, line {self.line}: {self.effect} {self.tool}"
        if self.when:
            text += f" when {conditions.describe(self.when)}"
        return text + (" (shadow)" if self.shadow else "")


class PolicyFileError(ValueError):
    """A policy file that cannot be used: ``str(error)`` is ``"<path>:<line>: <reason>"`` (line 0: the whole file)."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        """Name the file, the 1-based line (0: the whole file) and the reason."""
        super().__init__(f"{path}:{line}: {reason}")
        self.path, self.line, self.reason = path, line, reason


def _named(node: yaml.Node, key: Any) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.value == str(key)


def _key_node(mapping: yaml.Node, key: Any) -> yaml.Node | None:
    """The key node named ``key`` in a mapping node, if there is one."""
    if isinstance(mapping, yaml.MappingNode):
        for key_node, _value in mapping.value:
            if _named(key_node, key):
                return key_node
    return None


def _node_at(root: yaml.Node, path: list[Any]) -> yaml.Node:
    """The deepest node along ``path`` (list indexes and mapping keys) that exists."""
    node = root
    for step in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        elif isinstance(node, yaml.MappingNode) and (found := [value for key, value in node.value
                                                              if _named(key, step)]):
            node = found[-1]  # YAML keeps the last of a repeated key (parse refuses repeats anyway)
        else:
            break
    return node


def _duplicates(node: yaml.Node) -> tuple[int, str] | None:
    """The first key that appears twice in one mapping (YAML would keep the last silently): its line and name."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else repr(key)
            if name in seen:
                return key.start_mark.line + 1, name
            seen.add(name)
            if (inner := _duplicates(value)) is not None:
                return inner
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if (inner := _duplicates(item)) is not None:
                return inner
    return None


def _where(path: list[Any]) -> str:
    """``rule 2`` / ``rule 2: when.amount`` for an error's path."""
    if not path or not isinstance(path[0], int):
        return "the file"
    inner = ".".join(map(str, path[1:]))
    return f"rule {path[0] + 1}" + (f": {inner}" if inner else "")


def _reason(error: ValidationError) -> str:
    """A clear reason for a schema error."""
    path, kind, value = list(error.absolute_path), error.validator, error.instance
    if not path:
        return "the file must be a list of rules (- tool: ..., effect: ...)"
    where = _where(path)
    if kind == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        extra = [key for key in value if key not in known] if isinstance(value, dict) else []
        what = "op" if len(path) == 3 and path[1] == "when" else "key"
        return f"{where}: unknown {what} {str(extra[0]) if extra else '?'!r} (known: {', '.join(known)})"
    if kind == "required":
        missing = [key for key in error.validator_value if key not in value]
        return f"{where}: no {missing[0]!r}" if missing else f"{where}: {error.message}"
    if kind == "enum":
        label = " ".join(map(str, path[1:])) or "value"
        return f"{_where(path[:1])}: {label} {value!r} is not one of {', '.join(map(str, error.validator_value))}"
    if kind == "type":
        return f"{where} must be {'a mapping' if error.validator_value == 'object' else f'a {error.validator_value}'}"
    if kind == "minLength":
        return f"{where} is empty"
    if kind == "minProperties":
        return f"{where} has no condition (one of {', '.join(conditions.OPS)})"
    return f"{where}: {error.message}"


def _line(root: yaml.Node, error: ValidationError) -> int:
    """The 1-based line of the offending rule or key (an unknown key: that key's own line)."""
    path = list(error.absolute_path)
    node = _node_at(root, path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        extra = [key for key in error.instance if key not in allowed]
        key_node = _key_node(node, extra[0]) if extra else None
        node = key_node or node
    return node.start_mark.line + 1


def _order(root: yaml.Node, error: ValidationError) -> tuple[int, bool, int, int]:
    """Document order, rule by rule; inside a rule a missing key comes last (a misspelt key explains it)."""
    path = list(error.absolute_path)
    rule = path[0] if path and isinstance(path[0], int) else -1
    return rule, error.validator == "required", _line(root, error), -len(path)


def _compose(text: str, path: str) -> tuple[yaml.Node | None, Any]:
    """The YAML's node tree and its plain data (one parse)."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        reason = f"invalid YAML: {getattr(error, 'problem', None) or error}"
        context, where = getattr(error, "context", None), getattr(error, "context_mark", None)
        if context and where is not None and where is not mark:
            reason += f" ({context} from line {where.line + 1})"
        raise PolicyFileError(path, mark.line + 1 if mark is not None else 0, reason) from None
    finally:
        loader.dispose()


def _rule(item: dict[str, Any], node: yaml.Node, index: int, path: str) -> FileRule:
    """One validated item as a :class:`FileRule` (its ``when`` checked argument by argument)."""
    when: When = {}
    when_node = _node_at(node, ["when"])
    for arg, conds in (item.get("when") or {}).items():
        try:
            when.update(conditions.check({arg: conds}))
        except ValueError as error:
            line = (_key_node(when_node, arg) or when_node).start_mark.line + 1
            raise PolicyFileError(path, line, f"rule {index + 1}: when.{error}") from None
    risk = item.get("risk")
    return FileRule(tool=item["tool"], effect=item["effect"], when=when,
                    risk=Risk(risk["level"], risk.get("why", "")) if risk else None,
                    shadow=item.get("mode") == "shadow", line=node.start_mark.line + 1)


def parse(text: str, path: str = "<policy file>") -> tuple[FileRule, ...]:
    """The rules in a policy file's text, in file order; an empty file (or ``[]``) has none.

    Raises:
        PolicyFileError: invalid YAML or a rule that breaks the shape, with the first offending line.
    """
    root, data = _compose(text, path)
    if root is None or data is None:
        return ()
    if (duplicate := _duplicates(root)) is not None:
        raise PolicyFileError(path, duplicate[0], f"key {duplicate[1]!r} appears twice")
    errors = list(_VALIDATOR.iter_errors(data))
    if errors:
        first = min(errors, key=lambda e: _order(root, e))
        raise PolicyFileError(path, _line(root, first), _reason(first))
    if not isinstance(root, yaml.SequenceNode):  # the schema said a list; this keeps the types honest
        raise PolicyFileError(path, 1, "the file must be a list of rules")
    pairs = zip(data, root.value, strict=True)
    return tuple(_rule(item, node, index, path) for index, (item, node) in enumerate(pairs))


def load(path: str | os.PathLike[str]) -> tuple[FileRule, ...]:
    """The rules in the file at ``path``.

    Raises:
        PolicyFileError: malformed (see :func:`parse`), or missing / unreadable (line 0).
    """
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise PolicyFileError(name, 0, f"cannot read the policy file: {reason}") from None
    return parse(text, name)


class PolicyFile:
    """The policy file, re-read when it changes.

    Args:
        path: the file.
        check_every: seconds between two looks at the file's status (modification time, size, inode).
        clock: a monotonic clock (tests pass their own).

    Raises:
        PolicyFileError: the file is malformed or missing now (start-up refuses it).
    """

    def __init__(self, path: str | os.PathLike[str], *, check_every: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Load the file strictly (see the class)."""
        self.path = os.fspath(path)
        self._check_every, self._clock = check_every, clock
        self._lock = threading.Lock()
        self._key = self._stat()  # before reading: a change during the read is seen on the next look
        self._rules = load(self.path)
        self._checked = clock()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            status = os.stat(self.path)
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size, status.st_ino

    def rules(self) -> tuple[FileRule, ...]:
        """The current rules: re-parsed when the file changed; a malformed new version is logged once and ignored."""
        with self._lock:
            now = self._clock()
            if now - self._checked < self._check_every:
                return self._rules
            self._checked = now
            key = self._stat()
            if key == self._key:
                return self._rules
            if key is not None and key[1] == 0 and self._rules:  # an editor's write caught between truncate and write
                return self._rules  # (not remembered: looked at again; "[]" is how a file says "no rules")
            self._key = key  # this version is judged once: a bad one is logged once, not at every look
            try:
                self._rules = load(self.path)
            except PolicyFileError as error:
                log.warning("policy file %s: keeping the last good rules: %s", self.path, error)
            return self._rules
