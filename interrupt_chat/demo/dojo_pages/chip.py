"""The chip above a dojo page's chat: one click sends the page's prompt (the dojo's own, where it has one)."""

from __future__ import annotations

import reflex as rx

import interrupt_chat as ic

__all__ = ["scenario_chip"]


def scenario_chip(state: type[ic.ChatState], label: str, text: str, scenario: str) -> rx.Component:
    """A chip labelled ``label`` that sends ``text``; disabled while a run or a request is open."""
    return rx.button(label, size="1", variant="surface", radius="full", on_click=state.send_text(text),
                     disabled=(state.status == "running") | state.locked,
                     custom_attrs={"data-testid": "scenario-chip", "data-scenario": scenario})
