"""The thread list (new, search, switch, export, rename, delete) and a thread's audit trail, for apps to place.

``thread_list(state)`` and ``audit_trail(state)`` take the chat's state class
(``ic.chat_state(...)``); both follow the DOM contract in docs/dom-contract.md.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ..assembly.state import ChatState

__all__ = ["audit_trail", "thread_list"]


def _testid(name: str, **attrs: Any) -> dict[str, Any]:
    return {"data-testid": name, **attrs}


def _rename(state: type[ChatState], thread: Any) -> rx.Component:
    return rx.popover.root(
        rx.popover.trigger(rx.icon_button(rx.icon("pencil", size=12), size="1", variant="ghost",
                                          aria_label="Rename thread", custom_attrs=_testid("thread-rename"))),
        rx.popover.content(
            rx.form(
                rx.el.input(type="hidden", name="thread_id", value=thread["id"]),
                rx.hstack(
                    rx.input(name="title", default_value=thread["title"], size="1", aria_label="Thread title",
                             custom_attrs=_testid("thread-rename-input")),
                    rx.popover.close(rx.button("Rename", type="submit", size="1",
                                               custom_attrs=_testid("thread-rename-confirm"))),
                    spacing="2",
                ),
                on_submit=state.rename_thread,
            ),
            size="1",
            custom_attrs={"aria-label": "Rename thread"},
        ),
    )


def _delete(state: type[ChatState], thread: Any) -> rx.Component:
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(rx.icon_button(rx.icon("trash-2", size=12), size="1", variant="ghost",
                                               color_scheme="red", aria_label="Delete thread",
                                               custom_attrs=_testid("thread-delete"))),
        rx.alert_dialog.content(
            rx.alert_dialog.title("Delete this thread?"),
            # the description is a <p> already: its text goes straight in (a <p> in a <p> is invalid HTML)
            rx.alert_dialog.description("“", thread["title"], "” and its messages are deleted; the record "
                                        "of its decisions stays."),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button("Keep it", variant="soft", color_scheme="gray")),
                rx.alert_dialog.action(rx.button("Delete", color_scheme="red", high_contrast=True,
                                                 on_click=state.delete_thread(thread["id"]),
                                                 custom_attrs=_testid("thread-delete-confirm"))),
                spacing="3", justify="end",
            ),
            size="2",
        ),
    )


def _export(state: type[ChatState], thread: Any) -> rx.Component:
    """Download the thread as Markdown and as JSON (two files)."""
    return rx.icon_button(rx.icon("download", size=12), size="1", variant="ghost", aria_label="Export thread",
                          title="Export thread (Markdown and JSON)", on_click=state.export_thread(thread["id"]),
                          custom_attrs=_testid("thread-export"))


def _item(state: type[ChatState], thread: Any) -> rx.Component:
    current = thread["current"] == "true"
    return rx.hstack(
        rx.button(
            rx.vstack(
                rx.text(thread["title"], size="1", weight="medium", class_name="ic-thread-title"),
                rx.cond(thread["updated"] != "", rx.text(thread["updated"], size="1", color_scheme="gray")),
                spacing="0", align="start",
            ),
            rx.spacer(),
            rx.cond(thread["pending"] == "true",
                    rx.badge("waiting", color_scheme="amber", variant="surface", high_contrast=True, size="1")),
            variant=rx.cond(current, "soft", "ghost"), size="1", class_name="ic-thread-item",
            on_click=state.switch_thread(thread["id"]), disabled=(state.status == "running") & ~state.following,
            custom_attrs=_testid("thread-item", **{"data-thread-id": thread["id"], "data-current": thread["current"],
                                                   "data-pending": thread["pending"]}),
        ),
        _export(state, thread),
        _rename(state, thread),
        _delete(state, thread),
        align="center", spacing="1", width="100%",
    )


def thread_list(state: type[ChatState]) -> rx.Component:
    """New chat, a search box and one row per thread: title, time, a badge while an approval waits."""
    return rx.vstack(
        rx.button(rx.icon("plus", size=14), "New chat", variant="soft", size="2", width="100%",
                  on_click=state.new_thread, disabled=(state.status == "running") & ~state.following,
                  custom_attrs=_testid("thread-new")),
        rx.input(placeholder="Search threads", size="1", width="100%", value=state.thread_query,
                 on_change=state.search_threads.debounce(250), aria_label="Search threads",
                 custom_attrs=_testid("thread-search")),
        rx.foreach(state.threads, lambda thread: _item(state, thread)),
        class_name="ic-thread-list", spacing="1", width="100%",
        custom_attrs=_testid("thread-list"),
    )


def audit_trail(state: type[ChatState]) -> rx.Component:
    """The shown thread's decisions, oldest first: action, reason, time and the (masked) answer."""
    return rx.vstack(
        rx.heading("Decisions", as_="h2", size="1", weight="bold", color_scheme="gray", high_contrast=True),
        rx.cond(state.decisions.length() == 0, rx.text("None yet.", size="1", color_scheme="gray")),
        rx.foreach(state.decisions, lambda entry: rx.box(
            rx.hstack(rx.badge(entry["action"], size="1", variant="soft", high_contrast=True),
                      rx.cond(entry["by"] != "person", rx.text("by ", entry["by"], size="1", color_scheme="gray")),
                      rx.text(entry["reason"], size="1", class_name="ic-mono"), spacing="2", align="center"),
            rx.cond(entry["actor"] != "", rx.text(
                entry["actor"], rx.cond(entry["on_behalf_of"] != "", rx.fragment(" for ", entry["on_behalf_of"])),
                size="1", color_scheme="gray")),
            rx.text(entry["at"], " UTC", size="1", color_scheme="gray"),
            rx.cond(entry["payload"] != "", rx.text(entry["payload"], size="1", class_name="ic-mono")),
            rx.cond(entry["shadow"] != "", rx.text("A shadow rule would have chosen: ", entry["shadow"], " (",
                                                   entry["rule"], ")", size="1", color_scheme="gray")),
            class_name="ic-audit-entry",
            custom_attrs=_testid("audit-entry", **{"data-interrupt-id": entry["interrupt_id"],
                                                   "data-action": entry["action"], "data-by": entry["by"],
                                                   "data-actor": entry["actor"],
                                                   "data-on-behalf-of": entry["on_behalf_of"],
                                                   "data-shadow": entry["shadow"]}),
        )),
        class_name="ic-audit", spacing="1", width="100%",
    )
