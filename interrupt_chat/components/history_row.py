"""A history row as a memoised React component of its own: a chat var that changes redraws only its rows.

The history's ``rx.foreach`` is compiled into one component that reads the chat state's vars, so
any change of them (the status, a card, the decision trail) renders it again. Drawn inline, every
row of the history would be rendered again with it, and the page's work for one push grew with the
thread (benchmarks/README.md, "Decide latency"). Each row is drawn here by a component wrapped in
``React.memo`` whose props are the row (the history store keeps an unchanged row's object) and the
few values of the chat it shows (:class:`~.message.RowView`): it is rendered again only when one
of those changed. The rules' notes go as JSON text: the list is computed anew with every decision
of the thread, and a new list with the same notes must not redraw every row.
"""

from __future__ import annotations

import hashlib
from typing import Any

import reflex as rx

from ..assembly.state import ChatState
from ..model.views import MessageRow
from .message import RowView, ToolRenderers, message_row

__all__ = ["history_row"]

_MEMOS: dict[str, Any] = {}  # one component per chat state and tool renderers: its events name the state


def history_row(state: type[ChatState], renderers: ToolRenderers | None, row: Any) -> rx.Component:
    """``row`` of ``state``'s history, drawn by the memoised row component of that chat."""
    view = RowView.of(state, row)
    drawn = _memo_for(state, renderers)(
        row=row, notes=state.policy_notes.to_string(), editing=view.editing, idle=view.idle,
        regenerable=view.regenerable, rating=view.rating, comment=view.comment, branch=view.branch)
    return rx.fragment(drawn, key=row.id)


def _memo_for(state: type[ChatState], renderers: ToolRenderers | None) -> Any:
    # the name is the React component's: stable across builds, one per chat and set of renderers
    parts = [state.get_full_name(), *(f"{name}={getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn)}"
                                      for name, fn in sorted((renderers or {}).items()))]
    name = "ic_history_row_" + hashlib.blake2b("|".join(parts).encode(), digest_size=6).hexdigest()
    memo = _MEMOS.get(name)
    if memo is None:
        def row_component(row: rx.Var[MessageRow], notes: rx.Var[str], editing: rx.Var[bool],
                          idle: rx.Var[bool], regenerable: rx.Var[bool], rating: rx.Var[str], comment: rx.Var[str],
                          branch: rx.Var[str]) -> rx.Component:
            view = RowView(state, editing, idle, regenerable, rating, comment, branch)
            return message_row(row, state.resync_stream, renderers, _parsed(notes), view)

        row_component.__name__ = row_component.__qualname__ = name
        # Reflex compiles a memo into the file of its function's module: a module of its own keeps a page from
        # loading every chat's row component (``.web/app_components/interrupt_chat/components/history_row/``)
        row_component.__module__ = f"{__name__}.{name}"
        memo = _MEMOS[name] = rx.memo(row_component)
    return memo


def _parsed(text: Any) -> Any:
    """The notes' JSON text (a prop) as the list it was made from."""
    return rx.Var(_js_expr=f"JSON.parse({text!s} || \"[]\")", _var_data=text._get_all_var_data()).to(
        list[dict[str, str]])
