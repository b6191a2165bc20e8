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

from ..approvals.inbox import ANY, PAGE_SIZE
from ..assembly.state import ChatState, InterruptState
from .behaviour import chat_behaviour
from .chat import STYLESHEET
from .interrupt_slot import SlotProps, interrupt_card
from .notify import notify_toggle
from .people import asked_by, inbox_people_bar, reassign

__all__ = ["approvals_inbox"]


def _inbox_resolve(state: type[ChatState], thread_id: Any, payload: Any, interrupt_id: Any, run_id: Any,
                   shown: Any) -> Any:
    """``inbox_resolve``'s event; without a shown call's hash (a custom slot gave none) the argument is left out."""
    if shown is None:
        return state.inbox_resolve(thread_id, payload, interrupt_id, run_id)
    return state.inbox_resolve(thread_id, payload, interrupt_id, run_id, shown)


class _InboxActions:
    """What ``interrupt_card`` calls on a configuration, bound to one inbox card's thread."""

    submitting = rx.Var.create(False)

    def __init__(self, state: type[ChatState], card: Any) -> None:
        self._state, self._thread, self._run = state, card.thread_id, card.run_id
        self.submit_form = state.inbox_submit_form
        self.approve_edited = state.inbox_approve_edited
        self.save_rule = state.inbox_save_rule  # "Allow similar calls" (§6.4): its form names the thread and run

    def resolve(self, payload: Any = None, interrupt_id: Any = None, shown: Any = None) -> Any:
        return _inbox_resolve(self._state, self._thread, payload, interrupt_id, self._run, shown)

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
    """The request on one line: select (if it may be decided here), thread, reason, tool, arguments, since, expiry."""
    select = rx.checkbox(checked=state.inbox_selected.contains(card.key), on_change=lambda _checked: state.inbox_toggle(
        card.key), custom_attrs={"data-testid": "inbox-select", "aria-label": "Select: " + card.thread_title})
    return rx.box(
        rx.cond(card.can_decide, select, rx.text.span()),  # a read-only request is not decided in bulk (§6.2)
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
        rx.cond(card.asker == "",  # someone else's request (people): their thread is not the viewer's to open
                rx.link("Open thread", href=chat_path, size="1", on_click=state.switch_thread(card.thread_id),
                        custom_attrs={"data-testid": "inbox-open-thread"})),
        class_name="ic-row",
    )


def _item(state: type[ChatState], card: Any, chat_path: str) -> rx.Component:
    """One request: its row, then its card (the arguments and the editor unfold with "Details")."""
    return rx.box(
        _row(state, card, chat_path),
        interrupt_card(_InboxActions(state, card), card,  # type: ignore[arg-type]  # duck-typed actions
                       aside=rx.fragment(asked_by(card), reassign(state, card))),
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
    def answer(verb: str, payload: Any, interrupt_id: Any, shown: Any) -> Any:
        if verb == "resolve":
            return _inbox_resolve(state, entry.thread_id, payload, interrupt_id, entry.run_id, shown)
        return state.inbox_cancel(entry.thread_id, interrupt_id, entry.run_id)

    return SlotProps.bound(config, entry.event, entry.interrupt.to(dict[str, Any]), entry.interrupts,
                           rx.Var.create(None), entry.cards, entry.run_id, rx.Var.create(False), answer,
                           lambda interrupt_id, run_id, scope, effect: state.inbox_remember(
                               entry.thread_id, interrupt_id, run_id, scope, effect))


def _row_bound(config: type[InterruptState], name: str, drawn: rx.Component) -> rx.Component:
    """A slot drawn in the inbox reads and answers its row through ``slot.*``; its configuration is the chat's set.

    The configuration's vars (``slot.state.x``, computed vars on it) describe the set the chat shows, and its
    handlers answer that set: drawn beside another request they would mislead, so they are refused here.
    """
    state_name = config.get_full_name()
    used = sorted({field for var in drawn._get_vars(include_children=True)
                   for field in _fields_of(var, state_name)} | _handlers_of(drawn, state_name))
    if used:
        raise TypeError(
            f"{name}: the inbox draws this slot once per waiting request, but it uses "
            f"{', '.join(config.__name__ + '.' + f for f in used)}, which belong to the chat's shown set. "
            "Read and answer the request through slot.interrupt / slot.interrupts / slot.cards / slot.waiting "
            "and slot.resolve / slot.cancel / slot.remember (each bound to its own row), e.g. "
            "slot.interrupt[\"message\"].")
    return drawn


def _fields_of(var: Any, state_name: str) -> set[str]:
    data = var._get_all_var_data() if hasattr(var, "_get_all_var_data") else None
    return set(data.field_dependencies.get(state_name, ())) if data is not None else set()


def _handlers_of(component: Any, state_name: str) -> set[str]:
    """The event handlers of ``state_name`` that ``component`` or its children trigger."""
    found: set[str] = set()
    for trigger in getattr(component, "event_triggers", {}).values():
        for spec in getattr(trigger, "events", ()):
            handler = getattr(spec, "handler", None)
            if handler is not None and getattr(handler, "state_full_name", None) == state_name:
                found.add(getattr(handler.fn, "__name__", "handler") + "()")
    for child in getattr(component, "children", ()):
        found |= _handlers_of(child, state_name)
    return found


def _set_select(state: type[ChatState], card: Any) -> rx.Component:
    """A custom slot's request as a selectable line (bulk answers take it like a default card's row)."""
    return rx.cond(card.answered == "", rx.el.label(
        rx.checkbox(checked=state.inbox_selected.contains(card.key), on_change=lambda _checked: state.inbox_toggle(
            card.key), custom_attrs={"data-testid": "inbox-select", "data-interrupt-id": card.id,
                                     "aria-label": "Select: " + card.thread_title + " " + card.tool_name}),
        rx.cond(card.tool_name != "", rx.code(card.tool_name, size="1", high_contrast=True),
                rx.text(card.prompt, size="1")),
        rx.text(card.args_summary, size="1", color_scheme="gray", high_contrast=True, class_name="ic-row-args"),
        class_name="ic-row ic-set-row",
    ))


def _set_item(state: type[ChatState], entry: Any, chat_path: str) -> rx.Component:
    """A set the chat's own slot takes, drawn by that slot's ``render_fn`` (S20)."""
    configs = {config.get_full_name(): config for config in state.configs}
    drawn = [(name, _row_bound(configs[name], getattr(render, "__qualname__", name),
                               render(_slot_props(state, configs[name], entry))))
             for name, render in state.renderers.items() if name in configs]
    return rx.box(
        _heading(state, entry.thread_title, entry.reason, entry.raised, entry.thread_id, chat_path),
        rx.foreach(entry.cards, lambda card: _set_select(state, card)),
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


def _total(values: list[Any]) -> Any:
    """The sum of the chats' numbers (a var)."""
    return functools.reduce(operator.add, values)


def _toolbar(states: list[type[ChatState]]) -> rx.Component:
    """Select all, approve / reject the selected (of every chat listed), the order, the filters, notifications."""
    state = states[0]
    listed = _total([s.inbox_selectable.length() for s in states])  # default cards and custom slots' requests
    selected = _total([s.inbox_selected.length() for s in states])
    return rx.hstack(
        rx.el.label(
            rx.checkbox(checked=(listed > 0) & (selected == listed), disabled=listed == 0,
                        on_change=[s.inbox_select_all for s in states],
                        custom_attrs={"data-testid": "inbox-select-all", "aria-label": "Select all requests"}),
            rx.text("Select all", size="2"), class_name="ic-choice",
        ),
        rx.button("Approve selected", size="1", disabled=selected == 0,
                  on_click=[s.inbox_bulk_ask("approve") for s in states],
                  custom_attrs={"data-testid": "inbox-approve-selected"}),
        rx.button("Reject selected", size="1", color_scheme="red", variant="soft", high_contrast=True,
                  disabled=selected == 0, on_click=[s.inbox_bulk_ask("reject") for s in states],
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


def _bulk_confirm(states: list[type[ChatState]]) -> rx.Component:
    """"Approve 3 requests?" with yes / no: a bulk action never starts on one click.

    The count is every listed chat's selection; "yes" runs each chat's own bulk action on its own selection.
    """
    count = _total([s.inbox_selected.length() for s in states]).to_string()
    asked = functools.reduce(lambda found, s: rx.cond(found != "", found, s.inbox_bulk_verb),
                             states[1:], states[0].inbox_bulk_verb)
    verb = rx.cond(asked == "approve", "Approve", "Reject")
    close = [s.inbox_bulk_close for s in states]
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(verb, " ", count, rx.cond(count == "1", " selected request?", " selected requests?")),
            rx.alert_dialog.description(
                "Each is answered once, as its own card's ", verb, " would answer it. Forms, credentials, expired "
                "requests and those answered elsewhere are skipped.", size="2"),
            rx.hstack(
                rx.button("No", variant="soft", color_scheme="gray", on_click=close,
                          custom_attrs={"data-testid": "inbox-bulk-confirm-no"}),
                rx.button(rx.text.span("Yes, ", verb.to(str).lower(), " ", count),
                          on_click=[s.inbox_bulk_run(asked) for s in states],
                          custom_attrs={"data-testid": "inbox-bulk-confirm-yes"}),
                justify="end", spacing="3", margin_top="12px",
            ),
            on_escape_key_down=close,
            custom_attrs={"data-testid": "inbox-bulk-confirm", "data-count": count},
        ),
        open=asked != "",
    )


def _bulk_result(states: list[type[ChatState]]) -> rx.Component:
    """What the last bulk action did, over every listed chat: answered, skipped, and why each was skipped."""
    def part(state: type[ChatState], key: str) -> Any:
        return rx.cond(state.inbox_bulk.contains(key), state.inbox_bulk[key].to(int), 0)

    done = _total([part(s, "done") for s in states]).to_string()
    skipped = _total([part(s, "skipped") for s in states]).to_string()
    lines = _total([rx.cond(s.inbox_bulk.contains("lines"), s.inbox_bulk["lines"].to(list[str]), rx.Var.create([]))
                    .to(list[str]) for s in states])
    return rx.cond(
        functools.reduce(operator.or_, [s.inbox_bulk.contains("done") for s in states]),
        rx.box(
            rx.text(done, " answered, ", skipped, " skipped.", size="2", weight="medium"),
            rx.el.ul(rx.foreach(lines, lambda line: rx.el.li(line)), class_name="ic-bulk-lines"),
            class_name="ic-bulk-result",
            custom_attrs={"data-testid": "inbox-bulk-result", "data-done": done, "data-skipped": skipped,
                          "role": "status"},
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
        inbox_people_bar([s for s, _ in chats]),
        _toolbar([s for s, _ in chats]),
        _bulk_confirm([s for s, _ in chats]),
        _bulk_result([s for s, _ in chats]),
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
