"""Where a dojo page's chat sends its runs: a dojo feature server, else the demo agent."""

from __future__ import annotations

import os

__all__ = ["DOJO_URL_ENV", "dojo_url"]

#: ``INTERRUPT_CHAT_DOJO_URL=http://127.0.0.1:8000``: each dojo page talks to ``<base>/<feature>``, the path
#: names of the AG-UI dojo's feature servers (``agentic_chat``, ``human_in_the_loop``, …).
DOJO_URL_ENV = "INTERRUPT_CHAT_DOJO_URL"


def dojo_url(feature: str) -> str | None:
    """``<base>/<feature>`` when ``INTERRUPT_CHAT_DOJO_URL`` is set, else None (the demo agent)."""
    base = os.environ.get(DOJO_URL_ENV, "").strip()
    return f"{base.rstrip('/')}/{feature}" if base else None
