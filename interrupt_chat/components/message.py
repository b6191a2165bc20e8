"""A transcript row: a user or assistant message (sanitized markdown), a tool result, tool-call cards."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import reflex as rx
from reflex_base.vars.base import VarData
from reflex_base.vars.function import FunctionStringVar

from .attachments import message_attachments
from .stream_text import stream_text

__all__ = ["RowView", "ToolRenderers", "branch_nav", "message_row", "policy_note", "reasoning_block", "safe_markdown",
           "tool_call_card"]

_STATUS_COLOR = {
    "streaming": "gray",
    "running": "blue",
    "awaiting_approval": "amber",
    "complete": "green",
    "failed": "red",
}


def safe_markdown(source: Any) -> rx.Component:
    """Agent text as markdown with raw HTML off (S24); react-markdown drops ``javascript:`` URLs."""
    return rx.markdown(source, use_raw=False, use_math=False, use_katex=False, class_name="ic-markdown")


def policy_note(note: Any) -> rx.Component:
    """Where a rule answered an interrupt: which tool, which rule (a ``ChatState.policy_notes`` row)."""
    denied = note["action"] == "rejected"
    return rx.box(
        rx.icon("shield_check", size=14),
        rx.text(rx.cond(denied, "Rejected", "Approved"), " by your rule “", note["rule"], "” for ",
                rx.code(note["tool"]), size="1"),
        class_name="ic-policy-note",
        custom_attrs={"data-testid": "policy-note", "data-interrupt-id": note["interrupt_id"],
                      "data-effect": rx.cond(denied, "deny", "allow")},
    )


def _notes(call: Any, notes: Any) -> rx.Component:
    if notes is None:
        return rx.fragment()
    return rx.foreach(notes, lambda note: rx.cond(note["call_id"] == call.id, policy_note(note)))


def tool_call_card(call: Any, on_gap: Any = None, notes: Any = None) -> rx.Component:
    """One tool call (a ``ToolCallRow`` var): name, status badge, arguments (streamed) and result.

    ``on_gap``: the chat state's ``resync_stream`` (the page asks for streamed text it missed).
    ``notes``: the chat's ``policy_notes``; the ones about this call are drawn in it.
    """
    status = call.status
    return rx.box(
        rx.hstack(
            rx.icon("wrench", size=14),
            rx.text(call.name, weight="medium", size="2", class_name="ic-mono"),
            rx.spacer(),
            rx.cond(
                call.rejected,
                rx.badge("rejected", color_scheme="red", variant="soft", high_contrast=True, size="1"),
                rx.match(
                    status,
                    *[(s, rx.badge(s.replace("_", " "), color_scheme=c, variant="soft", high_contrast=True, size="1"))
                      for s, c in _STATUS_COLOR.items()],
                    rx.badge(status, variant="soft", high_contrast=True, size="1"),
                ),
            ),
            align="center",
            width="100%",
        ),
        # focusable: long arguments scroll in their box, and the keyboard has to reach them
        stream_text(call, call.args, on_gap, tag="pre", class_name="ic-args", custom_attrs={"tabIndex": "0"}),
        rx.cond(  # the tool's result message, drawn here rather than as a row of its own (shown once)
            call.result_id != "",
            rx.text("→ ", call.result, size="1", color_scheme="gray", class_name="ic-result",
                    custom_attrs={"data-testid": "message", "data-role": "tool", "data-message-id": call.result_id}),
        ),
        _notes(call, notes),
        class_name="ic-tool-call",
        custom_attrs={"data-testid": "tool-call", "data-tool-call-id": call.id, "data-tool-name": call.name,
                      "data-status": status, "data-rejected": rx.cond(call.rejected, "true", "false")},
    )


ToolRenderers = Mapping[str, Callable[[Any], rx.Component]]


def _tool_call(call: Any, on_gap: Any, renderers: ToolRenderers | None, notes: Any = None) -> rx.Component:
    """A tool call by its renderer (``chat(tool_renderers=...)``), else the default card."""
    if not renderers:
        return tool_call_card(call, on_gap, notes)
    cases = [(name, rx.box(render(call), _notes(call, notes), class_name="ic-tool-ui",
                           custom_attrs={"data-testid": "tool-call", "data-tool-call-id": call.id,
                                         "data-status": call.status, "data-tool-name": call.name}))
             for name, render in renderers.items()]
    return rx.match(call.name, *cases, tool_call_card(call, on_gap, notes))


def _pressed(value: Any) -> Any:
    return rx.cond(value, "true", "false")


def _action(icon: str, label: str, testid: str, on_click: Any) -> rx.Component:
    return rx.icon_button(rx.icon(icon, size=14), size="1", variant="ghost", color_scheme="gray", high_contrast=True,
                          on_click=on_click, custom_attrs={"data-testid": testid, "aria-label": label, "title": label})


def _copy(row: Any) -> Any:
    """Copy in the click's own handler, from the message's source on the page (``stream_text.jsx``: ``icCopy``).

    Safari and Firefox refuse a clipboard write that a server round trip answers; the streamed text is
    only whole on the page.
    """
    stream, content = row.stream.to(str), row.content.to(str)
    return FunctionStringVar.create(
        f"((_e) => window.icCopy ? window.icCopy({stream!s}, {content!s})"
        f" : navigator.clipboard?.writeText({content!s}))",
        _var_data=VarData.merge(stream._get_all_var_data(), content._get_all_var_data()),
    )


def _idle(state: Any) -> Any:
    """No run and no request open: edit and regenerate are offered."""
    return (state.status == "idle") | (state.status == "error")


@dataclass(frozen=True)
class RowView:
    """What a message row reads of its chat: the chat state's handlers, and the row's own values as vars.

    A row drawn from the chat's vars (:meth:`of`) re-renders whenever any of them changes; a row
    drawn as a memoised component of its own (:mod:`.history_row`) gets these values as props, so
    it re-renders only when one of its own changes.
    """

    state: Any  # the chat state class (its event handlers)
    editing: Any  # bool: this message is being edited
    idle: Any  # bool: no run and no request open
    regenerable: Any  # bool: this answer is the one that can be regenerated
    rating: Any  # str: "up", "down", or "" when not rated
    comment: Any  # str: the comment on the rating (undefined without one)
    branch: Any  # str: "2/3" (the version shown, of how many), or "" with one version

    @classmethod
    def of(cls, state: Any, row: Any) -> RowView:
        """The values read from ``state``'s vars for ``row``."""
        return cls(state, state.editing_id == row.id, _idle(state), state.regenerate_id == row.id,
                   rx.cond(state.feedback.contains(row.id), state.feedback[row.id].to(str), ""),
                   state.feedback_comments[row.id].to(str),
                   rx.cond(state.branch_nav.contains(row.id), state.branch_nav[row.id].to(str), ""))


def _view(state: Any, row: Any) -> RowView | None:
    return state if state is None or isinstance(state, RowView) else RowView.of(state, row)


def branch_nav(state: Any, row: Any) -> rx.Component:
    """``branch-nav``: which version of this message is shown, of how many, and the way to the others.

    ``state``: the chat state, or a :class:`RowView` of the row.
    """
    view = _view(state, row)
    assert view is not None
    state, shown = view.state, view.branch
    parts = shown.split("/")
    return rx.cond(
        shown != "",
        rx.hstack(
            rx.icon_button(rx.icon("chevron_left", size=14), size="1", variant="ghost", color_scheme="gray",
                           high_contrast=True, disabled=parts[0] == "1", on_click=state.previous_branch(row.id),
                           custom_attrs={"data-testid": "branch-prev", "aria-label": "Previous version"}),
            rx.text(shown, size="1", class_name="ic-branch-count"),
            rx.icon_button(rx.icon("chevron_right", size=14), size="1", variant="ghost", color_scheme="gray",
                           high_contrast=True, disabled=parts[0] == parts[1], on_click=state.next_branch(row.id),
                           custom_attrs={"data-testid": "branch-next", "aria-label": "Next version"}),
            spacing="1", align="center", class_name="ic-branch-nav",
            custom_attrs={"data-testid": "branch-nav", "data-branch": shown, "role": "group",
                          "aria-label": "Versions of this message"},
        ),
    )


def _edit_form(state: Any, row: Any) -> rx.Component:
    return rx.form(
        rx.el.input(type="hidden", name="message_id", value=row.id),
        rx.text_area(name="text", default_value=row.content, rows="3", auto_focus=True, max_length=100_000,
                     class_name="ic-edit-input", key=row.id,
                     custom_attrs={"data-testid": "message-edit-input", "aria-label": "Edit your message"}),
        rx.hstack(
            rx.button("Send", type="submit", size="1", custom_attrs={"data-testid": "message-edit-save"}),
            rx.button("Cancel", type="button", size="1", variant="soft", color_scheme="gray",
                      on_click=state.cancel_edit, custom_attrs={"data-testid": "message-edit-cancel"}),
            spacing="2", justify="end",
        ),
        on_submit=state.save_edit, reset_on_submit=False, class_name="ic-edit-form",
    )


def _user_body(view: RowView | None, row: Any) -> rx.Component:
    text = rx.fragment(rx.cond(row.content != "", rx.text(row.content, class_name="ic-user-text")),
                       message_attachments(row))
    if view is None:
        return text
    return rx.cond(view.editing, _edit_form(view.state, row), text)


def _actions(view: RowView | None, row: Any, role: str) -> rx.Component:
    """Copy on every message; edit on the person's; thumbs up / down (and a comment) and regenerate on an answer."""
    if view is None:
        return rx.fragment()
    state = view.state
    copy = _action("copy", "Copy", "message-copy", _copy(row))
    if role != "assistant":
        edit = rx.cond(view.idle & ~view.editing,
                       _action("pencil", "Edit", "message-edit", state.start_edit(row.id)))
        return rx.hstack(copy, edit, branch_nav(view, row), spacing="1", align="center",
                         class_name="ic-message-actions")
    regenerate = rx.cond(view.idle & view.regenerable,
                         _action("refresh_cw", "Regenerate", "message-regenerate", state.regenerate(row.id)))
    rating = view.rating
    rated = rating != ""

    def thumb(icon: str, value: str, label: str) -> rx.Component:
        return rx.icon_button(rx.icon(icon, size=14), size="1", variant=rx.cond(rating == value, "soft", "ghost"),
                              color_scheme="gray", high_contrast=True, on_click=state.rate_message(row.id, value),
                              custom_attrs={"data-testid": f"message-feedback-{value}", "aria-label": label,
                                            "title": label, "aria-pressed": _pressed(rated & (rating == value))})

    comment = rx.form(
        rx.el.input(type="hidden", name="message_id", value=row.id),
        rx.el.input(name="comment", default_value=view.comment, max_length=2000,
                    placeholder="Add a comment (optional)", class_name="ic-input ic-feedback-comment",
                    custom_attrs={"aria-label": "Comment on this answer", "data-testid": "message-feedback-comment"},
                    key=row.id.to(str) + rating.to(str)),
        rx.button("Send", type="submit", size="1", variant="soft",
                  custom_attrs={"data-testid": "message-feedback-comment-save"}),
        on_submit=state.comment_message, reset_on_submit=False, class_name="ic-feedback-form",
    )
    return rx.cond(
        row.streaming, rx.fragment(),
        rx.vstack(rx.hstack(copy, thumb("thumbs_up", "up", "Good answer"), thumb("thumbs_down", "down", "Bad answer"),
                            regenerate, branch_nav(view, row), spacing="1", align="center",
                            class_name="ic-message-actions"),
                  rx.cond(rated, comment), spacing="1"),
    )


def _bubble(row: Any, body: rx.Component, role: str, on_gap: Any, renderers: ToolRenderers | None = None,
            notes: Any = None, view: RowView | None = None) -> rx.Component:
    return rx.box(
        body,
        rx.foreach(row.tool_calls, lambda call: _tool_call(call, on_gap, renderers, notes)),
        _actions(view, row, role),
        class_name=f"ic-message ic-{role}",
        custom_attrs={"data-testid": "message", "data-role": role, "data-message-id": row.id},
    )


def reasoning_block(row: Any, on_gap: Any = None) -> rx.Component:
    """The agent's reasoning, folded above its answer: "Thinking…" while it streams, "Thought" after; open it to read.

    A ``<details>`` the page never opens by itself, so it stays folded after the run (the person's own
    opening stays too).
    """
    return rx.el.details(
        rx.el.summary(rx.cond(row.streaming, "Thinking…", "Thought"), class_name="ic-reasoning-summary"),
        stream_text(row, row.content, on_gap, tag="p", class_name="ic-reasoning-text"),
        class_name="ic-reasoning",
        custom_attrs={"data-testid": "reasoning", "data-message-id": row.id,
                      "data-streaming": rx.cond(row.streaming, "true", "false")},
    )


def message_row(row: Any, on_gap: Any = None, renderers: ToolRenderers | None = None,
                notes: Any = None, state: Any = None) -> rx.Component:
    """Draw one row by role. Agent strings are text or sanitized markdown only (S24).

    An answer, reasoning and tool-call arguments stream in as new characters only
    (:mod:`interrupt_chat.tab.streaming`); ``on_gap`` is the chat state's ``resync_stream``.
    ``renderers`` draw the calls of the tools they name (the row's ``input`` / ``output``).
    ``notes``: the chat's ``policy_notes``, drawn in the tool calls they are about.
    ``state``: the chat's state, for copy and feedback on the message (none without it), or a
    :class:`RowView` of the row.
    """
    view = _view(state, row)
    return rx.match(
        row.role,
        ("user", _bubble(row, _user_body(view, row), "user", on_gap, view=view)),
        ("tool", _bubble(row, rx.text(row.content, size="2", class_name="ic-mono"), "tool", on_gap)),
        ("reasoning", reasoning_block(row, on_gap)),
        _bubble(row, stream_text(row, row.content, on_gap, markdown=True, class_name="ic-markdown"), "assistant",
                on_gap, renderers, notes, view),
    )
