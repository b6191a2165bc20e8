"""Rules that remember a decision: "allow in this thread", "always allow", "always deny" (docs/semantics.md P1–P5).

Framework-free. A rule names a tool, a scope (``thread`` or ``always``) and an effect (``allow``
or ``deny``). When a set surfaces, :func:`answers_for` says which of its interrupts the owner's
rules answer, and with what: exactly the payload the card's own Approve or Reject sends
(:func:`approval_payload`). A rule answers a tool approval and nothing else: never a form, a
credential, or an interrupt whose schema asks for more than the approval itself.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ag_ui.core import Interrupt

from ..agui import Pending, Transcript
from ..agui.interrupts import holds_secret, is_expired
from .forms import FormError, approval_kind, validate_payload

__all__ = ["EFFECTS", "SCOPES", "RememberFn", "Rule", "RuleAnswer", "answers_for", "approval_payload", "match",
           "remember_fn", "rememberable", "tool_name"]

EFFECTS = ("allow", "deny")
SCOPES = ("thread", "always")
TOOL_CALL = "tool_call"
CONFIRMATION = "confirmation"

RememberFn = Callable[[str, Interrupt], bool]


@dataclass(frozen=True)
class Rule:
    """One remembered decision of an owner.

    Attributes:
        id: the rule's id in the database.
        tool: the tool it answers for.
        scope: ``thread`` (only in ``thread_id``) or ``always`` (every thread of the owner).
        effect: ``allow`` (answer as Approve does) or ``deny`` (as Reject does).
        thread_id: the thread of a ``thread`` rule ("" for ``always``).
        created_at: when the person made it.
    """

    id: int
    tool: str
    scope: str
    effect: str
    thread_id: str = ""
    created_at: datetime | None = None

    def covers(self, tool: str, thread_id: str) -> bool:
        """Whether this rule speaks for ``tool`` in ``thread_id``."""
        return self.tool == tool and (self.scope == "always" or self.thread_id == thread_id)

    def describe(self) -> str:
        """The rule in words, as the transcript's note and the policy list say it."""
        if self.scope == "thread":
            return "allow in this thread" if self.effect == "allow" else "deny in this thread"
        return "always allow" if self.effect == "allow" else "always deny"


@dataclass(frozen=True)
class RuleAnswer:
    """An interrupt a rule answers: the payload to record, and what to say about it."""

    interrupt_id: str
    tool: str
    rule: Rule
    payload: dict[str, Any]
    tool_call_id: str = ""


def tool_name(interrupt: Interrupt, transcript: Transcript | None) -> str:
    """The tool an interrupt asks about ("" when it names none).

    In order: the call Google ADK's confirmation asks about (``metadata.adk.originalFunctionCall.name``: its
    ``toolCallId`` is ADK's own ``adk_request_confirmation`` call), the ``toolCallId``'s call, else
    ``metadata.tool_name``.
    """
    metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
    adk = metadata.get("adk")
    original = adk.get("originalFunctionCall") if isinstance(adk, dict) else None
    if isinstance(original, dict) and isinstance(original.get("name"), str) and original["name"]:
        return str(original["name"])
    call = transcript.tool_calls.get(interrupt.tool_call_id) if transcript and interrupt.tool_call_id else None
    if call is not None and call.name:
        return call.name
    name = metadata.get("tool_name")
    return name if isinstance(name, str) else ""


def approval_payload(interrupt: Interrupt, effect: str) -> dict[str, Any] | None:
    """What the card's Approve (``allow``) or Reject (``deny``) sends, if the interrupt is a plain approval.

    A plain approval asks for a decision and nothing else a person must type: its schema has a boolean
    ``approved``, the answer ``{"approved": <decision>}`` fits it, and every other property is optional
    (pydantic-ai's ``reason`` and ``editedArgs``, Microsoft Agent Framework's ``accepted`` and per-argument
    edits) or required with a ``default``, which the answer then carries. An interrupt without a schema
    is answered ``{"approved": <decision>}`` too (Google ADK's confirmation).

    None when it is not: a form (``input_required``), a masked field anywhere, a required property
    without a default (a required ``editedArgs``, say), or a schema the answer does not fit.
    """
    if interrupt.reason == "input_required":
        return None
    schema = interrupt.response_schema
    payload: dict[str, Any] = {"approved": effect == "allow"}
    if schema is None:
        return payload
    if not isinstance(schema, dict) or holds_secret(schema):  # a secret anywhere is a person's to type (S23)
        return None
    props = schema.get("properties")
    if props is not None and (not isinstance(props, dict) or approval_kind(schema) == "form"):
        return None
    required = schema.get("required")
    if required is not None and not isinstance(required, list):
        return None
    for name in map(str, required or ()):
        if name == "approved":
            continue
        prop = props.get(name) if isinstance(props, dict) else None
        if not isinstance(prop, dict) or "default" not in prop:
            return None  # the schema asks for more than the decision: a person answers it
        payload[name] = prop["default"]
    try:
        validate_payload(schema, payload)
    except FormError:
        return None
    return payload


def rememberable(interrupt: Interrupt, tool: str, remember: RememberFn) -> bool:
    """Whether a rule may answer this interrupt: a tool approval with a tool name the app lets be remembered.

    A tool approval: ``reason: "tool_call"``, or a ``confirmation`` bound to a tool call (its ``toolCallId``:
    Google ADK's). A confirmation that names no call (a LangGraph node's ``interrupt()``) is not one.
    """
    tool_bound = interrupt.reason == TOOL_CALL or (interrupt.reason == CONFIRMATION and bool(interrupt.tool_call_id))
    return (tool_bound and bool(tool) and approval_payload(interrupt, "allow") is not None
            and bool(remember(tool, interrupt)))


def remember_fn(remember: Collection[str] | RememberFn | None) -> RememberFn:
    """``ic.chat(remember=...)`` as a function: None (every tool), a collection of names, or the app's function."""
    if remember is None:
        return lambda _tool, _interrupt: True
    if callable(remember):
        return remember
    names = frozenset(remember)
    return lambda tool, _interrupt: tool in names


def match(rules: Sequence[Rule], tool: str, thread_id: str) -> Rule | None:
    """The rule that speaks for ``tool`` here: a thread rule before an always rule, a deny before an allow."""
    found = [rule for rule in rules if rule.covers(tool, thread_id)]
    found.sort(key=lambda rule: (rule.scope != "thread", rule.effect != "deny", -rule.id))
    return found[0] if found else None


def answers_for(pending: Pending | None, answered: Collection[str], transcript: Transcript | None,
                rules: Sequence[Rule], thread_id: str, remember: RememberFn, now: datetime) -> list[RuleAnswer]:
    """The open interrupts of ``pending`` that the rules answer, in the set's order.

    ``answered``: interrupt ids that have their answer already. An expired interrupt is left to
    the person (it can only be cancelled, S11); a legacy set is never answered by a rule.
    """
    if pending is None or pending.kind != "standard" or not rules:
        return []
    out = []
    for interrupt in pending.interrupts:
        if interrupt.id in answered or is_expired(interrupt, now):
            continue
        tool = tool_name(interrupt, transcript)
        if not rememberable(interrupt, tool, remember):
            continue
        rule = match(rules, tool, thread_id)
        payload = approval_payload(interrupt, rule.effect) if rule is not None else None
        if rule is not None and payload is not None:
            out.append(RuleAnswer(interrupt.id, tool, rule, payload, interrupt.tool_call_id or ""))
    return out
