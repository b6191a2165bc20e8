"""``policy_list(state)``: the owner's rules ("always allow", …), each with its revoke (P4)."""

from __future__ import annotations

from typing import Any, cast

import reflex as rx

from ..approvals import missing_pages
from ..assembly.state import ChatState
from .chat import STYLESHEET

__all__ = ["policy_list"]


def _item(state: type[ChatState], rule: Any) -> rx.Component:
    return rx.hstack(
        rx.badge(rule["rule"], size="1", variant="soft", high_contrast=True,
                 color_scheme=rx.cond(rule["effect"] == "deny", "red", "green")),
        rx.code(rule["tool"], high_contrast=True),
        rx.cond(rule["scope"] == "thread", rx.text("in thread ", rx.code(rule["thread_id"]), size="1",
                                                   color_scheme="gray", high_contrast=True)),
        rx.text("since ", rule["created"], " UTC", size="1", color_scheme="gray", high_contrast=True),
        rx.spacer(),
        rx.button("Revoke", size="1", variant="soft", color_scheme="red", high_contrast=True,
                  on_click=state.revoke_policy(rule["id"]),
                  custom_attrs={"data-testid": "policy-revoke", "aria-label": "Revoke: " + rule["rule"].to(str) +
                                " " + rule["tool"].to(str)}),
        align="center", width="100%", wrap="wrap", class_name="ic-policy-item",
        custom_attrs={"data-testid": "policy-item", "data-tool": rule["tool"], "data-scope": rule["scope"],
                      "data-effect": rule["effect"], "data-thread-id": rule["thread_id"], "data-policy-id": rule["id"]},
    )


def policy_list(state: type[ChatState] | Any) -> rx.Component:
    """The owner's rules in force, newest first, each with ``policy-revoke``; ``policy-empty`` when there is none.

    A revoke takes effect for the next set that surfaces; the list follows changes made on the
    owner's other tabs. ``state``: the chat (an ``ic.Chat`` or its state class).
    """
    chat = cast("type[ChatState]", state if isinstance(state, type) else state.state)
    missing_pages.policy_list_built()
    return rx.vstack(
        rx.el.link(rel="stylesheet", href=STYLESHEET),
        # "no rules" only once the list answered: before, an empty list says nothing about the owner's rules
        rx.cond(chat.policies_loaded,
                rx.cond(chat.policies.length() == 0,
                        rx.callout("No rules yet. “Always allow” on a tool approval makes one.", icon="info",
                                   size="1", custom_attrs={"data-testid": "policy-empty"})),
                rx.hstack(rx.spinner(size="1"), rx.text("Loading your rules…", size="2"), align="center",
                          custom_attrs={"data-testid": "policy-loading", "role": "status", "aria-busy": "true"})),
        rx.foreach(chat.policies, lambda rule: _item(chat, rule)),
        spacing="2", width="100%", class_name="ic-policies",
        on_mount=chat.load_policies,
    )
