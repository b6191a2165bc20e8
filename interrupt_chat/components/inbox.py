"""``approvals_inbox(state)``: every interrupt waiting for the owner, across threads, answered in place.

Each item holds the same card as the chat's default slot (S22), wired to the inbox's handlers,
and a link to open its thread in the chat.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ..state import ChatState
from .behaviour import chat_behaviour
from .chat import STYLESHEET
from .interrupt_slot import interrupt_card

__all__ = ["approvals_inbox"]


class _InboxActions:
    """What ``interrupt_card`` calls on a configuration, bound to one inbox card's thread."""

    submitting = rx.Var.create(False)

    def __init__(self, state: type[ChatState], card: Any) -> None:
        self._state, self._thread = state, card.thread_id
        self.submit_form = state.inbox_submit_form
        self.approve_edited = state.inbox_approve_edited

    def resolve(self, payload: Any = None, interrupt_id: Any = None) -> Any:
        return self._state.inbox_resolve(self._thread, payload, interrupt_id)

    def cancel(self, interrupt_id: Any = None) -> Any:
        return self._state.inbox_cancel(self._thread, interrupt_id)


def _item(state: type[ChatState], card: Any, chat_path: str) -> rx.Component:
    return rx.box(
        rx.hstack(
            rx.text(card.thread_title, size="2", weight="medium"),
            rx.badge(card.reason, size="1", variant="soft", color_scheme="gray", high_contrast=True),
            rx.cond(card.raised != "", rx.text("since ", card.raised, " UTC", size="1", color_scheme="gray")),
            rx.spacer(),
            rx.link("Open thread", href=chat_path, size="1",
                    on_click=state.switch_thread(card.thread_id),
                    custom_attrs={"data-testid": "inbox-open-thread"}),
            align="center", width="100%",
        ),
        interrupt_card(_InboxActions(state, card), card),  # type: ignore[arg-type]  # duck-typed actions
        class_name="ic-inbox-item",
        custom_attrs={"data-testid": "inbox-item", "data-thread-id": card.thread_id,
                      "data-interrupt-id": card.id, "data-reason": card.reason},
    )


def approvals_inbox(state: type[ChatState], chat_path: str = "/") -> rx.Component:
    """Every interrupt waiting for the chat's owner, across its threads (``state = ic.chat_state(...)``).

    Args:
        state: the chat's state class; its owner's threads are the inbox's.
        chat_path: the page holding that chat, for "Open thread".
    """
    return rx.vstack(
        rx.el.link(rel="stylesheet", href=STYLESHEET),  # the cards' styles, as in the chat
        chat_behaviour(),  # skip links (docs/accessibility.md)
        rx.cond(
            state.inbox.length() == 0,
            rx.callout("Nothing is waiting for you.", icon="check", size="1",
                       custom_attrs={"data-testid": "inbox-empty"}),
        ),
        rx.foreach(state.inbox, lambda card: _item(state, card, chat_path)),
        rx.cond(state.notice != "", rx.text(state.notice, size="1", color_scheme="gray")),
        spacing="3", width="100%", class_name="ic-inbox",
        on_mount=state.load_inbox,
    )
