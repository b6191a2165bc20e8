"""``identity_cookie``: the page asks the backend for its identity cookie over HTTP once it has loaded.

The backend issues the browser's identity on the socket's handshake (:mod:`interrupt_chat.tab.identity`),
in the WebSocket accept. Some servers drop an accept's headers (Granian, which ``reflex run --env prod``
uses), so the page also asks ``GET <event url>/?interrupt_chat_identity=<its tab token>``: the answer
sets the cookie of the person its socket was given (HttpOnly: page scripts never see it). Until the
socket's connect has left its ticket, the backend answers 404 and the page asks again, a few times.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

__all__ = ["IdentityCookie", "identity_cookie"]

_CODE = r"""
useEffect(() => {
  if (typeof window === "undefined" || window.__interruptChatIdentity) return;
  window.__interruptChatIdentity = true;
  const url = new URL(getBackendURL(env.EVENT));
  url.protocol = url.protocol === "wss:" ? "https:" : url.protocol === "ws:" ? "http:" : url.protocol;
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  let tries = 0;
  const ask = () => {
    url.search = "?%(query)s=" + encodeURIComponent(getToken() || "");
    fetch(url.toString(), { credentials: "include", cache: "no-store" })
      .then((response) => { if (response.status === 404 && ++tries < 8) setTimeout(ask, 250 * tries); })
      .catch(() => { if (++tries < 8) setTimeout(ask, 500 * tries); });
  };
  setTimeout(ask, 200);
}, []);
"""


class IdentityCookie(rx.Fragment):
    """An empty fragment whose effect fetches the identity cookie once per page load."""

    def add_imports(self) -> dict[str, Any]:
        """React's ``useEffect``, Reflex's backend URL and tab token, and the app's endpoints."""
        return {"react": [rx.ImportVar(tag="useEffect")],
                "$/utils/state": [rx.ImportVar(tag="getBackendURL"), rx.ImportVar(tag="getToken")],
                "$/env.json": [rx.ImportVar(tag="env", is_default=True)]}

    def add_hooks(self) -> list[str | rx.Var]:
        """The request, in an effect that runs once per page load."""
        from ..tab.identity import ISSUE_QUERY

        return [_CODE % {"query": ISSUE_QUERY}]


def identity_cookie() -> rx.Component:
    """The component that makes sure this browser holds its identity cookie (drawn by every chat)."""
    return IdentityCookie.create()
