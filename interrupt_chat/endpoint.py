"""Which agent a chat talks to when ``chat()`` is given no ``agent_url``.

``INTERRUPT_CHAT_AGENT_URL`` wins; else the URL an app registered with
:func:`set_default_agent_url` (the demo site registers the demo agent it mounts). An app that
does neither gets a configuration error in the chat, never a connection error to a guessed URL.
"""

from __future__ import annotations

import os

__all__ = ["AGENT_URL_ENV", "NO_AGENT_MESSAGE", "default_agent_url", "set_default_agent_url"]

AGENT_URL_ENV = "INTERRUPT_CHAT_AGENT_URL"
NO_AGENT_MESSAGE = (f"No agent is configured for this chat: pass agent_url= to interrupt_chat.chat() "
                    f"or set {AGENT_URL_ENV}.")

_registered: str | None = None


def set_default_agent_url(url: str | None) -> None:
    """Register the agent used when neither ``agent_url`` nor the environment names one.

    Args:
        url: an absolute URL, or a path starting with ``/`` for an agent mounted in this
            Reflex backend (resolved against the app's ``api_url`` when a session starts).
            None removes the registration.
    """
    global _registered
    from .declaring import check_agent_url  # here: it imports the state classes

    check_agent_url(url or None, relative=True)
    _registered = url or None


def default_agent_url() -> str | None:
    """``INTERRUPT_CHAT_AGENT_URL``, else the registered default, else None (not configured)."""
    configured = os.environ.get(AGENT_URL_ENV, "").strip()
    if configured:
        return configured
    if _registered is None or not _registered.startswith("/"):
        return _registered
    import reflex as rx  # only for a backend-relative path

    return rx.config.get_config().api_url.rstrip("/") + _registered
