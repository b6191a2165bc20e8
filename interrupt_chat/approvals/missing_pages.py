"""Pages a chat points people at that the app never added: said once in the log (issue 39 §2).

Decision links (webhooks, ``notify``) lead to ``/decide/<token>``: an app that sends them without
adding ``ic.decide_page`` sends links that all 404. A chat whose rules are on ("Always allow": the
default, ``remember``) makes rules that people can see and revoke only where the app shows
``policy_list``; without a ``/policies`` page (or another page built with ``policy_list`` in this
process) they cannot. The app's routes are read once, lazily, at a chat's first event; each warning
is logged once per process.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Collection
from typing import Any

__all__ = ["check", "policy_list_built"]

log = logging.getLogger(__name__)

_checked: set[str] = set()  # the chats (state names) already checked
_warned: set[str] = set()
_policy_lists = [False]  # a policy_list was built in this process (a page of any route shows the rules)

DECIDE_PAGE = ("decision links lead to /decide/<token>, but the app has no such page, so every link answers 404: "
               "add it with app.add_page(ic.decide_page, route=\"/decide/[token]\")")
POLICIES_PAGE = ("the chat {chat!r} lets people make rules (\"Always allow\"), but the app has no /policies page to "
                 "list and revoke them: add one showing chat.policy_list() (app.add_page(..., route=\"/policies\")), "
                 "or turn rules off with ic.Chat(..., remember=())")


def policy_list_built() -> None:
    """``policy_list`` was drawn: the rules have a page, whatever its route."""
    _policy_lists[0] = True


def _routes() -> Collection[str]:
    """The app's routes as Reflex keeps them (``"index"``, ``"decide/[token]"``), without their leading slash.

    Raises:
        LookupError: the app module is not imported in this process (no app runs here: nothing is imported).
    """
    import reflex as rx

    config = rx.config.get_config()
    module = config.app_module or sys.modules.get(config.module)
    app = getattr(module, "app", None)
    if app is None:
        raise LookupError("no Reflex app runs in this process")
    return list(getattr(app, "_unevaluated_pages", {})) + list(getattr(app, "_pages", {}))


def _warn(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def _sends_links(chat_cls: Any) -> bool:
    from .notifier import WEBHOOK_URL_ENV

    return bool(os.environ.get(WEBHOOK_URL_ENV) or getattr(chat_cls, "notify_fn", None))


def _rules_on(chat_cls: Any) -> bool:
    remember = getattr(chat_cls, "remember", None)
    return remember is None or callable(remember) or bool(remember)


def check(chat_cls: Any) -> None:
    """At a chat's first event: warn about the pages it points people at that the app lacks (once each)."""
    name = getattr(chat_cls, "__name__", "")
    if name in _checked:
        return
    _checked.add(name)
    links, rules = _sends_links(chat_cls), _rules_on(chat_cls) and not _policy_lists[0]
    if not (links or rules):
        return
    try:
        routes = {route.strip("/") for route in _routes()}
    except Exception:  # no app to read (a script or a test driving a chat): nothing to say
        log.debug("missing_pages: the app's routes cannot be read", exc_info=True)
        return
    if links and not any(route.startswith("decide/") for route in routes):
        _warn(DECIDE_PAGE)
    if rules and "policies" not in routes:
        shown = getattr(chat_cls, "identity", name).removeprefix("name:")
        _warn(POLICIES_PAGE.format(chat=shown))
