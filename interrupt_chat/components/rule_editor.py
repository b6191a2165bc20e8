""""Allow similar…" (§6.4): a narrower rule made from the shown call, edited inline in the card.

``interrupt-allow-similar`` unfolds ``rule-editor`` (the card's ``data-ic-fold`` toggle: client-side,
no round trip). The editor is an uncontrolled form: one ``rule-arg`` row per argument (a native
``<select>`` of the condition, starting at ``equals``, and the value, pre-filled with the shown one),
how long the rule lasts, and ``rule-save``, which makes the rule (allow) and approves the shown call.
The form names the call it was made from (``__call``, the card's ``call_hash``): the server refuses it
for a call that changed meanwhile.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

__all__ = ["DURATIONS", "OPS", "rule_editor"]

# the condition on one argument: option value (the contract's word) -> what the select says
OPS = {"any": "any value", "equals": "equals", "matches": "matches (a glob: * and ?)", "at-most": "at most",
       "at-least": "at least"}
DEFAULT_OP = "equals"
# how long the rule lasts; the narrowest is the default (a rule that outlives its reason answers too much)
DURATIONS = {"1h": "for 1 hour", "8h": "for 8 hours", "7d": "for 7 days", "always": "always"}
DEFAULT_DURATION = "1h"


def _hidden(card: Any) -> rx.Component:
    return rx.fragment(rx.el.input(type="hidden", name="__interrupt_id", value=card.id),
                       rx.el.input(type="hidden", name="__thread_id", value=card.thread_id),
                       rx.el.input(type="hidden", name="__run_id", value=card.run_id),
                       rx.el.input(type="hidden", name="__call", value=card.call_hash))


def _arg(row: Any, index: Any) -> rx.Component:
    """One argument: its name (hidden ``arg-<i>``), the condition ``op-<i>`` and the value ``value-<i>``."""
    i = index.to(str)
    value_attrs = {"data-testid": "rule-arg-value", "aria-label": "Value of " + row.key.to(str)}
    value = rx.cond(row.long,  # a long or multi-line value keeps its line breaks (an input would drop them)
                    rx.el.textarea(name="value-" + i, default_value=row.value, rows=3, class_name="ic-input ic-mono",
                                   custom_attrs=value_attrs),
                    rx.el.input(type="text", name="value-" + i, default_value=row.value, auto_complete="off",
                                class_name="ic-input", custom_attrs=value_attrs))
    return rx.box(
        rx.el.input(type="hidden", name="arg-" + i, value=row.key),
        rx.code(row.key, high_contrast=True, class_name="ic-rule-arg-name"),
        rx.el.select(*[rx.el.option(label, value=op) for op, label in OPS.items()], name="op-" + i,
                     default_value=DEFAULT_OP, class_name="ic-input ic-select",
                     custom_attrs={"data-testid": "rule-arg-op", "aria-label": "Condition on " + row.key.to(str)}),
        value,
        class_name="ic-rule-arg", custom_attrs={"data-testid": "rule-arg", "data-arg": row.key},
    )


def rule_editor(state: Any, card: Any) -> rx.Component:
    """"Allow similar…" and its folded editor, on a card a rule may answer (``card.rememberable``).

    ``state``: what the card calls (an ``InterruptState`` subclass in the chat, the inbox's actions);
    its ``save_rule(form_data)`` gets ``__interrupt_id``, ``__thread_id``, ``__run_id``, ``__call``,
    ``arg-<i>`` / ``op-<i>`` / ``value-<i>`` per argument and ``duration``.
    """
    editor = rx.form(
        _hidden(card),
        rx.text("Allow calls of ", rx.code(card.tool_name, high_contrast=True), " whose arguments meet:", size="2"),
        rx.cond(card.args.length() > 0, rx.foreach(card.args, _arg),
                rx.text("(no arguments: every call of the tool)", size="1", color_scheme="gray", high_contrast=True)),
        rx.el.label(
            rx.text("How long", size="1", weight="medium"),
            rx.el.select(*[rx.el.option(label, value=d) for d, label in DURATIONS.items()], name="duration",
                         default_value=DEFAULT_DURATION, class_name="ic-input ic-select",
                         custom_attrs={"data-testid": "rule-duration"}),
            class_name="ic-rule-duration",
        ),
        rx.button("Allow similar calls", type="submit", size="1", disabled=state.submitting,
                  custom_attrs={"data-testid": "rule-save"}),
        on_submit=state.save_rule, class_name="ic-rule-editor",
        custom_attrs={"data-testid": "rule-editor", "aria-label": "Allow similar calls"},
    )
    return rx.cond(card.rememberable, rx.box(
        rx.button("Allow similar…", type="button", size="1", variant="outline", color_scheme="gray",
                  high_contrast=True, disabled=state.submitting, class_name="ic-fold-toggle-button",
                  custom_attrs={"data-testid": "interrupt-allow-similar", "data-ic-toggle": "true",
                                "aria-expanded": "false"}),
        editor,
        class_name="ic-similar", custom_attrs={"data-ic-fold": "true", "data-open": "false"},
    ))
