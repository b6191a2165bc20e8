"""Whether a tab is still there: a run's pushes skip a tab whose socket is gone (issue 39 §3).

A tab closed mid-answer leaves its run going (it is saved, other tabs follow it live); what the
driver would push to it has nobody to reach, and Reflex logs "Attempting to send delta to
disconnected client" for each push. The tab's client token is looked up in the app's socket
table (``event_namespace``): with the in-memory token manager a token missing there has no
socket on this worker and none elsewhere. With Redis a socket may sit on another worker (Reflex
relays the push, and logs nothing), so a tab is never taken for gone there. Outside a running
app (a script, the unit tests: no namespace to send through) no tab counts as gone.
"""

from __future__ import annotations

from typing import Any

from reflex.utils.token_manager import RedisTokenManager
from reflex_base.event.context import EventContext

__all__ = ["gone"]

_namespace: list[Any] = []  # the running app's event namespace, found once


def _event_namespace() -> Any:
    if not _namespace:
        from reflex.utils import prerequisites

        namespace = prerequisites.get_and_validate_app().app.event_namespace
        if namespace is None:  # not set up yet: asked again next time
            return None
        _namespace.append(namespace)
    return _namespace[0]


def gone(token: str) -> bool:
    """Whether the tab of ``token`` has no socket left (closed, or its connection dropped and not back yet)."""
    try:  # (asked at every push of a run: the imports are the module's, not made per call)
        context = EventContext.get()
    except LookupError:
        return False
    if context.emit_delta_impl is None or not token:  # pushes reach no socket here anyway
        return False
    try:
        manager = getattr(_event_namespace(), "_token_manager", None)
    except Exception:  # noqa: BLE001 - no app to ask: a push is never stopped by this check
        return False
    if manager is None or isinstance(manager, RedisTokenManager):
        return False
    return token not in manager.token_to_socket
