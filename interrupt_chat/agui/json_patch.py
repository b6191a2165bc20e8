"""JSON Patch (RFC 6902) on agent state and activity content: all or nothing, bounded in depth and size."""

from __future__ import annotations

import json
import logging
from typing import Any

import jsonpatch

from .sanitize import MAX_DEPTH, short_text, too_deep

__all__ = ["MAX_DOCUMENT_CHARS", "UNCHANGED", "patched"]

log = logging.getLogger(__name__)

UNCHANGED = object()
MAX_DOCUMENT_CHARS = 16_000_000  # agent state or activity content grown by JSON Patch "copy" operations


def patched(document: Any, ops: Any, kind: str) -> Any:
    """``document`` with a JSON Patch applied, all or nothing; ``UNCHANGED`` when it does not apply.

    ``jsonpatch`` works on a copy (one deep copy), so a failing operation leaves ``document`` as it was.
    The result may not nest deeper than ``MAX_DEPTH`` (a hostile series of patches could grow it).
    """
    plain = _plain(ops)
    try:
        result = jsonpatch.apply_patch(document, plain)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, ValueError,
            RecursionError) as exc:
        log.warning("%s did not apply (%s); keeping the previous value", kind, short_text(exc))
        return UNCHANGED
    if too_deep(result):
        log.warning("%s would nest deeper than %d levels; keeping the previous value", kind, MAX_DEPTH)
        return UNCHANGED
    # "copy" grows a document without the bytes arriving: a few ops could double it again and again
    if any(isinstance(op, dict) and op.get("op") == "copy" for op in plain) \
            and len(json.dumps(result, default=str)) > MAX_DOCUMENT_CHARS:
        log.warning("%s would grow past %d characters; keeping the previous value", kind, MAX_DOCUMENT_CHARS)
        return UNCHANGED
    return result


def _plain(ops: Any) -> list[dict[str, Any]]:
    """RFC 6902 operations as plain dicts (the event may carry pydantic models)."""
    return [op.model_dump(by_alias=True, exclude_none=False) if hasattr(op, "model_dump") else op for op in ops]
