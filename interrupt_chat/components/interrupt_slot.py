"""The interrupt slot: ``SlotProps`` handed to custom renderers, and the default slot (S22).

The default slot draws one card per open interrupt from ``InterruptState.cards`` (see
:mod:`interrupt_chat.model.cards`): Approve / Reject, edit-and-approve, a form built from the
``responseSchema``, Cancel, and a live expiry countdown. Form inputs are uncontrolled: a typed
secret goes from the form submit straight to ``resolve`` and never into a var (S23).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import reflex as rx

from ..assembly.state import InterruptState
from .page_vars import js_var as _js
from .people import people_line
from .risk import risk_note
from .rule_editor import rule_editor
from .say_no import reject_options, reject_reason, rejection

__all__ = ["SlotProps", "default_slot", "interrupt_card", "slot_container"]



@dataclass(frozen=True)
class SlotProps:
    """What a ``render_fn`` receives (the useInterrupt render props, as Vars and event handlers).

    Bound to one set: the chat's shown set in the chat, one waiting thread's set in the inbox (each row
    its own). Read the set through these, never through the configuration's vars (the inbox refuses them).

    Attributes:
        state: the configuration's ``InterruptState`` subclass.
        event: ``{"name": "on_interrupt", "value": ...}`` (S19).
        interrupt: the first interrupt of the set not answered yet (the first once all are); None (legacy).
        interrupts: the whole open set.
        result: what the configuration's ``handler`` returned (S17); None in the inbox.
        cards: one view model per open interrupt (prompt, kind, fields, expiry, ``answered``…).
        waiting: how many interrupts of the set still wait for an answer.
        answered: how many are answered (the set resumes when none waits).
        error: why the last answer to ``interrupt`` was refused ("" when none was).
        rememberable: ``interrupt`` is a tool approval a rule may answer (``remember`` works on it).
        submitting: the answers are being sent (False in the inbox).
        resolve: ``resolve(payload=None, interrupt_id=None, shown=None)`` -> an event; without an id:
            ``interrupt``. ``shown``: the card's ``call_hash`` the answer was given to (optional; §6.4).
        cancel: ``cancel(interrupt_id=None)`` -> an event; without an id: ``interrupt``.
        remember: ``remember(scope, effect, interrupt_id=None)`` -> an event: make the rule ("thread" |
            "always", "allow" | "deny") and answer as Approve / Reject would; without an id: ``interrupt``.
    """

    state: type[InterruptState]
    event: Any
    interrupt: Any
    interrupts: Any
    result: Any
    cards: Any
    resolve: Callable[..., Any]
    cancel: Callable[..., Any]
    waiting: Any = None
    answered: Any = None
    error: Any = None
    rememberable: Any = None
    submitting: Any = None
    remember: Callable[..., Any] | None = None

    @classmethod
    def bound(cls, state: type[InterruptState], event: Any, interrupt: Any, interrupts: Any, result: Any,
              cards: Any, run_id: Any, submitting: Any, answer: Callable[[str, Any, Any, Any], Any],
              remember: Callable[[Any, Any, str, str], Any]) -> SlotProps:
        """Props of one set whose ``interrupt`` is its first unanswered one (the chat's and the inbox's).

        ``answer(verb, payload, interrupt_id, shown)`` and ``remember(interrupt_id, run_id, scope, effect)`` build
        events; ``shown`` is None when the slot gave no hash (the event then leaves it out, as before).
        """
        interrupts = interrupts.to(list[dict[str, Any]])
        first_card = _js(f"({cards}?.find((ic_c) => !ic_c?.answered))", dict[str, Any], cards)
        first = _js(f"(({interrupts} ?? []).find((ic_i) => ic_i?.id === {first_card}?.id) ?? {interrupt})",
                    dict[str, Any], interrupts, first_card, interrupt)
        first_id = _js(f"({first}?.id ?? null)", str, first)
        waiting = _js(f"(({cards} ?? []).filter((ic_c) => !ic_c?.answered).length)", int, cards)
        answered = _js(f"(({cards} ?? []).filter((ic_c) => !!ic_c?.answered).length)", int, cards)

        def target(interrupt_id: Any) -> Any:
            return first_id if interrupt_id is None else interrupt_id

        def remember_event(scope: str, effect: str, interrupt_id: Any = None) -> Any:
            if scope not in ("thread", "always") or effect not in ("allow", "deny"):
                raise ValueError(f"slot.remember(scope, effect): scope is 'thread' or 'always', effect 'allow' or "
                                 f"'deny', not {scope!r}, {effect!r}")
            return remember(target(interrupt_id), run_id, scope, effect)

        return cls(state=state, event=event.to(dict[str, Any]), interrupt=first, interrupts=interrupts,
                   result=result, cards=cards, waiting=waiting, answered=answered,
                   error=_js(f"({first_card}?.error ?? \"\")", str, first_card),
                   rememberable=_js(f"(!!{first_card}?.rememberable && {first_card}?.reason === \"tool_call\")",
                                    bool, first_card),
                   submitting=submitting,
                   resolve=lambda payload=None, interrupt_id=None, shown=None: answer("resolve", payload,
                                                                                      target(interrupt_id), shown),
                   cancel=lambda interrupt_id=None: answer("cancel", None, target(interrupt_id), None),
                   remember=remember_event)

    @classmethod
    def of(cls, state: type[InterruptState]) -> SlotProps:
        """The props of a configuration in the chat: its vars, and its handlers."""
        props = state.slot_props
        cards = state.cards

        def answer(verb: str, payload: Any, interrupt_id: Any, shown: Any) -> Any:
            if verb != "resolve":
                return state.cancel(interrupt_id)
            args = (payload, interrupt_id) if shown is None else (payload, interrupt_id, shown)
            return state.resolve(*args)

        return cls.bound(state, props["event"], props["interrupt"].to(dict[str, Any]), props["interrupts"],
                         props["result"], cards, _js(f"({cards}?.[0]?.run_id ?? \"\")", str, cards),
                         state.submitting, answer, state.remember_rule)


def slot_container(state: type[InterruptState], body: rx.Component) -> rx.Component:
    """The ``interrupt-slot`` element, present only while slot props are published (S18)."""
    return rx.cond(
        state.slot_props,
        rx.box(body, class_name="ic-slot", custom_attrs={"data-testid": "interrupt-slot"}),
    )


def _testid(name: str, **extra: Any) -> dict[str, Any]:
    return {"data-testid": name, **extra}


def _hidden_id(card: Any) -> rx.Component:
    return rx.fragment(rx.el.input(type="hidden", name="__interrupt_id", value=card.id),
                       rx.el.input(type="hidden", name="__thread_id", value=card.thread_id),
                       rx.el.input(type="hidden", name="__run_id", value=card.run_id))


def _field(field: Any) -> rx.Component:
    name = field.name
    control = rx.match(
        field.type,
        ("boolean", rx.el.input(type="checkbox", name=name, default_checked=field.checked, class_name="ic-check")),
        ("enum", rx.el.select(
            rx.el.option("Choose…", value="", disabled=True),
            rx.foreach(field.options, lambda option: rx.el.option(option, value=option)),
            name=name, default_value=rx.cond(field.default != "", field.default, ""), class_name="ic-input",
        )),
        ("secret", rx.el.input(type="password", name=name, auto_complete="off", class_name="ic-input")),
        ("integer", rx.el.input(type="number", step="1", name=name, default_value=field.default,
                                class_name="ic-input")),
        ("number", rx.el.input(type="number", step="any", name=name, default_value=field.default,
                               class_name="ic-input")),
        ("json", rx.el.textarea(name=name, default_value=field.default, rows=3, class_name="ic-input ic-mono")),
        rx.el.input(type="text", name=name, default_value=field.default, class_name="ic-input"),
    )
    return rx.el.label(
        rx.hstack(rx.text(field.label, size="2", weight="medium"),
                  rx.cond(field.required, rx.text("*", color_scheme="red", high_contrast=True, size="2")), spacing="1"),
        control,
        rx.cond(field.description != "", rx.text(field.description, size="1", color_scheme="gray",
                                                 high_contrast=True)),
        class_name="ic-field",
    )


def _rule_buttons(state: type[InterruptState], card: Any, disabled: Any) -> rx.Component:
    """"Allow in this thread", "Always allow", "Always deny": answer, and remember it (P1; tool approvals only)."""
    def rule(label: str, testid: str, scope: str, effect: str) -> rx.Component:
        return rx.button(label, type="button", size="1", variant="outline", high_contrast=True,
                         color_scheme="red" if effect == "deny" else "gray", disabled=disabled,
                         on_click=state.remember_rule(card.id, card.run_id, scope, effect),
                         custom_attrs=_testid(testid))

    return rx.cond(
        card.rememberable,  # policies.rememberable: a tool approval (tool_call, or a tool-bound confirmation)
        rx.fragment(rule("Allow in this thread", "interrupt-allow-thread", "thread", "allow"),
                    rule("Always allow", "interrupt-allow-always", "always", "allow"),
                    rule("Always deny", "interrupt-deny-always", "always", "deny")),
    )


def _buttons(state: type[InterruptState], card: Any) -> rx.Component:
    """The decision first: Approve / Reject (or Submit), the rule buttons, Cancel, and the time left beside them."""
    disabled = state.submitting  # an expired card stays clickable: the refusal is said in the card (S11)
    cancel = rx.button("Cancel", variant="ghost", color_scheme="gray", type="button",
                       on_click=state.cancel(card.id), disabled=state.submitting,
                       custom_attrs=_testid("interrupt-cancel"))
    # every answer names the call it was given to (card.call_hash): one for a call that changed is refused
    approve_reject = rx.fragment(
        rx.button("Approve", type="button", on_click=state.resolve({"approved": True}, card.id, card.call_hash),
                  disabled=disabled, custom_attrs=_testid("interrupt-approve")),
        rx.button("Reject", type="button", color_scheme="red", variant="soft", high_contrast=True,
                  on_click=state.resolve(rejection(card), card.id, card.call_hash), disabled=disabled,
                  custom_attrs=_testid("interrupt-reject")),
        _rule_buttons(state, card, disabled),
        rule_editor(state, card),
        rx.cond(card.reason_box, rx.box(  # saying why: typed, or one of the agent's own reasons
            reject_reason(card, disabled),
            reject_options(card, lambda option: state.resolve({"approved": False, "reason": option}, card.id,
                                                              card.call_hash), disabled),
            class_name="ic-say-no")),
    )
    return rx.hstack(
        rx.match(card.kind,
                 ("form", rx.button("Submit", type="submit", disabled=disabled,
                                    custom_attrs=_testid("interrupt-submit"))),
                 ("steps", rx.button("Go on with the ticked steps", type="submit", disabled=disabled,
                                     custom_attrs=_testid("interrupt-steps-submit"))),
                 ("choice", rx.fragment()),
                 approve_reject),
        cancel, rx.spacer(), _expiry(card),
        spacing="2", align="center", width="100%", wrap="wrap", class_name="ic-actions",
    )


def _edit(state: type[InterruptState], card: Any) -> rx.Component:
    """The "Edit arguments" form: folded to one line until opened (or focused); its textarea stays a control."""
    return rx.form(
        _hidden_id(card),
        rx.box(
            rx.el.button("Edit arguments", type="button", class_name="ic-summary ic-fold-toggle",
                         custom_attrs={"data-ic-toggle": "true", "aria-expanded": "false"}),
            rx.el.textarea(name="edited_args", default_value=card.edit_args, rows=6,
                           class_name="ic-input ic-mono",
                           custom_attrs=_testid("interrupt-edit-args", **{"aria-label": "Tool arguments (JSON)"})),
            rx.button("Approve with edits", type="submit", size="1", variant="soft", class_name="ic-fold-more",
                      disabled=state.submitting, custom_attrs=_testid("interrupt-approve-edited")),
            class_name="ic-edit", custom_attrs={"data-ic-fold": "true", "data-open": "false"},
        ),
        on_submit=state.approve_edited,
    )


def _choices(state: type[InterruptState], card: Any) -> rx.Component:
    """A legacy value's ``options``: one button each, answering with that option (as the dojo does)."""
    return rx.vstack(
        rx.foreach(card.choices, lambda choice, index: rx.button(
            rx.vstack(rx.text(choice.label, weight="medium"),
                      rx.cond(choice.detail != "", rx.text(choice.detail, size="1")), spacing="0", align="start"),
            rx.cond(choice.recommended, rx.badge("recommended", variant="solid", size="1", high_contrast=True)),
            type="button", variant=rx.cond(choice.recommended, "solid", "surface"), size="3",
            on_click=state.resolve(choice.payload, card.id, card.call_hash), disabled=state.submitting,
            class_name="ic-choice",
            custom_attrs=_testid("interrupt-option", **{"data-index": index.to(str),
                                                        "data-recommended": rx.cond(choice.recommended, "true",
                                                                                    "false")}))),
        spacing="2", width="100%", align="stretch",
    )


def _steps(state: type[InterruptState], card: Any) -> rx.Component:
    """A legacy value's ``steps`` as a checklist: the ticked ones are the answer (the dojo's sentence)."""
    return rx.form(
        _hidden_id(card),
        rx.el.input(type="hidden", name="__steps", value="1"),
        rx.foreach(card.steps, lambda step, index: rx.el.label(
            rx.el.input(type="hidden", name="step-desc-" + index.to(str), value=step.description),
            rx.el.input(type="checkbox", name="step-" + index.to(str), default_checked=step.enabled,
                        custom_attrs=_testid("interrupt-step")),
            rx.text.span(step.description), class_name="ic-step")),
        _buttons(state, card),
        on_submit=state.submit_form, class_name="ic-form",
    )


def _arg(row: Any) -> rx.Component:
    value = rx.cond(row.long,
                    rx.el.details(rx.el.summary(row.value.to(str)[:60], "…", class_name="ic-summary"),
                                  rx.el.pre(row.value, class_name="ic-args")),
                    rx.text(row.value, as_="span", class_name="ic-arg-value"))
    return rx.fragment(rx.el.dt(row.key, class_name="ic-arg-key"), rx.el.dd(value, class_name="ic-arg"))


def _tool(card: Any) -> rx.Component:
    """The tool and its arguments, readable: one line per argument, long values folded, the JSON on demand."""
    return rx.cond(
        (card.tool_name != "") | (card.args.length() > 0),
        rx.box(
            rx.cond(card.tool_name != "", rx.text("Tool: ", rx.code(card.tool_name, high_contrast=True), size="1",
                                                   color_scheme="gray", high_contrast=True)),
            rx.cond(card.args.length() > 0, rx.fragment(
                rx.el.dl(rx.foreach(card.args, _arg), class_name="ic-args-list"),
                rx.el.details(rx.el.summary("JSON", class_name="ic-summary"), rx.el.pre(card.args_json,
                                                                                       class_name="ic-args")),
            )),
            class_name="ic-card-tool",
        ),
    )


def _expiry(card: Any) -> rx.Component:
    return rx.cond(
        card.expires_at != "",
        rx.cond(
            card.expired,
            rx.badge("expired", color_scheme="red", variant="soft", high_contrast=True,
                     custom_attrs=_testid("interrupt-expiry")),
            rx.badge(rx.text.span("expires in ", card.seconds_left.to_string(), "s"), color_scheme="amber",
                     variant="soft", high_contrast=True, custom_attrs=_testid("interrupt-expiry")),
        ),
    )


def _read_only(state: type[InterruptState], card: Any) -> rx.Component:
    """A request the viewer may not decide (§6.2): what it asks, and "Withdraw" (a cancel) beside the time left."""
    withdraw = rx.button("Withdraw", variant="ghost", color_scheme="gray", type="button",
                         on_click=state.cancel(card.id), disabled=state.submitting,
                         custom_attrs=_testid("interrupt-cancel"))
    return rx.vstack(
        rx.hstack(withdraw, rx.spacer(), _expiry(card), spacing="2", align="center", width="100%", wrap="wrap",
                  class_name="ic-actions"),
        _tool(card), spacing="2", width="100%",
    )


def _body(state: type[InterruptState], card: Any) -> rx.Component:
    """The decision by the card's kind, then what it is about; read-only when the viewer may not decide."""
    return rx.cond(card.can_decide, rx.match(
        card.kind,
        ("form", rx.vstack(rx.form(_hidden_id(card), rx.foreach(card.fields, _field), _buttons(state, card),
                                   on_submit=state.submit_form, class_name="ic-form"), _tool(card),
                           spacing="2", width="100%")),
        ("edit", rx.vstack(_buttons(state, card), _tool(card), _edit(state, card), spacing="2", width="100%")),
        ("choice", rx.vstack(_choices(state, card), _buttons(state, card), _tool(card), spacing="2", width="100%")),
        ("steps", rx.vstack(_steps(state, card), _tool(card), spacing="2", width="100%")),
        rx.vstack(_buttons(state, card), _tool(card), spacing="2", width="100%"),
    ), _read_only(state, card))


def interrupt_card(state: type[InterruptState], card: Any, *, aside: rx.Component | None = None) -> rx.Component:
    """One open interrupt: the question, the decision, then what it is about (S11, S22).

    Its risk (§6.4), the prompt; who it waits for and its approvals (§6.2, a chat with people; then
    ``aside``); Approve / Reject (or the form and Submit), the rule buttons and "Allow similar…", the
    reject reason and options, Cancel and the time left; the tool and its arguments; "Edit arguments"
    folded; validation errors in place. A viewer who may not decide (``data-can-decide="false"``)
    gets the prompt, the arguments and "Withdraw" only. Approve, Reject and the reject options send
    ``state.resolve(payload, card.id, card.call_hash)``; "Allow similar" submits to ``state.save_rule``.
    """
    header = rx.hstack(
        rx.icon("hand", size=16),
        # a heading the page moves focus to when the set surfaces (behaviour.py); agent text, as text (S24)
        rx.heading(card.prompt, as_="h2", size="3", weight="medium", class_name="ic-prompt",
                   custom_attrs=_testid("interrupt-prompt", tabIndex="-1")),
        rx.spacer(),
        rx.cond(card.named, rx.badge("from ", card.source, variant="soft", color_scheme="gray",
                                            high_contrast=True, size="1", custom_attrs=_testid("interrupt-source"))),
        rx.cond(card.answered != "", rx.badge(card.answered, variant="outline", high_contrast=True, size="1")),
        align="center", width="100%",
    )
    return rx.box(
        risk_note(card),  # first: a high risk is read before anything is decided
        header,
        people_line(card, *([aside] if aside is not None else [])),
        _body(state, card),
        rx.cond(card.error != "", rx.callout(card.error, color_scheme="red", size="1", icon="triangle_alert",
                                                high_contrast=True,
                                                custom_attrs=_testid("interrupt-error", role="alert"))),
        class_name="ic-card",
        custom_attrs={"data-testid": "interrupt-card", "data-interrupt-id": card.id, "data-reason": card.reason,
                      "data-source": card.source, "data-can-decide": rx.cond(card.can_decide, "true", "false"),
                      "data-expired": rx.cond(card.expired, "true", "false"), "data-answered": card.answered},
    )


def default_slot(state: type[InterruptState]) -> rx.Component:
    """Renders any interrupt, whatever its reason (S22): one card per open interrupt."""
    return rx.vstack(rx.foreach(state.cards, lambda card: interrupt_card(state, card)), spacing="3", width="100%",
                     class_name="ic-cards")
