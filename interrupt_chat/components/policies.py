"""``policy_list(state)``: the owner's rules ("always allow", …), each with its revoke (P4), and the pause.

The person's own rules are revoked here; the policy file's rules (``data-source="file"``) are listed
with their line and changed only in the file (§6.4). ``pause-all`` stops every agent of the person.
"""

from __future__ import annotations

from typing import Any, cast

import reflex as rx

from ..approvals import missing_pages
from ..assembly.state import ChatState
from .chat import STYLESHEET

__all__ = ["policy_list"]


def _item(state: type[ChatState], rule: Any) -> rx.Component:
    """One rule: what it says (its conditions and expiry in words), where it comes from, and its revoke."""
    from_file = rule["source"] == "file"
    return rx.hstack(
        rx.badge(rule["rule"], size="1", variant="soft", high_contrast=True,
                 color_scheme=rx.match(rule["effect"], ("deny", "red"), ("ask", "amber"), "green")),
        rx.code(rule["tool"], high_contrast=True),
        rx.cond(rule["scope"] == "thread", rx.text("in thread ", rx.code(rule["thread_id"]), size="1",
                                                   color_scheme="gray", high_contrast=True)),
        rx.cond(rule["mode"] == "shadow",
                rx.badge("shadow: decides nothing, only notes what it would do", size="1", variant="outline",
                         color_scheme="violet", high_contrast=True, class_name="ic-policy-shadow")),
        rx.cond(from_file,
                rx.text("from the policy file", rx.cond(rule["line"] != "", ", line " + rule["line"].to(str), ""),
                        size="1", color_scheme="gray", high_contrast=True, class_name="ic-policy-source"),
                rx.text("since ", rule["created"], " UTC", size="1", color_scheme="gray", high_contrast=True)),
        rx.spacer(),
        rx.cond(rule["revocable"] == "true",  # a file rule is changed in the file, never from the page
                rx.button("Revoke", size="1", variant="soft", color_scheme="red", high_contrast=True,
                          on_click=state.revoke_policy(rule["id"]),
                          custom_attrs={"data-testid": "policy-revoke",
                                        "aria-label": "Revoke: " + rule["rule"].to(str) + " " + rule["tool"].to(str)})),
        align="center", width="100%", wrap="wrap", class_name="ic-policy-item",
        custom_attrs={"data-testid": "policy-item", "data-tool": rule["tool"], "data-scope": rule["scope"],
                      "data-effect": rule["effect"], "data-thread-id": rule["thread_id"], "data-policy-id": rule["id"],
                      # a row without them (an older server's) still reads as a person's rule without conditions
                      "data-conditions": rx.cond(rule["conditions"], rule["conditions"], "{}"),
                      "data-expires": rx.cond(rule["expires"], rule["expires"], ""),
                      "data-source": rx.cond(rule["source"], rule["source"], "person"),
                      "data-mode": rx.cond(rule["mode"], rule["mode"], "")},
    )


def _pause(state: type[ChatState]) -> rx.Component:
    """``pause-all``: stop every agent of the person (rules answer nothing meanwhile), or let them go on."""
    return rx.hstack(
        rx.button(rx.cond(state.paused, rx.icon("play", size=14), rx.icon("pause", size=14)),
                  rx.cond(state.paused, "Resume agents", "Pause all agents"),
                  size="2", variant=rx.cond(state.paused, "solid", "outline"),
                  color_scheme=rx.cond(state.paused, "amber", "gray"), high_contrast=True,
                  on_click=state.toggle_pause,
                  custom_attrs={"data-testid": "pause-all", "aria-pressed": rx.cond(state.paused, "true", "false")}),
        rx.text(rx.cond(state.paused, "Paused: your agents are stopped and no rule answers anything.",
                        "Your agents run, and your rules answer what they cover."),
                size="1", color_scheme=rx.cond(state.paused, "amber", "gray"), high_contrast=True),
        align="center", spacing="3", width="100%", wrap="wrap", class_name="ic-pause",
    )


def policy_list(state: type[ChatState] | Any) -> rx.Component:
    """The owner's rules in force, newest first, each with ``policy-revoke``; ``policy-empty`` when there is none.

    ``pause-all`` on top. Each ``policy-item`` carries ``data-conditions`` (JSON), ``data-expires`` (ISO
    8601 or empty), ``data-source`` (``person`` | ``file``) and ``data-mode`` (``shadow`` or empty); a
    revoke only where the row is ``revocable``.

    A revoke takes effect for the next set that surfaces; the list follows changes made on the
    owner's other tabs. ``state``: the chat (an ``ic.Chat`` or its state class).
    """
    chat = cast("type[ChatState]", state if isinstance(state, type) else state.state)
    missing_pages.policy_list_built()
    return rx.vstack(
        rx.el.link(rel="stylesheet", href=STYLESHEET),
        _pause(chat),
        # "no rules" only once the list answered: before, an empty list says nothing about the owner's rules
        rx.cond(chat.policies_loaded,
                rx.cond(chat.own_policy_count == 0,
                        rx.callout("No rules of your own yet. “Always allow” or “Allow similar” on a tool approval "
                                   "makes one.", icon="info",
                                   size="1", custom_attrs={"data-testid": "policy-empty"})),
                rx.hstack(rx.spinner(size="1"), rx.text("Loading your rules…", size="2"), align="center",
                          custom_attrs={"data-testid": "policy-loading", "role": "status", "aria-busy": "true"})),
        rx.foreach(chat.policies, lambda rule: _item(chat, rule)),
        spacing="2", width="100%", class_name="ic-policies",
        on_mount=chat.load_policies,
    )
