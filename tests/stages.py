"""The two stages ``scripts/test.sh`` runs the browser tests in, and which one a test belongs to.

``RX_HARNESS=prod`` is the production build's stage; without it the app runs on the dev server. A test
marked ``@pytest.mark.stage("dev")`` or ``stage("prod")`` runs in that stage only; an unmarked test runs in
both (``tests/e2e/conftest.py`` says which test runs where, and why).
"""

from __future__ import annotations

import os

import pytest

__all__ = ["STAGE", "STAGES", "elsewhere", "skip_reason"]

STAGE = "prod" if os.environ.get("RX_HARNESS") == "prod" else "dev"
STAGES = {"dev": "the dev server (Vite, React's development build) on SQLite",
          "prod": "the production build on PostgreSQL"}


def elsewhere(item: pytest.Item) -> str | None:
    """The stage ``item`` runs in when that is not this one, else None."""
    marker = item.get_closest_marker("stage")
    if marker is None:
        return None
    only = marker.args[0] if marker.args else None
    if only not in STAGES:
        raise pytest.UsageError(f"{item.nodeid}: stage() takes one of {sorted(STAGES)}, not {only!r}")
    return only if only != STAGE else None


def skip_reason(item: pytest.Item) -> str | None:
    """Why ``item`` is skipped in this stage (the stage it runs in, and the marker's ``why``), else None."""
    other = elsewhere(item)
    if other is None:
        return None
    marker = item.get_closest_marker("stage")
    why = f": {marker.kwargs['why']}" if marker is not None and "why" in marker.kwargs else ""
    return f"runs against {STAGES[other]} only{why}"
