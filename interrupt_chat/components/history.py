"""The history's rows on the page: a store fed by the ``history`` var's deltas (``history_rows.js``).

:class:`HistoryRows` is the page's copy of the chat's history (``rows``: what ``rx.foreach``
draws; ``offset``: its first row's index; ``at_end``: the current turn follows its last row).
:func:`history_more` draws "Earlier messages" above the rows and "Later messages" below them
(when the page holds older rows only, around a search's match); each asks for the next page as
it scrolls into view. :func:`history_focus` brings a search's match into view. See
:mod:`interrupt_chat.tab.paging` for the server's side and docs/decisions/0022.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import reflex as rx
from reflex_base.event import EventChain, EventHandler, passthrough_event_spec
from reflex_base.utils.imports import ImportVar
from reflex_base.vars.base import VarData

from ..assembly.state import ChatState
from ..model.views import MessageRow

__all__ = ["HistoryFocus", "HistoryMore", "HistoryRows", "history_focus", "history_more"]

MODULE = rx.asset("history_rows.js", shared=True).importable_path


class HistoryRows:
    """The page's history store of one chat, as vars."""

    def __init__(self, state: type[ChatState]) -> None:
        """The vars of ``state``'s store: each component that reads them calls the hook (the store is the page's)."""
        full_name = state.get_full_name()
        name = "ic_history_" + hashlib.blake2b(full_name.encode(), digest_size=4).hexdigest()
        delta = state.history
        on_gap = rx.Var.create(EventChain.create(state.history_resync, args_spec=lambda: []))
        hook = f"const {name} = useHistoryRows({json.dumps(full_name)}, {delta!s}, {on_gap!s});"
        needs = VarData.merge(delta._get_all_var_data(), on_gap._get_all_var_data(),
                              VarData(imports={MODULE: [ImportVar(tag="useHistoryRows")]}))
        data = VarData(hooks={hook: needs})

        def var(expr: str, kind: Any) -> Any:
            return rx.Var(_js_expr=f"{name}.{expr}", _var_data=data).to(kind)

        self.rows: Any = var("rows", list[MessageRow])
        self.offset: Any = var("offset", int)
        self.end: Any = rx.Var(_js_expr=f"({name}.offset + {name}.rows.length)", _var_data=data).to(int)
        self.at_end: Any = var("atEnd", bool)


class HistoryMore(rx.Component):
    """The React component behind :func:`history_more`, shipped with the package."""

    library = MODULE
    tag = "HistoryMore"

    at: rx.Var[int]
    shown: rx.Var[bool]
    up: rx.Var[bool]
    label: rx.Var[str]

    on_more: EventHandler[passthrough_event_spec(int)]  # type: ignore[type-arg, valid-type]  # Reflex's own idiom


class HistoryFocus(rx.Component):
    """The React component behind :func:`history_focus`, shipped with the package."""

    library = MODULE
    tag = "HistoryFocus"

    focus: rx.Var[str]
    seq: rx.Var[int]


def history_more(state: type[ChatState], store: HistoryRows, *, older: bool) -> rx.Component:
    """"Earlier messages" above the rows the page holds (``older``), or "Later messages" below them."""
    if older:
        return HistoryMore.create(at=store.offset, shown=store.offset > 0, up=True, label="Earlier messages",
                                  on_more=state.history_older, class_name="ic-more",
                                  custom_attrs={"data-testid": "history-older"})
    return HistoryMore.create(at=store.end, shown=~store.at_end, up=False, label="Later messages",
                              on_more=state.history_newer, class_name="ic-more",
                              custom_attrs={"data-testid": "history-newer"})


def history_focus(state: type[ChatState]) -> rx.Component:
    """Scrolls a search's match into view once its row is drawn (and marks it ``data-match``)."""
    return HistoryFocus.create(focus=state.history.focus, seq=state.history.seq)
