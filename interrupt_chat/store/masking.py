"""Masked fields (S23) as the audit trail stores them: never their value."""

from __future__ import annotations

from typing import Any

from ..agui.interrupts import secret_parts

__all__ = ["MASKED", "mask_secrets"]

#: What the audit trail writes instead of a masked field's value (S23).
MASKED = "[masked]"


def mask_secrets(payload: Any, schema: Any) -> Any:
    """``payload`` with the value of every masked field (S23) replaced by :data:`MASKED`.

    A field is masked when its schema is a secret (``format: password`` or ``writeOnly: true``) at
    any depth: the whole answer, an object's property (also through ``additionalProperties``,
    ``patternProperties``, combinators and local ``$ref`` s), an array's items. The test is the one
    the tracker and the forms use (:func:`~interrupt_chat.agui.interrupts.secret_parts`).
    """
    return secret_parts(payload, schema, _masked)[0]


def _masked(_value: Any) -> str:
    return MASKED
