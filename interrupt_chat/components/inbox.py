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

from ..inbox import ANY, PAGE_SIZE
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

    def remember_rule(self, interrupt_id: Any, run_id: Any, scope: str, effect: str) -> Any:
        return self._state.inbox_remember(self._thread, interrupt_id, run_id, scope, effect)


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


def _row(state: type[ChatState], card: Any, chat_path: str) -> rx.Component:
    """The request on one line: select, thread, reason, tool, its arguments, waiting since, expires in."""
    return rx.box(
        rx.checkbox(checked=state.inbox_selected.contains(card.key), on_change=lambda _checked: state.inbox_toggle(
            card.key), custom_attrs={"data-testid": "inbox-select", "aria-label": "Select: " + card.thread_title}),
        rx.text(card.thread_title, size="2", weight="medium", class_name="ic-row-title"),
        rx.badge(card.reason, size="1", variant="soft", color_scheme="gray", high_contrast=True),
        rx.cond(card.tool_name != "", rx.code(card.tool_name, size="1", high_contrast=True), rx.text("")),
        rx.text(card.args_summary, size="1", color_scheme="gray", high_contrast=True, class_name="ic-row-args"),
        rx.text(rx.cond(card.raised != "", "since " + card.raised.to(str) + " UTC", ""), size="1",
                color_scheme="gray", high_contrast=True),
        rx.text(rx.cond(card.expires_at != "", rx.cond(card.expired, "expired",
                                                         "expires in " + card.seconds_left.to_string() + "s"), ""),
                size="1", color_scheme=rx.cond(card.expired, "red", "amber"), high_contrast=True),
        rx.el.button("Details", type="button", class_name="ic-summary ic-fold-toggle",
                     custom_attrs={"data-ic-toggle": "true", "aria-expanded": "false"}),
        rx.link("Open thread", href=chat_path, size="1", on_click=state.switch_thread(card.thread_id),
                custom_attrs={"data-testid": "inbox-open-thread"}),
        class_name="ic-row",
    )


def _item(state: type[ChatState], card: Any, chat_path: str) -> rx.Component:
    """One request: its row, then its card (the arguments and the editor unfold with "Details")."""
    return rx.box(
        _row(state, card, chat_path),
        interrupt_card(_InboxActions(state, card), card),  # type: ignore[arg-type]  # duck-typed actions
        class_name="ic-inbox-item",
        custom_attrs={"data-testid": "inbox-item", "data-thread-id": card.thread_id,
                      "data-interrupt-id": card.id, "data-reason": card.reason, "tabIndex": "0",
                      "aria-label": "Request in " + card.thread_title.to(str) + ": a approves, r rejects, "
                                    "space selects",
                      "data-ic-fold": "true", "data-open": "false"},
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


def _pager(state: type[ChatState]) -> rx.Component:
    """"51–100 of 300" with the previous and next pages, when the rows fill more than one page."""
    first = state.inbox_page * PAGE_SIZE
    last = rx.cond(first + PAGE_SIZE < state.inbox_total, first + PAGE_SIZE, state.inbox_total)
    return rx.cond(
        state.inbox_total > PAGE_SIZE,
        rx.hstack(
            rx.button("Previous", size="1", variant="soft", disabled=state.inbox_page == 0,
                      on_click=state.inbox_page_prev, custom_attrs={"data-testid": "inbox-page-prev"}),
            rx.text((first + 1).to_string(), "–", last.to_string(), " of ", state.inbox_total.to_string(), size="2",
                    custom_attrs={"data-testid": "inbox-page", "data-page": state.inbox_page.to_string(),
                                  "data-total": state.inbox_total.to_string()}),
            rx.button("Next", size="1", variant="soft", disabled=first + PAGE_SIZE >= state.inbox_total,
                      on_click=state.inbox_page_next, custom_attrs={"data-testid": "inbox-page-next"}),
            align="center", spacing="3", class_name="ic-inbox-pager",
        ),
    )


def _choice(label: str, value: Any, options: Any, on_change: Any, testid: str) -> rx.Component:
    return rx.el.label(
        rx.text(label, size="1", color_scheme="gray", high_contrast=True),
        rx.el.select(rx.el.option("any", value=ANY), rx.foreach(options, lambda o: rx.el.option(o, value=o)),
                     value=rx.cond(value != "", value, ANY), on_change=on_change, class_name="ic-input ic-select",
                     custom_attrs={"data-testid": testid}),
        class_name="ic-choice",
    )


def _toolbar(state: type[ChatState]) -> rx.Component:
    """Select all, approve / reject the selected, the order and the filters; notifications."""
    listed = state.inbox.length()
    return rx.hstack(
        rx.el.label(
            rx.checkbox(checked=(listed > 0) & (state.inbox_selected.length() == listed), disabled=listed == 0,
                        on_change=state.inbox_select_all,
                        custom_attrs={"data-testid": "inbox-select-all", "aria-label": "Select all requests"}),
            rx.text("Select all", size="2"), class_name="ic-choice",
        ),
        rx.button("Approve selected", size="1", disabled=state.inbox_selected.length() == 0,
                  on_click=state.inbox_bulk_ask("approve"), custom_attrs={"data-testid": "inbox-approve-selected"}),
        rx.button("Reject selected", size="1", color_scheme="red", variant="soft", high_contrast=True,
                  disabled=state.inbox_selected.length() == 0, on_click=state.inbox_bulk_ask("reject"),
                  custom_attrs={"data-testid": "inbox-reject-selected"}),
        rx.el.label(
            rx.text("Order", size="1", color_scheme="gray", high_contrast=True),
            rx.el.select(rx.el.option("expires soonest", value="expires"), rx.el.option("oldest first", value="oldest"),
                         value=state.inbox_sort, on_change=lambda v: state.inbox_arrange(v),
                         class_name="ic-input ic-select", custom_attrs={"data-testid": "inbox-sort"}),
            class_name="ic-choice",
        ),
        _choice("Reason", state.inbox_reason, state.inbox_reasons, lambda v: state.inbox_arrange("", v, None),
                "inbox-filter-reason"),
        _choice("Tool", state.inbox_tool, state.inbox_tool_names, lambda v: state.inbox_arrange("", None, v),
                "inbox-filter-tool"),
        rx.spacer(),
        notify_toggle(),
        align="center", width="100%", wrap="wrap", spacing="3", class_name="ic-inbox-toolbar",
    )


def _bulk_confirm(state: type[ChatState]) -> rx.Component:
    """"Approve 3 requests?" with yes / no: a bulk action never starts on one click."""
    count = state.inbox_selected.length().to_string()
    verb = rx.cond(state.inbox_bulk_verb == "approve", "Approve", "Reject")
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(verb, " ", count, rx.cond(count == "1", " selected request?", " selected requests?")),
            rx.alert_dialog.description(
                "Each is answered once, as its own card's ", verb, " would answer it. Forms, credentials, expired "
                "requests and those answered elsewhere are skipped.", size="2"),
            rx.hstack(
                rx.button("No", variant="soft", color_scheme="gray", on_click=state.inbox_bulk_close,
                          custom_attrs={"data-testid": "inbox-bulk-confirm-no"}),
                rx.button(rx.text.span("Yes, ", verb.to(str).lower(), " ", count),
                          on_click=state.inbox_bulk_run(state.inbox_bulk_verb),
                          custom_attrs={"data-testid": "inbox-bulk-confirm-yes"}),
                justify="end", spacing="3", margin_top="12px",
            ),
            on_escape_key_down=state.inbox_bulk_close,
            custom_attrs={"data-testid": "inbox-bulk-confirm", "data-count": count},
        ),
        open=state.inbox_bulk_verb != "",
    )


def _bulk_result(state: type[ChatState]) -> rx.Component:
    """What the last bulk action did: answered, skipped, and why each was skipped."""
    result = state.inbox_bulk
    return rx.cond(
        result.contains("done"),
        rx.box(
            rx.text(result["done"].to_string(), " answered, ", result["skipped"].to_string(), " skipped.", size="2",
                    weight="medium"),
            rx.el.ul(rx.foreach(result["lines"].to(list[str]), lambda line: rx.el.li(line)),
                     class_name="ic-bulk-lines"),
            class_name="ic-bulk-result",
            custom_attrs={"data-testid": "inbox-bulk-result", "data-done": result["done"].to_string(),
                          "data-skipped": result["skipped"].to_string(), "role": "status"},
        ),
    )


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
    # "nothing waits" only once every chat's first load answered: before, the page says it loads
    loaded = functools.reduce(operator.and_, [s.inbox_loaded for s, _ in chats])
    nothing = functools.reduce(operator.and_, [(s.inbox_total == 0) & (s.inbox_sets.length() == 0)
                                               for s, _ in chats])
    return rx.vstack(
        rx.el.link(rel="stylesheet", href=STYLESHEET),  # the cards' styles, as in the chat
        chat_behaviour(),  # skip links (docs/accessibility.md)
        _toolbar(state),
        _bulk_confirm(state),
        _bulk_result(state),
        rx.cond(loaded,
                rx.cond(nothing, rx.callout("Nothing is waiting for you.", icon="check", size="1",
                                            custom_attrs={"data-testid": "inbox-empty"})),
                rx.hstack(rx.spinner(size="1"), rx.text("Loading your requests…", size="2"), align="center",
                          custom_attrs={"data-testid": "inbox-loading", "role": "status", "aria-busy": "true"})),
        *[rx.fragment(_items(s, path), _pager(s)) for s, path in chats],
        rx.cond(state.notice != "", rx.text(state.notice, size="1", color_scheme="gray")),
        spacing="3", width="100%", class_name="ic-inbox",
        on_mount=[s.load_inbox for s, _ in chats],
    )
