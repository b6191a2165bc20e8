"""Rules that remember a decision: "allow in this thread", "always allow", "always deny" (docs/semantics.md P1–P5).

Framework-free. A rule names a tool, a scope (``thread`` or ``always``) and an effect (``allow``
or ``deny``), and may narrow itself: argument conditions (:mod:`.conditions`), an expiry, and the
fingerprint of the tool's schema it was made for. When a set surfaces, :func:`surface` is the one
evaluation: the policy file's rules first (:mod:`.policy_file`: deny > ask > allow; shadow rules
only noted), then the person's. A rule answers with exactly the payload the card's own Approve or
Reject sends (:func:`approval_payload`), and answers a tool approval and nothing else: never a form,
a credential, a legacy or expired interrupt, or one whose schema asks for more than the approval.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ag_ui.core import Interrupt

from ..agui import Pending, Transcript
from ..agui.interrupts import holds_secret, is_expired
from . import conditions
from .conditions import When
from .forms import FormError, approval_kind, validate_payload
from .policy_file import FileRule, Risk

__all__ = ["EFFECTS", "SCOPES", "RememberFn", "Rule", "RuleAnswer", "ShadowNote", "Surfacing", "answers_for",
           "approval_payload", "call_args", "fingerprint", "is_tool_approval", "match", "remember_fn",
           "rememberable", "surface", "tool_approval", "tool_name"]

EFFECTS = ("allow", "deny")
SCOPES = ("thread", "always")
TOOL_CALL = "tool_call"
CONFIRMATION = "confirmation"
_STRICTNESS = {"deny": 0, "ask": 1, "allow": 2}  # the most restrictive file rule wins

RememberFn = Callable[[str, Interrupt], bool]


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


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
        conditions: the argument conditions a call must meet (:mod:`.conditions`; empty: every call).
        expires_at: when it stops answering (None: never).
        schema_hash: the :func:`fingerprint` of the tool it was made for ("": any); a changed tool is
            asked about again.
        source: ``person`` (made on a card) or ``file`` (the policy file, shown on ``/policies``).
    """

    id: int
    tool: str
    scope: str
    effect: str
    thread_id: str = ""
    created_at: datetime | None = None
    conditions: When = field(default_factory=dict)
    expires_at: datetime | None = None
    schema_hash: str = ""
    source: str = "person"

    def expired(self, now: datetime) -> bool:
        """Whether the rule has stopped answering at ``now`` (the expiry moment itself counts as expired)."""
        return self.expires_at is not None and _utc(now) >= _utc(self.expires_at)

    def covers(self, tool: str, thread_id: str, args: Any = None, now: datetime | None = None,
               fingerprint: str | None = None) -> bool:
        """Whether this rule speaks for a call of ``tool`` in ``thread_id``.

        Args:
            tool: the tool's name.
            thread_id: the thread the call is in.
            args: the call's arguments (conditions fail on None).
            now: the moment (default: the clock's now) the expiry is judged at.
            fingerprint: the interrupt's :func:`fingerprint` (None: not judged).
        """
        return (self.tool == tool and (self.scope == "always" or self.thread_id == thread_id)
                and conditions.holds(self.conditions, args)
                and not self.expired(now if now is not None else datetime.now(UTC))
                and (not self.schema_hash or fingerprint is None or self.schema_hash == fingerprint))

    def describe(self) -> str:
        """The rule in words, as the transcript's note and the policy list say it.

        For example ``always allow when amount ≤ 100 (until 2026-12-05 14:00 UTC)``.
        """
        if self.scope == "thread":
            text = "allow in this thread" if self.effect == "allow" else "deny in this thread"
        else:
            text = "always allow" if self.effect == "allow" else "always deny"
        if self.conditions:
            text += f" when {conditions.describe(self.conditions)}"
        if self.expires_at is not None:
            text += f" (until {_utc(self.expires_at).astimezone(UTC):%Y-%m-%d %H:%M} UTC)"
        return text


@dataclass(frozen=True)
class RuleAnswer:
    """An interrupt a rule answers: the payload to record, and what to say about it.

    ``matched``: the argument values the rule's conditions looked at (for the audit).
    """

    interrupt_id: str
    tool: str
    rule: Rule | FileRule
    payload: dict[str, Any]
    tool_call_id: str = ""
    matched: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ShadowNote:
    """A shadow file rule that covers a surfacing request: what it would have done (``rule.effect``), unapplied."""

    interrupt_id: str
    tool: str
    rule: FileRule
    tool_call_id: str = ""


@dataclass(frozen=True)
class Surfacing:
    """What the rules make of a set that surfaces.

    Attributes:
        answers: the interrupts a rule answers, in the set's order.
        shadows: what shadow file rules would have done (audited, nothing applied).
        forced: interrupt ids a file ``ask`` rule holds for a person (no person's rule answers them).
        risks: interrupt id -> the risk of the first covering file rule that has one.
    """

    answers: list[RuleAnswer] = field(default_factory=list)
    shadows: list[ShadowNote] = field(default_factory=list)
    forced: set[str] = field(default_factory=set)
    risks: dict[str, Risk] = field(default_factory=dict)


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


def is_tool_approval(interrupt: Interrupt, tool: str) -> bool:
    """Whether a rule of any kind may answer this interrupt: a tool approval (:func:`tool_approval`) naming its tool."""
    return bool(tool) and tool_approval(interrupt)


def tool_approval(interrupt: Interrupt) -> bool:
    """Whether an interrupt is a tool approval (what rules, bulk, the rule buttons and the reason box are for).

    A tool approval (contracts §6.4): ``reason: "tool_call"``, a ``confirmation`` bound to a tool call (its
    ``toolCallId``: Google ADK's), or an interrupt whose metadata names its tool (``metadata.tool_name``),
    whose Approve a rule can send (:func:`approval_payload`: only a boolean ``approved`` is required). A
    confirmation that names no tool (a LangGraph node's ``interrupt()``) is not one.
    """
    metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
    named = isinstance(metadata.get("tool_name"), str) and bool(metadata["tool_name"])
    tool_bound = interrupt.reason == TOOL_CALL or named or (interrupt.reason == CONFIRMATION
                                                              and bool(interrupt.tool_call_id))
    return tool_bound and approval_payload(interrupt, "allow") is not None


def rememberable(interrupt: Interrupt, tool: str, remember: RememberFn) -> bool:
    """Whether a person's rule may answer this interrupt: a tool approval the app lets be remembered."""
    return is_tool_approval(interrupt, tool) and bool(remember(tool, interrupt))


def call_args(interrupt: Interrupt, transcript: Transcript | None) -> Any:
    """The call's arguments: its tool call's in the transcript, else ``metadata.tool_input``; None when neither."""
    metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
    adk = metadata.get("adk")
    original = adk.get("originalFunctionCall") if isinstance(adk, dict) else None
    if isinstance(original, dict) and "args" in original:  # ADK: its toolCallId is its own confirmation call
        return original["args"]
    call = transcript.tool_calls.get(interrupt.tool_call_id) if transcript and interrupt.tool_call_id else None
    args: Any = call.args if call is not None else None
    return metadata.get("tool_input") if args is None else args


def fingerprint(interrupt: Interrupt) -> str:
    """The fingerprint of "the tool's schema": a person's rule made for one tool does not answer a changed one.

    This project takes the tool's schema to be the interrupt's ``responseSchema`` together with the
    tool's own schema in ``metadata.toolSchema`` (or ``metadata.tool_schema``; None when absent). The
    fingerprint is the SHA-256 (hex) of their canonical JSON (sorted keys, no spaces, UTF-8).
    """
    metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
    tool_schema = metadata.get("toolSchema", metadata.get("tool_schema"))
    canonical = json.dumps({"responseSchema": interrupt.response_schema, "toolSchema": tool_schema},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def remember_fn(remember: Collection[str] | RememberFn | None) -> RememberFn:
    """``ic.chat(remember=...)`` as a function: None (every tool), a collection of names, or the app's function."""
    if remember is None:
        return lambda _tool, _interrupt: True
    if callable(remember):
        return remember
    names = frozenset(remember)
    return lambda tool, _interrupt: tool in names


def match(rules: Sequence[Rule], tool: str, thread_id: str, args: Any = None, now: datetime | None = None,
          fingerprint: str | None = None) -> Rule | None:
    """The rule that speaks for a call of ``tool`` here: a thread rule first, then a deny, then the newest.

    Only rules whose conditions, expiry and schema fit the call count (:meth:`Rule.covers`).
    """
    found = [rule for rule in rules if rule.covers(tool, thread_id, args, now, fingerprint)]
    found.sort(key=lambda rule: (rule.scope != "thread", rule.effect != "deny", -rule.id))
    return found[0] if found else None


def _file_decision(out: Surfacing, interrupt: Interrupt, tool: str, args: Any,
                   file_rules: Sequence[FileRule], paused: bool) -> bool:
    """Apply the file rules to one interrupt; True when they decide it (the person's rules then do not)."""
    hits = [rule for rule in file_rules if rule.applies(tool, args)]
    call_id = interrupt.tool_call_id or ""
    out.shadows.extend(ShadowNote(interrupt.id, tool, rule, call_id) for rule in hits
                       if rule.shadow and rule.effect in EFFECTS)
    enforced = [rule for rule in hits if not rule.shadow]
    risky = [rule.risk for rule in enforced if rule.risk] or [rule.risk for rule in hits if rule.risk]
    if risky and risky[0] is not None:
        out.risks[interrupt.id] = risky[0]
    if not enforced:
        return False
    winner = min(enforced, key=lambda rule: _STRICTNESS.get(rule.effect, 0))  # min keeps the first among equals
    if winner.effect == "ask":
        out.forced.add(interrupt.id)
    elif winner.effect in EFFECTS and not paused:
        payload = approval_payload(interrupt, winner.effect)
        if payload is not None:
            out.answers.append(RuleAnswer(interrupt.id, tool, winner, payload, call_id,
                                          conditions.matched(winner.when, args)))
    return True


def surface(pending: Pending | None, answered: Collection[str], transcript: Transcript | None,
            rules: Sequence[Rule], thread_id: str, remember: RememberFn, now: datetime, *,
            file_rules: Sequence[FileRule] = (), paused: bool = False) -> Surfacing:
    """The one evaluation of a set that surfaces: what the file's and the person's rules make of it.

    Per open tool approval of a standard set (not in ``answered``, not expired; a legacy set is never
    answered): every covering shadow file rule is noted; the enforced file rules decide first, the most
    restrictive winning (deny > ask > allow; ``ask`` holds the request for a person); else the person's
    rules (:func:`match`), limited by the app's ``remember``. While ``paused`` no rule answers anything
    (shadows, ``ask`` and risks are still reported).
    """
    out = Surfacing()
    if pending is None or pending.kind != "standard" or not (rules or file_rules):
        return out
    for interrupt in pending.interrupts:
        if interrupt.id in answered or is_expired(interrupt, now):
            continue
        tool = tool_name(interrupt, transcript)
        if not is_tool_approval(interrupt, tool):
            continue
        args = call_args(interrupt, transcript)
        if _file_decision(out, interrupt, tool, args, file_rules, paused) or paused or not rules:
            continue
        if not remember(tool, interrupt):
            continue
        rule = match(rules, tool, thread_id, args, now, fingerprint(interrupt))
        payload = approval_payload(interrupt, rule.effect) if rule is not None else None
        if rule is not None and payload is not None:
            out.answers.append(RuleAnswer(interrupt.id, tool, rule, payload, interrupt.tool_call_id or "",
                                          conditions.matched(rule.conditions, args)))
    return out


def answers_for(pending: Pending | None, answered: Collection[str], transcript: Transcript | None,
                rules: Sequence[Rule], thread_id: str, remember: RememberFn, now: datetime) -> list[RuleAnswer]:
    """The open interrupts of ``pending`` that the person's rules answer, in the set's order (no file rules).

    ``answered``: interrupt ids that have their answer already. An expired interrupt is left to
    the person (it can only be cancelled, S11); a legacy set is never answered by a rule.
    """
    return surface(pending, answered, transcript, rules, thread_id, remember, now).answers
