"""Is the page in the browser built for the backend it talks to?

A frontend compiled from one version of an app and a backend started from another (a deploy
of one half, a stale tab after an upgrade) disagree on the chat's state names: the chat's
events reach no handler, and the page would sit at "Ready" doing nothing. Each chat asks this
state, whose name never changes, whether its own state exists here, and tells the person to
reload when it does not.
"""

from __future__ import annotations

import logging

import reflex as rx

__all__ = ["STALE_MESSAGE", "PageCheck"]

log = logging.getLogger("interrupt_chat")

STALE_MESSAGE = "This page is out of date. Reload it to keep chatting."
MAX_NAMES = 20  # a page holds a few chats; more names come from no page of ours


class PageCheck(rx.State):
    """``stale``: a chat on this page has no state in this backend."""

    __module__ = "interrupt_chat.page_check"  # its name never changes (a page of any version finds it)

    stale: bool = False

    @rx.event
    def check(self, names: list[str]):
        """On mount: each of ``names`` (a chat's full state name) must exist in this backend."""
        if not isinstance(names, list):  # the browser can send anything: only a list of names is a question
            names = []
        missing = [str(name)[:200] for name in names[:MAX_NAMES] if not _exists(str(name)[:200])]
        if missing:  # the names come from the browser: repr, so a newline in one cannot forge a log line
            log.warning("a page built for another version of this app is open: no state %s here; the page is told"
                        " to reload", ", ".join(repr(name) for name in missing)[:300])
        self.stale = bool(missing)


def _exists(name: str) -> bool:
    try:
        rx.State.get_class_substate(name)
    except ValueError:
        return False
    return True
