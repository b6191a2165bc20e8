"""Forms from an interrupt's ``responseSchema`` (S22): fields to draw, answers to coerce and validate.

Framework-free: the default slot draws :func:`fields_of`, and its submit handler passes the raw
form data through :func:`payload_from_form`, which returns the typed payload or the validation
errors to show in place. Masked (secret) values are never logged or echoed in errors (S23), at any
depth: a field that holds a secret anywhere inside (a nested object, an array of secrets) is drawn
as a masked input that takes JSON, and a schema that is itself a secret is one masked field for the
whole answer. The test is :func:`interrupt_chat.agui.interrupts.secret_parts`, as the store's.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any

import jsonschema
from referencing.exceptions import Unresolvable

from ..agui.interrupts import SecretMap, holds_secret, is_secret_schema, secret_parts
from ..agui.sanitize import MAX_DEPTH, short_text, too_deep

__all__ = ["MAX_ANSWER_CHARS", "WHOLE_ANSWER", "FormError", "approval_kind", "check_answer", "edited_approval",
           "fields_of", "is_secret", "payload_from_form", "validate_payload", "whole_answer"]

log = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 1_000_000  # an answer's JSON; a forged 10 MB payload gets a card error

FIELD_TYPES = ("boolean", "enum", "string", "number", "integer", "secret", "json")
WHOLE_ANSWER = "__answer"  # the one field of a schema that is itself a secret (no properties)
_SECRET_JSON = "secret-json"  # drawn as "secret" (a password input), read as JSON: a secret inside


class FormError(ValueError):
    """The answer does not fit the schema. ``errors`` maps a field name ("" = whole form) to a message."""

    def __init__(self, errors: dict[str, str]) -> None:
        """Keep ``errors``; the message joins them as ``field: message``."""
        self.errors = {short_text(k, 80): short_text(v, 200) for k, v in errors.items()}  # may quote the answer
        super().__init__(short_text("; ".join(f"{k}: {v}" if k else v for k, v in self.errors.items())))


def _properties(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def approval_kind(schema: Any) -> str:
    """How the default slot answers a schema: ``"edit"``, ``"approve"`` or ``"form"``.

    ``"edit"`` when the schema has a boolean ``approved`` and ``editedArgs``, ``"approve"`` with
    ``approved`` only, else ``"form"``; always ``"form"`` when the schema holds a secret (S23): the
    edit textarea and the Approve button have no masked input.
    """
    if holds_secret(schema):
        return "form"
    props = _properties(schema)
    approved = props.get("approved")
    if isinstance(approved, dict) and approved.get("type") == "boolean":
        return "edit" if "editedArgs" in props else "approve"
    return "form"


def is_secret(prop: Any, root: Any = None) -> bool:
    """A masked field (S22): ``format: password`` or ``writeOnly: true`` (also through a local ``$ref``)."""
    return is_secret_schema(prop, root)


def whole_answer(schema: Any) -> bool:
    """A schema without properties that holds a secret: the answer is one masked field (S23)."""
    return isinstance(schema, dict) and not _properties(schema) and holds_secret(schema)


def _field_type(prop: dict[str, Any], secrets: SecretMap) -> str:
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return "enum"
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "boolean":
        return kind
    if kind in ("string", None) and is_secret(prop, secrets.root):  # S22: masked, typed or not
        return "secret"
    if secrets.holds(prop):  # S23: a secret inside (or a secret number): masked, read as JSON
        return _SECRET_JSON
    if kind == "string":
        return "string"
    if kind in ("boolean", "number", "integer"):
        return kind
    return "json"  # objects, arrays, untyped: edited as JSON text


def _fields(schema: Any) -> list[tuple[str, dict[str, Any]]]:
    """``(name, property)`` per field; a :func:`whole_answer` schema is one field, :data:`WHOLE_ANSWER`."""
    if whole_answer(schema):
        return [(WHOLE_ANSWER, schema)]
    return [(str(name), prop if isinstance(prop, dict) else {}) for name, prop in _properties(schema).items()]


def fields_of(schema: Any) -> list[dict[str, Any]]:
    """The form fields for a schema, in property order. Plain data, ready for a UI to draw.

    A field holding a secret anywhere inside is drawn masked (type ``secret``) and takes JSON.
    """
    listed = schema.get("required") if isinstance(schema, dict) else None
    required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()
    fields = []
    secrets = SecretMap(schema)
    for name, prop in _fields(schema):
        kind = _field_type(prop, secrets)
        default = prop.get("default")
        described = str(prop.get("description") or "")
        fields.append({
            "name": name,
            "label": str(prop.get("title") or ("Answer" if name == WHOLE_ANSWER else name)),
            "description": described or ("JSON, hidden as you type." if kind == _SECRET_JSON else ""),
            "type": "secret" if kind == _SECRET_JSON else kind,
            "options": [_option_text(o) for o in prop.get("enum", [])] if kind == "enum" else [],
            "required": name in required or name == WHOLE_ANSWER,
            "default": ("" if default is None or kind in ("secret", _SECRET_JSON) else json.dumps(default)
                        if kind == "json" else _option_text(default) if kind == "enum" else str(default)),
            "checked": default is True,
        })
    return fields


def _option_text(option: Any) -> str:
    """An enum option as the form shows and submits it: strings as they are, other values as JSON."""
    return option if isinstance(option, str) else json.dumps(option)


_ABSENT = object()  # an empty optional field: left out of the payload (a chosen ``null`` is kept)


def _coerce(kind: str, prop: dict[str, Any], raw: Any, present: bool) -> Any:
    if kind == "boolean":
        return raw not in (None, "", "off", "false", False)
    if not present or raw in (None, ""):
        return _ABSENT
    text = str(raw)
    if kind == "integer":
        try:
            return int(text.strip())
        except ValueError:
            raise ValueError("must be a whole number") from None
    if kind == "number":
        try:
            return float(text.strip())
        except ValueError:
            raise ValueError("must be a number") from None
    if kind == "enum":
        for option in prop["enum"]:  # keep the option's own JSON type
            if _option_text(option) == text:
                return option
        raise ValueError("is not one of the choices")
    if kind in ("json", _SECRET_JSON):
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError("must be valid JSON") from None
    return text


def payload_from_form(schema: Any, form: dict[str, Any]) -> Any:
    """Turn raw form data (strings, checkbox ``"on"``) into a payload that fits ``schema``.

    An object, or for a :func:`whole_answer` schema the :data:`WHOLE_ANSWER` field's value itself.

    Raises:
        FormError: with a message per field; secret values never appear in messages.
    """
    payload: dict[str, Any] = {}
    errors: dict[str, str] = {}
    secrets = SecretMap(schema)
    for name, prop in _fields(schema):
        kind = _field_type(prop, secrets)
        try:
            value = _coerce(kind, prop, form.get(name), name in form)
        except ValueError as exc:
            errors[name] = f"{prop.get('title') or name} {exc}"
            continue
        if value is not _ABSENT:
            payload[name] = value
    if whole_answer(schema):
        if errors or WHOLE_ANSWER not in payload:
            raise FormError({"": f"The answer {'must be valid JSON' if errors else 'is required'}."})
        validate_payload(schema, payload[WHOLE_ANSWER])
        return payload[WHOLE_ANSWER]
    if errors:
        raise FormError(errors)
    validate_payload(schema, payload)
    return payload


def validate_payload(schema: Any, payload: Any) -> None:
    """Validate with ``jsonschema``; raise :class:`FormError` naming the fields at fault."""
    if not isinstance(schema, dict):
        return
    validator = _validator(schema)
    if validator is None:
        return  # an agent's broken schema cannot be enforced; the agent will judge the answer
    try:
        found = sorted(validator.iter_errors(payload), key=lambda e: [str(p) for p in e.path])
    except (Unresolvable, re.error) as exc:  # e.g. a $ref to nowhere: cannot be enforced either
        log.warning("cannot validate against the interrupt's responseSchema: %s", type(exc).__name__)
        return
    errors: dict[str, str] = {}
    props = _properties(schema)
    secrets = _Secrets(payload, schema)
    for error in found:
        path = list(error.path)
        field = str(path[0]) if path else ""
        if error.validator == "required" and not path:
            missing = error.message.split("'")[1] if "'" in error.message else ""
            prop = props.get(missing)
            title = prop.get("title") if isinstance(prop, dict) else None
            field, message = missing, f"{title or missing} is required"
        elif secrets.echoed_by(path, error.message):  # name the field and the rule, never the value (S23)
            where = ".".join(map(str, path))
            message = (f"{where} is not valid ({error.validator})" if path
                       else f"The answer does not fit the requested schema ({error.validator}).")
        else:
            message = error.message
        errors.setdefault(field, message)
    if errors:
        raise FormError(errors)


MAX_CACHED_SCHEMA_CHARS = 65_536  # a larger schema is checked at each use, never kept


def _validator(schema: dict[str, Any]) -> Any | None:
    """The schema's validator (None: the schema itself is broken), checked against its metaschema once.

    Checking a schema takes about 2 ms here, 100 times its use: a card is built with up to three
    answer checks (:func:`interrupt_chat.model.policies.approval_payload`), again for each inbox row and
    each rule, so the check is kept per distinct schema (its JSON text), for the last
    :data:`MAX_CACHED_SCHEMAS`. A schema that is not JSON text, or too large, is checked at each use.
    """
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return _checked(schema)
    if len(text) > MAX_CACHED_SCHEMA_CHARS:
        return _checked(schema)
    return _checked_text(text)


MAX_CACHED_SCHEMAS = 256


@functools.lru_cache(maxsize=MAX_CACHED_SCHEMAS)
def _checked_text(text: str) -> Any | None:
    """:func:`_checked` of a schema's JSON text: the validator holds its own copy, which no caller can change."""
    return _checked(json.loads(text))


def _checked(schema: dict[str, Any]) -> Any | None:
    validator_cls = jsonschema.validators.validator_for(schema)
    try:
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    return validator_cls(schema)


class _Secrets:
    """The secret parts of one payload (:func:`secret_parts`): what an error message must not quote."""

    _HIDDEN = object()

    def __init__(self, payload: Any, schema: Any) -> None:
        self._texts: list[str] = []
        self._masked, self.any = secret_parts(payload, schema, self._hide)

    def _hide(self, part: Any) -> object:
        stack = [part]
        while stack:  # every scalar inside, as text a message could quote
            value = stack.pop()
            if isinstance(value, dict | list):
                stack.extend(value.values() if isinstance(value, dict) else value)
            elif value is not None and str(value):
                self._texts.append(str(value))
        return self._HIDDEN

    def echoed_by(self, path: list[Any], message: str) -> bool:
        """Whether an error at ``path`` may quote a secret: one lies there or below, or its text is quoted."""
        if not self.any:
            return False
        node = self._masked
        for step in path:
            if node is self._HIDDEN:
                return True
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                return True
        stack = [node]
        while stack:
            value = stack.pop()
            if value is self._HIDDEN:
                return True
            if isinstance(value, dict | list):
                stack.extend(value.values() if isinstance(value, dict) else value)
        return any(text in message for text in self._texts)


def check_answer(payload: Any) -> None:
    """Check any answer before it is recorded: JSON data, bounded in size and depth.

    Whether it fits the interrupt's ``responseSchema`` is the agent's to judge (a rejected answer
    fails the resume run and the set is offered again, S15); the default slot's forms validate
    before they answer (S22).

    Raises:
        FormError: with a short message for the card.
    """
    if too_deep(payload):
        raise FormError({"": f"The answer is nested deeper than {MAX_DEPTH} levels."})
    try:
        size = len(json.dumps(payload, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        raise FormError({"": "The answer is not JSON data."}) from None
    if size > MAX_ANSWER_CHARS:
        raise FormError({"": f"The answer is too large ({size:,} characters; at most {MAX_ANSWER_CHARS:,})."})


def edited_approval(schema: Any, edited_args: Any) -> dict[str, Any]:
    """``{"approved": true, "editedArgs": …}`` from the "edit and approve" textarea's JSON (S22).

    Raises:
        FormError: the text is not JSON, or the payload does not satisfy ``schema``.
    """
    try:
        args = json.loads(str(edited_args))
    except (ValueError, RecursionError) as exc:  # also an integer past Python's digit limit, or deep nesting
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "too large or too deeply nested"
        raise FormError({"": f"The edited arguments are not valid JSON: {reason}."}) from None
    payload = {"approved": True, "editedArgs": args}
    check_answer(payload)
    validate_payload(schema, payload)
    return payload
