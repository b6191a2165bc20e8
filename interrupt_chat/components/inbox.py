"""``approvals_inbox(state)``: every interrupt waiting for the owner, across threads, answered in place.

Each item holds the same card as the chat's default slot (S22), wired to the inbox's handlers,
and a link to open its thread in the chat. A frontend-tool call that waits for the owner (S27) is
listed too (``inbox-tool-wait``): its tool's UI belongs to the chat that declares the tool, so the
item shows the call and links to its thread, where it is answered.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any, cast

import reflex as rx

from ..state import ChatState, InterruptState
from .behaviour import chat_behaviour
from .chat import STYLESHEET
from .interrupt_slot import SlotProps, interrupt_card
from .notify import notify_toggle

__all__ = ["approvals_inbox"]


class _InboxActions:
    """What ``interrupt_card`` calls on a configuration, bound to one inbox card's thread."""

    submitting = rx.Var.create(False)

    def __init__(self, state: type[ChatState], card: Any) -> None:
        self._state, self._thread, self._run = state, card.thread_id, card.run_id
        self.submit_form = state.inbox_submit_form
        self.approve_edited = state.inbox_approve_edited

    def resolve(self, payload: Any = None, interrupt_id: Any = None) -> Any:
        return self._state.inbox_resolve(self._thread, payload, interrupt_id, self._run)

    def cancel(self, interrupt_id: Any = None) -> Any:
        return self._state.inbox_cancel(self._thread, interrupt_id, self._run)


def _heading(state: type[ChatState], title: Any, reason: Any, raised: Any, thread_id: Any,
             chat_path: str) -> rx.Component:
    return rx.hstack(
        rx.text(title, size="2", weight="medium"),
        rx.badge(reason, size="1", variant="soft", color_scheme="gray", high_contrast=True),
        rx.cond(raised != "", rx.text("since ", raised, " UTC", size="1", color_scheme="gray")),
        rx.spacer(),
        rx.link("Open thread", href=chat_path, size="1", on_click=state.switch_thread(thread_id),
                custom_attrs={"data-testid": "inbox-open-thread"}),
        align="center", width="100%",
    )


def _item(state: type[ChatState], card: Any, chat_path: str) -> rx.Component:
    return rx.box(
        _heading(state, card.thread_title, card.reason, card.raised, card.thread_id, chat_path),
        interrupt_card(_InboxActions(state, card), card),  # type: ignore[arg-type]  # duck-typed actions
        class_name="ic-inbox-item",
        custom_attrs={"data-testid": "inbox-item", "data-thread-id": card.thread_id,
                      "data-interrupt-id": card.id, "data-reason": card.reason},
    )


def _tool_item(state: type[ChatState], row: Any, chat_path: str) -> rx.Component:
    return rx.box(
        rx.hstack(
            rx.text(row.thread_title, size="2", weight="medium"),
            rx.badge("tool call", size="1", variant="soft", color_scheme="gray", high_contrast=True),
            rx.cond(row.raised != "", rx.text("since ", row.raised, " UTC", size="1", color_scheme="gray")),
            rx.spacer(),
            rx.link("Answer in its thread", href=chat_path, size="1", on_click=state.switch_thread(row.thread_id),
                    custom_attrs={"data-testid": "inbox-tool-open-thread"}),
            align="center", width="100%",
        ),
        rx.text("The agent waits for your answer to ", rx.code(row.name), ".", size="2"),
        rx.el.pre(row.args_json, class_name="ic-args"),
        class_name="ic-inbox-item",
        custom_attrs={"data-testid": "inbox-tool-wait", "data-thread-id": row.thread_id,
                      "data-tool-call-id": row.id, "data-tool-name": row.name},
    )


def _slot_props(state: type[ChatState], config: type[InterruptState], entry: Any) -> SlotProps:
    """A waiting set's props for its slot's ``render_fn``, answered through the inbox (bound to its thread and run)."""
    return SlotProps(state=config, event=entry.event.to(dict[str, Any]), interrupt=entry.interrupt.to(dict[str, Any]),
                     interrupts=entry.interrupts.to(list[dict[str, Any]]), result=rx.Var.create(None),
                     cards=entry.cards,
                     resolve=lambda payload=None, interrupt_id=None: state.inbox_resolve(
                         entry.thread_id, payload, interrupt_id, entry.run_id),
                     cancel=lambda interrupt_id=None: state.inbox_cancel(entry.thread_id, interrupt_id, entry.run_id))


def _set_item(state: type[ChatState], entry: Any, chat_path: str) -> rx.Component:
    """A set the chat's own slot takes, drawn by that slot's ``render_fn`` (S20)."""
    configs = {config.get_full_name(): config for config in state.configs}
    drawn = [(name, render(_slot_props(state, configs[name], entry)))
             for name, render in state.renderers.items() if name in configs]
    return rx.box(
        _heading(state, entry.thread_title, entry.reason, entry.raised, entry.thread_id, chat_path),
        rx.match(entry.slot, *drawn, rx.fragment()) if drawn else rx.fragment(),
        class_name="ic-inbox-item ic-inbox-slot",
        custom_attrs={"data-testid": "inbox-item", "data-thread-id": entry.thread_id,
                      "data-interrupt-id": entry.id, "data-reason": entry.reason, "data-slot": "custom"},
    )


def _items(state: type[ChatState], chat_path: str) -> rx.Component:
    """One chat's waiting interrupts (answered here) and tool calls (answered in their thread)."""
    return rx.fragment(rx.foreach(state.inbox, lambda card: _item(state, card, chat_path)),
                       rx.foreach(state.inbox_sets, lambda entry: _set_item(state, entry, chat_path)),
                       rx.foreach(state.inbox_tools, lambda row: _tool_item(state, row, chat_path)))


def _state_of(chat: Any) -> type[ChatState]:
    """A chat's state class, from an ``ic.Chat`` or the class itself."""
    return cast("type[ChatState]", getattr(chat, "state", chat) if not isinstance(chat, type) else chat)


def approvals_inbox(state: type[ChatState] | Any, chat_path: str = "/",
                    also: Sequence[tuple[type[ChatState] | Any, str]] = ()) -> rx.Component:
    """Every interrupt and frontend-tool call waiting for the chat's owner, across its threads.

    ``state = ic.chat_state(...)``. Each chat keeps its own threads (the owner key includes the
    chat), so an inbox for several chats lists each one's, in the order given.

    Args:
        state: the chat (an ``ic.Chat``, or its state class); its owner's threads are the inbox's.
            A set that one of the chat's own slots takes (S20) is drawn by that slot's
            ``render_fn``, answered through the inbox; ``result`` is None there (the
            configuration's handler runs when the set surfaces in the chat).
        chat_path: the page holding that chat, for "Open thread".
        also: more chats, as ``(chat or state, chat_path)`` pairs (e.g. a page whose chat declares
            frontend tools, so its waiting calls are listed too).
    """
    chats = [(_state_of(state), chat_path), *[(_state_of(s), path) for s, path in also]]
    state = chats[0][0]
    nothing = functools.reduce(operator.and_, [(s.inbox.length() == 0) & (s.inbox_tools.length() == 0)
                                               for s, _ in chats])
    return rx.vstack(
        rx.el.link(rel="stylesheet", href=STYLESHEET),  # the cards' styles, as in the chat
        chat_behaviour(),  # skip links (docs/accessibility.md)
        rx.hstack(rx.spacer(), notify_toggle(), width="100%"),
        rx.cond(nothing, rx.callout("Nothing is waiting for you.", icon="check", size="1",
                                    custom_attrs={"data-testid": "inbox-empty"})),
        *[_items(s, path) for s, path in chats],
        rx.cond(state.notice != "", rx.text(state.notice, size="1", color_scheme="gray")),
        spacing="3", width="100%", class_name="ic-inbox",
        on_mount=[s.load_inbox for s, _ in chats],
    )
