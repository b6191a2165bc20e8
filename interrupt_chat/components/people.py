"""The people of a chat as the pages draw them (§6.2, docs/dom-contract.md "People and routing").

On a card (the chat, the inbox, ``/decide``): who the request waits for and its approvals so far. In
the inbox: who asked, reassigning, the scope, and a delegation while away. A chat without people
draws none of it (``card.routed`` and ``people_on`` are False).
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import reflex as rx

from ..assembly.state import ChatState

__all__ = ["asked_by", "inbox_people_bar", "people_line", "reassign"]

SCOPE_LABELS = (("mine", "Assigned to me"), ("asked", "Asked by me"), ("all", "All"))


def _assignee(card: Any) -> rx.Component:
    return rx.cond(card.routed, rx.badge(
        "Waits for ", rx.cond(card.assignee_names != "", card.assignee_names, "you"),
        size="1", variant="soft", color_scheme="gray", high_contrast=True,
        custom_attrs={"data-testid": "request-assignee", "data-assignee": card.assignee}))


def _progress(card: Any) -> rx.Component:
    have, need = card.have.to_string(), card.need.to_string()
    return rx.cond(card.need > 1, rx.badge(
        have, " of ", need, " approvals", rx.cond(card.approvers != "", ": " + card.approvers.to(str), ""),
        size="1", variant="outline", high_contrast=True,
        custom_attrs={"data-testid": "approval-progress", "data-have": have, "data-need": need}))


def people_line(card: Any, *more: rx.Component) -> rx.Component:
    """Who ``card`` waits for and its approvals so far (then ``more``); nothing on a card without people."""
    return rx.cond(card.routed | (card.need > 1), rx.hstack(
        _assignee(card), _progress(card), *more, spacing="2", align="center", wrap="wrap", class_name="ic-people"))


def _person_options(choices: Any, persons_only: bool = False) -> rx.Component:
    """``<option>``s of ``people_choices`` (people, and roles unless ``persons_only``), after "Choose…"."""
    def option(choice: Any) -> rx.Component:
        drawn = rx.el.option(choice["label"], value=choice["value"])
        return rx.cond(choice["value"].to(str).startswith("role:"), rx.fragment(), drawn) if persons_only else drawn

    return rx.fragment(rx.el.option("Choose…", value="", disabled=True), rx.foreach(choices, option))


def _reassign_event(state: type[ChatState], form: Any) -> Any:
    return state.inbox_reassign(form["__thread_id"], form["__interrupt_id"], form["to"])


def reassign(state: type[ChatState], card: Any) -> rx.Component:
    """An assignee's "Reassign…": a person or role (``reassign-to``) and ``reassign-save``."""
    opened = state.reassign_open == card.key
    editor = rx.form(  # the ids ride in the form: its submit handler is a page hook, outside the inbox's loop
        rx.el.input(type="hidden", name="__thread_id", value=card.thread_id),
        rx.el.input(type="hidden", name="__interrupt_id", value=card.id),
        rx.el.select(_person_options(state.people_choices), name="to", default_value="", required=True,
                     class_name="ic-input ic-select",
                     custom_attrs={"data-testid": "reassign-to", "aria-label": "Reassign to"}),
        rx.button("Reassign", type="submit", size="1", custom_attrs={"data-testid": "reassign-save"}),
        on_submit=lambda form: _reassign_event(state, form.to(dict[str, Any])),
        class_name="ic-reassign",
    )
    return rx.cond(card.reassignable, rx.fragment(
        rx.button("Reassign…", type="button", size="1", variant="soft", color_scheme="gray",
                  on_click=state.inbox_reassign_open(card.key),
                  custom_attrs={"data-testid": "inbox-reassign", "aria-expanded": rx.cond(opened, "true", "false")}),
        rx.cond(opened, editor),
    ))


def asked_by(card: Any) -> rx.Component:
    """"asked by <name>" on an inbox row of someone else's request."""
    return rx.cond(card.asker != "", rx.text("asked by ", card.asker, size="1", color_scheme="gray",
                                             high_contrast=True, custom_attrs={"data-testid": "request-asker"}))


def _scope(states: list[type[ChatState]]) -> rx.Component:
    return rx.el.label(
        rx.text("Show", size="1", color_scheme="gray", high_contrast=True),
        rx.el.select(*[rx.el.option(label, value=value) for value, label in SCOPE_LABELS],
                     value=states[0].inbox_scope, on_change=lambda v: [s.inbox_set_scope(v) for s in states],
                     class_name="ic-input ic-select", custom_attrs={"data-testid": "inbox-scope"}),
        class_name="ic-choice",
    )


CHANNEL_LABELS = (("both", "Mail and Slack"), ("mail", "Mail"), ("slack", "Slack"), ("app", "In the app only"))


def _channels(state: type[ChatState]) -> rx.Component:
    """Where I want requests (and their reminders) besides the app."""
    return rx.el.label(
        rx.text("Also reach me by", size="1", color_scheme="gray", high_contrast=True),
        rx.el.select(*[rx.el.option(label, value=value) for value, label in CHANNEL_LABELS],
                     value=state.channel_choice, on_change=state.channel_set,
                     class_name="ic-input ic-select", custom_attrs={"data-testid": "channel-choice"}),
        class_name="ic-choice",
    )


def _delegation(state: type[ChatState]) -> rx.Component:
    """A delegation while away: who and until when; while one is in force, what it does and "Stop"."""
    form = rx.form(
        rx.text("While away, also send my requests to", size="1", color_scheme="gray", high_contrast=True),
        rx.el.select(_person_options(state.people_choices, persons_only=True), name="to", default_value="",
                     required=True, class_name="ic-input ic-select",
                     custom_attrs={"data-testid": "delegate-to", "aria-label": "Delegate to"}),
        rx.text("until", size="1", color_scheme="gray", high_contrast=True),
        rx.el.input(type="date", name="until", required=True, class_name="ic-input ic-select",
                    custom_attrs={"data-testid": "delegate-until", "aria-label": "Delegate until"}),
        rx.button("Delegate", type="submit", size="1", variant="soft", custom_attrs={"data-testid": "delegate-save"}),
        on_submit=state.delegate_save, class_name="ic-delegate",
    )
    active = rx.hstack(
        rx.text("Your requests also go to ", state.delegation["to_name"], " until ", state.delegation["until"],
                size="2", custom_attrs={"data-testid": "delegate-active", "role": "status"}),
        rx.button("Stop delegating", type="button", size="1", variant="soft", color_scheme="gray",
                  on_click=state.delegate_clear, custom_attrs={"data-testid": "delegate-clear"}),
        align="center", spacing="2", wrap="wrap", class_name="ic-delegate",
    )
    error = rx.cond(state.people_error != "", rx.text(state.people_error, size="1", color_scheme="red",
                                                     custom_attrs={"data-testid": "delegate-error", "role": "alert"}))
    return rx.fragment(rx.cond(state.delegation.contains("to"), active, form), error)


def inbox_people_bar(states: list[type[ChatState]]) -> rx.Component:
    """Above the inbox of a chat with people: the scope (every listed chat's) and the first chat's delegation."""
    people_on = functools.reduce(operator.or_, [s.people_on for s in states])
    return rx.cond(people_on, rx.hstack(
        _scope(states), _channels(states[0]), rx.spacer(), _delegation(states[0]),
        align="center", width="100%", wrap="wrap", spacing="3", class_name="ic-inbox-toolbar ic-people-bar",
    ))
