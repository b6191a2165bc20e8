"""Forms from an interrupt's ``responseSchema`` (S22): fields to draw, answers to coerce and validate.

Framework-free: the default slot draws :func:`fields_of`, and its submit handler passes the raw
form data through :func:`payload_from_form`, which returns the typed payload or the validation
errors to show in place. Masked (secret) values are never logged or echoed in errors (S23).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import jsonschema
from referencing.exceptions import Unresolvable

from .agui.interrupts import is_secret_schema
from .agui.sanitize import MAX_DEPTH, short_text, too_deep

__all__ = ["MAX_ANSWER_CHARS", "FormError", "approval_kind", "check_answer", "edited_approval", "fields_of",
           "is_secret", "payload_from_form", "validate_payload"]

log = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 1_000_000  # an answer's JSON; a forged 10 MB payload gets a card error

FIELD_TYPES = ("boolean", "enum", "string", "number", "integer", "secret", "json")


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
    ``approved`` only, else ``"form"``.
    """
    props = _properties(schema)
    approved = props.get("approved")
    if isinstance(approved, dict) and approved.get("type") == "boolean":
        return "edit" if "editedArgs" in props else "approve"
    return "form"


def is_secret(prop: Any) -> bool:
    """A masked field (S22): ``format: password`` or ``writeOnly: true``."""
    return is_secret_schema(prop)


def _field_type(prop: dict[str, Any]) -> str:
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return "enum"
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind in ("string", None) and is_secret(prop):  # S22: masked, typed or not
        return "secret"
    if kind == "string":
        return "string"
    if kind in ("boolean", "number", "integer"):
        return kind
    return "json"  # objects, arrays, untyped: edited as JSON text


def fields_of(schema: Any) -> list[dict[str, Any]]:
    """The form fields for a schema, in property order. Plain data, ready for a UI to draw."""
    listed = schema.get("required") if isinstance(schema, dict) else None
    required = {r for r in listed if isinstance(r, str)} if isinstance(listed, list) else set()
    fields = []
    for name, prop in _properties(schema).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = _field_type(prop)
        default = prop.get("default")
        fields.append({
            "name": str(name),
            "label": str(prop.get("title") or name),
            "description": str(prop.get("description") or ""),
            "type": kind,
            "options": [_option_text(o) for o in prop.get("enum", [])] if kind == "enum" else [],
            "required": name in required,
            "default": ("" if default is None or kind == "secret" else json.dumps(default) if kind == "json"
                        else _option_text(default) if kind == "enum" else str(default)),
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
    if kind == "json":
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError("must be valid JSON") from None
    return text


def payload_from_form(schema: Any, form: dict[str, Any]) -> dict[str, Any]:
    """Turn raw form data (strings, checkbox ``"on"``) into a payload that fits ``schema``.

    Raises:
        FormError: with a message per field; secret values never appear in messages.
    """
    payload: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name, prop in _properties(schema).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = _field_type(prop)
        try:
            value = _coerce(kind, prop, form.get(name), name in form)
        except ValueError as exc:
            errors[name] = f"{prop.get('title') or name} {exc}"
            continue
        if value is not _ABSENT:
            payload[name] = value
    if errors:
        raise FormError(errors)
    validate_payload(schema, payload)
    return payload


def validate_payload(schema: Any, payload: Any) -> None:
    """Validate with ``jsonschema``; raise :class:`FormError` naming the fields at fault."""
    if not isinstance(schema, dict):
        return
    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError:
        return  # an agent's broken schema cannot be enforced; the agent will judge the answer
    validator = validator_cls(schema)
    try:
        found = sorted(validator.iter_errors(payload), key=lambda e: [str(p) for p in e.path])
    except (Unresolvable, re.error) as exc:  # e.g. a $ref to nowhere: cannot be enforced either
        log.warning("cannot validate against the interrupt's responseSchema: %s", type(exc).__name__)
        return
    errors: dict[str, str] = {}
    props = _properties(schema)
    holds_secret = isinstance(payload, dict) and any(is_secret(props.get(k)) for k in payload)
    for error in found:
        field = str(error.path[0]) if error.path else ""
        if error.validator == "required" and not error.path:
            missing = error.message.split("'")[1] if "'" in error.message else ""
            prop = props.get(missing)
            title = prop.get("title") if isinstance(prop, dict) else None
            field, message = missing, f"{title or missing} is required"
        elif is_secret(props.get(field)):
            message = f"{field} is not valid ({error.validator})"  # never echo a secret
        elif not error.path and holds_secret:  # a whole-form message quotes the whole payload (S23)
            message = f"The answer does not fit the requested schema ({error.validator})."
        else:
            message = error.message
        errors.setdefault(field, message)
    if errors:
        raise FormError(errors)


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
