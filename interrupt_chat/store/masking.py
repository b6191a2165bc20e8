"""Masked fields (S23) as the audit trail stores them: never their value."""

from __future__ import annotations

from typing import Any

from ..agui.interrupts import is_secret_schema

__all__ = ["MASKED", "mask_secrets"]

#: What the audit trail writes instead of a masked field's value (S23).
MASKED = "[masked]"


def mask_secrets(payload: Any, schema: Any) -> Any:
    """``payload`` with the value of every masked field (S23) replaced by :data:`MASKED`.

    A field is masked when its schema is a secret (``format: password`` or ``writeOnly: true``,
    :func:`~interrupt_chat.agui.interrupts.is_secret_schema`); object properties (and
    ``additionalProperties``) and array ``items`` are followed to any depth.
    """
    if is_secret_schema(schema):
        return MASKED
    if not isinstance(schema, dict):
        return payload
    if isinstance(payload, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = schema.get("additionalProperties")
        return {key: mask_secrets(value, props.get(key, extra)) for key, value in payload.items()}
    if isinstance(payload, list) and isinstance(schema.get("items"), dict):
        return [mask_secrets(value, schema["items"]) for value in payload]
    return payload
