"""The chat state's people (§6.2): the inbox's scope, reassigning, a delegation (a mixin of ``ChatState``).

The components draw these vars and call these handlers (``components/people.py``).
"""

from __future__ import annotations

from typing import Any

import reflex as rx

__all__ = ["SCOPES", "PeopleHandlers"]

SCOPES = ("mine", "asked", "all")  # assigned to me (my roles, delegated to me); requests I made; both


class PeopleHandlers(rx.State, mixin=True):
    """Who decides what the inbox lists: its vars and event handlers."""

    people_on: bool = False  # the chat has people: the inbox shows its scope and the delegation
    inbox_scope: str = "mine"  # one of SCOPES
    people_choices: list[dict[str, str]] = []  # {"value": "bob" | "role:finance", "label": "Bob" | "finance (role)"}
    delegation: dict[str, str] = {}  # {} or {"to": id, "to_name": name, "until": "YYYY-MM-DD"}
    reassign_open: str = ""  # the inbox card (its key) whose reassign editor is open; "" none

    @rx.event
    def inbox_set_scope(self, scope: str):
        """Show the requests assigned to me, those I asked, or both."""
        self.inbox_scope = scope if scope in SCOPES else "mine"

    @rx.event
    def inbox_reassign_open(self, key: str):
        """Open (or close) the reassign editor of the inbox card ``key``."""
        self.reassign_open = "" if self.reassign_open == key else str(key)

    @rx.event
    def inbox_reassign(self, thread_id: str, interrupt_id: str, to: str):
        """Hand a request of ``thread_id`` to another person or ``role:<name>`` (replaces its assignees)."""
        self.reassign_open = ""

    @rx.event
    def delegate_save(self, form_data: dict[str, Any]):
        """While away, my requests also go to ``to`` until ``until`` (YYYY-MM-DD)."""
        to, until = str(form_data.get("to") or ""), str(form_data.get("until") or "")
        name = next((c["label"] for c in self.people_choices if c.get("value") == to), to)
        self.delegation = {"to": to, "to_name": name, "until": until} if to and until else {}

    @rx.event
    def delegate_clear(self):
        """End the delegation."""
        self.delegation = {}
