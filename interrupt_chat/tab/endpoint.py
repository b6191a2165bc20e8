"""Which agent a chat talks to when ``chat()`` is given no ``agent_url``.

``INTERRUPT_CHAT_AGENT_URL`` wins; else the URL an app registered with
:func:`set_default_agent_url` (the demo site registers the demo agent it mounts). An app that
does neither gets a configuration error in the chat, never a connection error to a guessed URL.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from ..agui.sanitize import redact

__all__ = ["AGENT_URL_ENV", "NO_AGENT_MESSAGE", "check_agent_url", "default_agent_url", "set_default_agent_url"]

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


def check_agent_url(url: Any, *, relative: bool = False) -> None:
    """An agent URL is absolute: ``http://`` or ``https://`` and a host (``relative``: or a ``/path`` of this backend).

    Raises:
        ValueError: ``127.0.0.1:8424`` (no scheme), ``ftp://…``, ``http:///x`` (no host), a non-string.
    """
    if url is None:
        return
    if not isinstance(url, str):
        raise TypeError(f"agent_url must be a string URL such as 'http://127.0.0.1:8000/', not {shown(url)}")
    if relative and url.startswith("/"):
        return
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        parts, host = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        named = redact(url, url)
        hint = f" (did you mean 'http://{named}'?)" if "://" not in url else ""
        raise ValueError(f"agent_url must be an absolute http:// or https:// URL with a host, not {named!r}{hint}")


def shown(value: Any) -> str:
    """A value named in a message: a class or function by its name, anything else by its type."""
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(name, str) and (isinstance(value, type) or callable(value)):
        return name
    return f"a {type(value).__name__}"
