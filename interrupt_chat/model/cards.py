"""View models for the default interrupt slot: one plain-dict card per open interrupt (S22, S11).

Framework-free. A card says what to draw (prompt, approve/edit/form/confirm, fields, prefilled
arguments) and its live status (answered, expired, seconds left, error). Secrets never enter a
card: fields carry no typed values, and a field holding a secret at any depth is a masked input (S23).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ag_ui.core import Interrupt

from ..agui import InterruptTracker, Pending, Transcript, interrupt_dict, parse_expiry
from ..agui.sanitize import short_text
from .forms import approval_kind, fields_of, whole_answer
from .policies import RememberFn, approval_payload, rememberable, tool_approval, tool_name

__all__ = ["REASON_MAX", "STEPS_ANSWER", "ArgRow", "Card", "Choice", "FormField", "StepItem", "arg_rows", "build_cards",
           "call_hash", "legacy_fields", "legacy_view", "prompt_of", "refresh_expiry", "shown_hash",
           "steps_answer"]


@dataclass
class FormField:
    """One input of a schema form (see :func:`interrupt_chat.model.forms.fields_of`)."""

    name: str
    label: str
    description: str
    type: str  # boolean | enum | string | number | integer | secret | json
    options: list[str]
    required: bool
    default: str
    checked: bool


@dataclass
class ArgRow:
    """One argument of a tool call as the card lists it: its name and value as text; ``long`` ones are folded."""

    key: str
    value: str
    long: bool = False


LONG_VALUE = 80  # characters: a longer value is folded in the card


@dataclass
class Choice:
    """One of a legacy value's ``options``: what the button says, and the answer it sends (as the dojo does)."""

    label: str
    detail: str  # the option's other fields on one line
    payload: str  # the option JSON-encoded (a string option: itself)
    recommended: bool = False


@dataclass
class StepItem:
    """One of a legacy value's ``steps`` (``{description, status}`` or a string): ticked when enabled."""

    description: str
    enabled: bool = True


STEPS_ANSWER = "The user selected the following steps: "  # what the dojo's LangGraph page answers


@dataclass
class Card:
    """One open interrupt as the default slot draws it. ``kind``: approve | edit | form | confirm."""

    id: str
    reason: str
    prompt: str
    kind: str
    fields: list[FormField] = field(default_factory=list)
    edit_args: str = ""
    tool_name: str = ""
    expires_at: str = ""
    seconds_left: int = -1
    expired: bool = False
    answered: str = ""  # "", "resolved" or "cancelled" (S7: waiting for the others)
    error: str = ""
    thread_id: str = ""  # the approvals inbox: the thread it belongs to, its title, when it was raised
    thread_title: str = ""
    raised: str = ""
    run_id: str = ""  # the run that raised the set: an answer to a set that moved on is refused
    rememberable: bool = False  # a tool approval a rule may answer: the card offers "always allow" & co (P1)
    args: list[ArgRow] = field(default_factory=list)  # the tool call's arguments, readable
    args_json: str = ""  # the same as JSON (shown on demand)
    args_summary: str = ""  # the arguments on one line (the inbox's row)
    key: str = ""  # the inbox's name for it (its selection)
    plain: bool = False  # a plain approval: Approve / Reject is all it asks (bulk decisions may answer it)
    source: str = ""  # who asks: a sub-agent, a subgraph's node, the step (:func:`source_of`)
    named: bool = False  # ``source`` is an agent or node: the card says "from <source>"
    choices: list[Choice] = field(default_factory=list)  # kind "choice": a legacy value's options
    steps: list[StepItem] = field(default_factory=list)  # kind "steps": a legacy value's steps, as a checklist
    # people (Chat(people=...), docs/decisions/0025): who it waits for, and whether the viewer may decide it
    routed: bool = False  # the chat has people: the card says who it waits for (request-assignee)
    assignee: str = ""  # the assignees' ids and role:<name>, space-separated (data-assignee)
    assignee_names: str = ""  # the same as the card says them ("Bob, finance")
    can_decide: bool = True  # False: read-only for the viewer (no approve, reject, rule or form controls)
    need: int = 0  # distinct approvals it needs (approval-progress when more than 1)
    have: int = 0  # approvals so far
    approvers: str = ""  # who approved so far, by name
    reassignable: bool = False  # the viewer is one of its assignees: the inbox offers reassign
    asker: str = ""  # who asked, by name (an inbox row of someone else's request)
    # rules that fit (issue 43): what the person was shown, how risky it is, and how to say no with a reason
    call_hash: str = ""  # :func:`call_hash` of the shown call: an answer names it, so one for another call is refused
    risk_level: str = ""  # "" | low | medium | high (filled by the approvals' annotate hook: policy file, Chat(risk=))
    risk_why: str = ""  # the risk's rationale (interrupt-risk's text)
    reason_box: bool = False  # a tool approval whose schema takes a string ``reason``: Reject sends the typed one
    reject_options: list[str] = field(default_factory=list)  # the interrupt's ``rejectOptions``: one button each

_INTERRUPT_KEYS = {"message", "responseSchema", "reason", "toolCallId", "expiresAt", "metadata"}
_SHOWN_KEYS = {*_INTERRUPT_KEYS, "question", "options", "steps", "agent", "recommendation"}
_LABEL_KEYS = ("label", "title", "name", "airline", "description")


def _choice(option: Any, recommended: Any) -> Choice:
    if not isinstance(option, dict):
        text = option if isinstance(option, str) else json.dumps(option, ensure_ascii=False)
        return Choice(short_text(text, 120), "", text, option == recommended)
    key = next((k for k in _LABEL_KEYS if isinstance(option.get(k), str) and option[k].strip()), None)
    rest = {k: v for k, v in option.items() if k != key}
    return Choice(short_text(option[key] if key else json.dumps(option, ensure_ascii=False), 120),
                  summary(arg_rows(rest), 160) if key else "", json.dumps(option, ensure_ascii=False),
                  option == recommended)


def _step(step: Any) -> StepItem:
    if isinstance(step, dict):
        return StepItem(short_text(step.get("description") or "", 200), step.get("status") != "disabled")
    return StepItem(short_text(step, 200))


def legacy_view(card: Card, value: Any) -> Card:
    """A legacy value shown whatever its keys (issue 26 §5).

    ``options`` become choices, ``steps`` a checklist, the rest key / value rows; the prompt is ``message``
    or ``question`` (already), else says what to do.
    """
    if not isinstance(value, dict):
        return card
    options, steps = value.get("options"), value.get("steps")
    if isinstance(options, list) and options and card.kind != "form":
        card = replace(card, kind="choice", choices=[_choice(o, value.get("recommendation")) for o in options[:50]])
    elif isinstance(steps, list) and steps and card.kind != "form":
        card = replace(card, kind="steps", steps=[_step(s) for s in steps[:100]])
    rest = {k: v for k, v in value.items() if k not in _SHOWN_KEYS}
    if rest and not card.args:
        card = replace(card, args=arg_rows(rest), args_json=json.dumps(rest, indent=2, ensure_ascii=False))
    if not (value.get("message") or value.get("question")):
        prompt = {"choice": "Choose one.", "steps": "Review the steps, then go on."}.get(card.kind, card.prompt)
        card = replace(card, prompt=prompt)
    return card


def steps_answer(form: dict[str, Any]) -> str:
    """A steps checklist's answer from its form (``step-desc-<i>``, ticked ``step-<i>``), as the dojo says it."""
    count = sum(1 for key in form if str(key).startswith("step-desc-"))
    ticked = [str(form.get(f"step-desc-{i}") or "") for i in range(count) if form.get(f"step-{i}")]
    return STEPS_ANSWER + ", ".join(ticked)


def legacy_fields(value: Any) -> dict[str, Any]:
    """Interrupt fields carried by a legacy ``on_interrupt`` value (S22); a string is the prompt."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k in _INTERRUPT_KEYS or k == "question"}
    if isinstance(value, str):
        return {"message": value}
    return {"message": json.dumps(value, default=str)}


def prompt_of(fields: dict[str, Any]) -> str:
    """``message``, else "Approve call to <metadata.tool_name>?", else the reason (S22)."""
    message = fields.get("message") or fields.get("question")
    if isinstance(message, str) and message.strip():
        return message
    metadata = fields.get("metadata")
    if isinstance(metadata, dict) and metadata.get("tool_name"):
        return f"Approve call to {metadata['tool_name']}?"
    return str(fields.get("reason") or "The agent is waiting for your answer.")


def source_of(fields: dict[str, Any], value: Any = None, step: str | None = None) -> tuple[str, bool]:
    """Who asks (``data-source``), and whether it is an agent or node (the card names it) rather than a step.

    In order: the metadata's ``source`` / ``agent``, the value's ``agent`` (LangGraph's raw value, or a legacy
    value), the LangGraph namespace's innermost node, else the run's last step; ("", False) if none.
    """
    def obj(candidate: Any) -> dict[str, Any]:
        return candidate if isinstance(candidate, dict) else {}

    metadata = obj(fields.get("metadata"))
    langgraph = obj(metadata.get("langgraph"))
    raw = obj(langgraph.get("raw")) or obj(value)
    namespace = langgraph.get("ns")
    node = ""
    if isinstance(namespace, list) and namespace and isinstance(namespace[-1], str):
        node = namespace[-1].split(":", 1)[0]  # "flights_agent:<task id>"
    for found in (metadata.get("source"), metadata.get("agent"), raw.get("agent"), node):
        if isinstance(found, str) and found.strip():
            return short_text(found, 60), True
    return (short_text(step, 60), False) if step and step.strip() else ("", False)


def _tool_input(fields: dict[str, Any], transcript: Transcript | None) -> Any:
    """The tool call's arguments (from the transcript, else ``metadata.tool_input``); None when there are none."""
    call_id = fields.get("toolCallId")
    call = transcript.tool_calls.get(call_id) if transcript and call_id else None
    args: Any = call.args if call is not None else None
    if args is None and isinstance(fields.get("metadata"), dict):
        args = fields["metadata"].get("tool_input")
    return args


def summary(rows: list[ArgRow], limit: int = 100) -> str:
    """The arguments on one line: ``name=value, …``, cut at ``limit`` characters."""
    text = ", ".join(f"{row.key}={' '.join(row.value.split())}" for row in rows)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


ONE_LINE_ARGS = 80  # characters: arguments this short are edited on one line (the folded editor shows them whole)


def tool_args(fields: dict[str, Any], transcript: Transcript | None) -> str:
    """The tool call's arguments as JSON to edit (from the transcript, else ``metadata.tool_input``).

    On one line when that is short enough, else pretty-printed.
    """
    args = _tool_input(fields, transcript)
    args = args if args is not None else {}
    flat = json.dumps(args, ensure_ascii=False)
    return flat if len(flat) <= ONE_LINE_ARGS else json.dumps(args, indent=2, ensure_ascii=False)


def arg_rows(args: Any) -> list[ArgRow]:
    """The arguments as name / value rows (an object's keys; anything else is one row named "value")."""
    if args is None:
        return []
    items = args.items() if isinstance(args, dict) else [("value", args)]
    rows = []
    for key, value in items:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        rows.append(ArgRow(str(key), text, len(text) > LONG_VALUE or "\n" in text))
    return rows


def _card(card_id: str, fields: dict[str, Any], transcript: Transcript | None, now: datetime) -> Card:
    schema = fields.get("responseSchema")
    # a schema that is itself a secret (S23) is a form of one masked field, not Approve / Reject
    asks = isinstance(schema, dict) and (bool(schema.get("properties")) or whole_answer(schema))
    kind = approval_kind(schema) if asks else "confirm"
    call_id = fields.get("toolCallId")
    call = transcript.tool_calls.get(call_id) if transcript and call_id else None
    metadata = fields.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    card = Card(
        id=card_id,
        reason=str(fields.get("reason") or ""),
        prompt=prompt_of(fields),
        kind=kind,
        fields=[FormField(**f) for f in fields_of(schema)] if kind == "form" else [],
        edit_args=tool_args(fields, transcript) if kind == "edit" else "",
        tool_name=call.name if call else str(metadata.get("tool_name") or ""),
        expires_at=str(fields.get("expiresAt") or ""),
    )
    if kind != "form" and (args := _tool_input(fields, transcript)) is not None:
        card.args, card.args_json = arg_rows(args), json.dumps(args, indent=2, ensure_ascii=False)
        card.args_summary = summary(card.args)
    return refresh_expiry(card, now)


def _last_step(transcript: Transcript | None) -> str | None:
    return transcript.last_step if transcript is not None else None


def refresh_expiry(card: Card, now: datetime) -> Card:
    """A copy with ``seconds_left`` / ``expired`` for the clock (S11: the boundary counts as expired)."""
    moment = parse_expiry(card.expires_at)
    if moment is None:  # no or unparseable expiresAt: never expires (S11); still a copy, as documented
        return replace(card)
    left = (moment - now).total_seconds()
    return replace(card, expired=left <= 0, seconds_left=max(0, int(left + 0.999)))


def call_hash(interrupt_id: str, tool: str, args: Any, message: Any, schema: Any) -> str:
    """The shown call's fingerprint: sha256 (hex, first 32) of its id, tool, arguments, message and schema.

    A pure function of what the card showed: an answer carries it, and the server recomputes it from the
    interrupt that is open now, so an answer given to a call that changed meanwhile is refused.
    """
    shown = {"id": interrupt_id, "tool": tool, "args": args, "message": message, "responseSchema": schema}
    text = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


MAX_REJECT_OPTIONS = 10
REJECT_OPTION_CHARS = 200
REASON_MAX = 2000  # characters of a typed reject reason (the box's limit; the server cuts it there too)


def _takes_string(schema: Any) -> bool:
    """A (sub)schema a string fits: no type, ``string``, or a list of types holding it."""
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    return kind is None or kind == "string" or (isinstance(kind, list) and "string" in kind)


def _takes_reason(schema: Any) -> bool:
    """Whether an answer may carry a string ``reason``: no schema, a ``reason`` property, or open properties."""
    if schema is None:
        return True
    if not isinstance(schema, dict):
        return False
    props = schema.get("properties")
    if isinstance(props, dict) and "reason" in props:
        return _takes_string(props["reason"])
    return _takes_string(schema.get("additionalProperties", True))


def _reject_options(interrupt: Interrupt) -> list[str]:
    """The interrupt's ``rejectOptions`` (top level, else in its metadata): non-empty strings, cut, at most 10."""
    metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
    found = (interrupt.model_extra or {}).get("rejectOptions")
    if not isinstance(found, list):
        found = metadata.get("rejectOptions")
    options: list[str] = []
    for option in found if isinstance(found, list) else ():
        text = option.strip()[:REJECT_OPTION_CHARS] if isinstance(option, str) else ""
        if text and text not in options:
            options.append(text)
    return options[:MAX_REJECT_OPTIONS]


def shown_hash(interrupt: Interrupt, transcript: Transcript | None, tool: str | None = None) -> str:
    """:func:`call_hash` of an open interrupt, as its card shows it (the tool and arguments it names).

    ``tool``: its tool name when the caller has it (else found as the card finds it).
    """
    tool = tool_name(interrupt, transcript) if tool is None else tool
    args = _tool_input(interrupt_dict(interrupt), transcript)
    return call_hash(interrupt.id, tool, args, interrupt.message, interrupt.response_schema)


def _answer_fields(card: Card, interrupt: Interrupt, tool: str, transcript: Transcript | None) -> None:
    """The shown call's hash, and (a plain tool approval whose schema takes a reason) the reason box and options."""
    card.call_hash = shown_hash(interrupt, transcript, tool)
    card.reason_box = tool_approval(interrupt) and _takes_reason(interrupt.response_schema)
    card.reject_options = _reject_options(interrupt) if card.reason_box else []


def build_cards(pending: Pending | None, tracker: InterruptTracker, transcript: Transcript | None,
                hide: Collection[str] = (), remember: RememberFn | None = None) -> list[Card]:
    """One card per open interrupt; a legacy set gets one card with an empty id.

    ``hide``: interrupts not to draw (a policy answered them: only the rest is shown, P2).
    ``remember``: which tools the app lets a rule remember (``rememberable`` cards offer the rule buttons).
    """
    if pending is None:
        return []
    now = tracker.now()
    if pending.kind == "legacy":
        fields = legacy_fields(pending.event["value"])
        fields.setdefault("reason", "on_interrupt")
        source, named = source_of(fields, pending.event["value"], _last_step(transcript))
        card = replace(_card("", fields, transcript, now), run_id=pending.run_id or "", source=source, named=named)
        card = legacy_view(card, pending.event["value"])
        return [replace(card, plain=card.kind not in ("form", "choice", "steps"))]
    answers = tracker.answers
    # every one answered, and no resume on its way: the resume failed (S15), the set is offered again as new
    offered_again = not tracker.sealed and all(i.id in answers for i in pending.interrupts)
    cards = []
    for interrupt in pending.interrupts:
        if interrupt.id in hide:
            continue
        card = _card(interrupt.id, interrupt_dict(interrupt), transcript, now)
        tool = tool_name(interrupt, transcript)
        card.rememberable = remember is not None and rememberable(interrupt, tool, remember)
        card.plain = approval_payload(interrupt, "allow") is not None
        _answer_fields(card, interrupt, tool, transcript)
        answer = answers.get(interrupt.id)
        card.answered = answer.status if answer and not offered_again else ""
        card.run_id = pending.run_id or ""
        card.source, card.named = source_of(interrupt_dict(interrupt), None, _last_step(transcript))
        cards.append(card)
    return cards
