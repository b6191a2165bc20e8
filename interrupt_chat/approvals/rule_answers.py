"""The owner's rules answer a set as it surfaces, before any card is drawn (docs/semantics.md P2).

There is one place a set surfaces: the end of a run (:func:`interrupt_chat.tab.driver.drive`), whoever
drove it (a chat tab, the inbox, a decision link, the expiry sweeper). There the rules are read
(after the lock), then, in the lock, each interrupt they cover is answered through
:func:`interrupt_chat.tab.answers.decide`, as the card's own Approve or Reject would answer it. A set
they answer completely resumes at once, under the run's own claim; the rest of a partly covered
set is drawn as usual. Making and revoking rules lives here too, with the sync that shows a change
on the owner's other tabs.
"""

from __future__ import annotations

import json
import logging
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, cast

import reflex as rx

from ..agui import AgentSession
from ..model import policies
from ..model.policy_file import FileRule
from ..store import policies as store
from ..store.threads_db import ThreadDB, ThreadDBError
from ..tab import answers, driver, pausing, persistence, trail
from ..tab.audits import Audit
from ..workers import sync
from . import file_rules

if TYPE_CHECKING:
    from ..agui import Pending
    from ..model.protocols import ChatLike, SlotLike

__all__ = [
    "POLICY_NOTICE",
    "PolicyHandlers",
    "answered_by_rule",
    "apply",
    "file_denied",
    "make",
    "relist",
    "remember",
    "remember_in_chat",
    "revoke",
    "rows",
    "rules_for",
    "shown_rows",
]

log = logging.getLogger(__name__)

POLICY_NOTICE = "#policies"  # the sync notice's thread id for "the owner's rules changed"


@dataclass(frozen=True)
class Found:
    """What the rules need when a set surfaces: the owner's rules for the thread, and whether they paused."""

    rules: list[policies.Rule]
    paused: bool = False


async def rules_for(owner: str, session: AgentSession) -> Found | None:
    """After the lock: the owner's rules for the session's thread (None when nothing waits or no database)."""
    db = persistence.database()
    pending = session.tracker.pending
    if not owner or pending is None or pending.kind != "standard" or session.running:
        return None
    if db is None:  # no person's rules nor pause without a database; the policy file's rules still hold
        return Found([])
    try:
        return await persistence.db_read(_read, db, owner, session.thread_id, pausing.person_of(owner))
    except ThreadDBError:  # unknown: nothing answers, the person decides (the file's denies still refuse approvals)
        log.warning("the owner's rules could not be read; the cards are shown instead")
        return Found([], paused=True)


def _read(db: ThreadDB, owner: str, thread_id: str, person: str) -> Found:
    """The rules and the pause in one call off the loop: one hand-off on the card's path, not two."""
    return Found(store.rules(db, owner, thread_id), store.paused_since(db, person) is not None)


MAX_RULE_RESUMES = 5  # resumes in a row that rules alone start; then a person looks (an agent asking in a loop)
_streaks: weakref.WeakKeyDictionary[AgentSession, int] = weakref.WeakKeyDictionary()


async def apply(chat: ChatLike, session: AgentSession, found: Found | None,
                skip: set[str] | frozenset[str] = frozenset()) -> answers.Outcome | None:
    """Inside the lock: answer what the rules cover; the outcome (its resume, if the set is complete) or None.

    The policy file's rules first (a shadow rule only writes what it would have done), then the
    owner's (:func:`interrupt_chat.model.policies.surface`); while the owner is paused nothing is
    answered. ``skip``: requests no rule answers here (assigned to other people, or needing more
    approvals than the owner's).

    After :data:`MAX_RULE_RESUMES` resumes in a row started by rules alone, the next set is left to
    the person (its cards are drawn), and the count starts again.
    """
    tracker = session.tracker
    if found is None or tracker.sealed:
        return None
    surfacing = policies.surface(tracker.pending, tracker.answers, session.transcript, found.rules, session.thread_id,
                                 policies.remember_fn(chat.__class__.remember), tracker.now(),
                                 file_rules=file_rules.rules_of(chat.__class__), paused=found.paused)
    audits = [_shadow_audit(session, note) for note in surfacing.shadows]
    if _streaks.get(session, 0) >= MAX_RULE_RESUMES:
        _streaks[session] = 0
        return answers.Outcome(None, audits, chat._owner_key) if audits else None
    for given in [a for a in surfacing.answers if a.interrupt_id not in skip]:
        outcome = await answers.decide(chat, session, "resolve", given.payload, given.interrupt_id,
                                       lambda _card, _message: None)
        if outcome is None:  # the headers failed: the person sees the rest, with the notice
            break
        for audit in outcome.audits:
            audit.by = "policy"
            if audit.interrupt_id == given.interrupt_id:
                audit.detail = _answer_detail(given)
        audits += outcome.audits
        if outcome.events is not None:
            _streaks[session] = _streaks.get(session, 0) + 1
            return answers.Outcome(outcome.events, audits, chat._owner_key)
    _streaks.pop(session, None)
    return answers.Outcome(None, audits, chat._owner_key) if audits else None


FILE_DENIES = "The policy file denies this call: it can only be rejected or cancelled."


def file_denied(chat: ChatLike, session: AgentSession, verb: str, payload: Any, interrupt_id: str | None) -> str:
    """Inside the lock, before an answer is claimed: why an approval of a call the policy file denies is refused.

    A file's ``deny`` is the administrator's: no person approves such a call, whatever path shows its card
    (a set the rules left to the person after resuming too often, a request routed to others).
    """
    pending = session.tracker.pending
    approving = verb == "resolve" and not (isinstance(payload, dict) and payload.get("approved") is False)
    rules = file_rules.rules_of(chat.__class__) if approving and pending is not None else ()
    if not rules or pending is None:
        return ""
    target = pending.target(interrupt_id)
    found = policies.surface(pending, (), session.transcript, [], session.thread_id, lambda _tool, _i: True,
                             session.tracker.now(), file_rules=rules)
    denied = target is not None and any(
        a.interrupt_id == target.id and isinstance(a.rule, FileRule) and a.rule.effect == "deny" for a in found.answers)
    return FILE_DENIES if denied else ""


def _answer_detail(given: policies.RuleAnswer) -> dict[str, Any]:
    """What the audit says of a rule's answer: which rule, and the arguments its conditions looked at."""
    rule = given.rule
    detail: dict[str, Any] = {"tool": given.tool, "rule": rule.describe(), "toolCallId": given.tool_call_id,
                              "matched": given.matched}
    if isinstance(rule, FileRule):
        return {**detail, "source": "file", "line": rule.line, "conditions": rule.when}
    return {**detail, "source": "person", "policyId": rule.id, "conditions": rule.conditions}


def _shadow_audit(session: AgentSession, note: policies.ShadowNote) -> Audit:
    """A shadow rule's verdict, as the audit keeps it (``data-action="shadow"``, ``data-shadow``): nothing decided."""
    pending = session.tracker.pending
    asked = next((i for i in pending.interrupts if i.id == note.interrupt_id), None) if pending else None
    return Audit(session.thread_id, pending.run_id if pending else None, note.interrupt_id,
                 asked.reason if asked else None, "shadow", by="policy",
                 detail={"tool": note.tool, "rule": note.rule.describe(), "shadow": note.rule.effect,
                         "line": note.rule.line, "toolCallId": note.tool_call_id, "source": "file"})


async def answered_by_rule(owner: str, pending: Pending | None) -> set[str]:
    """The interrupts of ``pending`` a rule answered (the inbox shows only the rest, as the chat does)."""
    db = persistence.database()
    if db is None or not owner or pending is None or not pending.run_id:
        return set()
    try:
        return await persistence.db_call(store.answered, db, owner, pending.run_id)
    except ThreadDBError:
        return set()


def shown_rows(audits: list[Audit]) -> list[dict[str, str]]:
    """The audit rows of a policy's answers, shown at once (their notes) until the written trail replaces them."""
    return [{"interrupt_id": a.interrupt_id, "action": a.action, "reason": a.reason or "", "by": a.by, "at": "",
             "actor": "", "on_behalf_of": "",
             "payload": "", **trail.policy_detail(a.detail)} for a in audits]


async def make(owner: str, tool: str, scope: str, effect: str, thread_id: str, *,
               conditions: dict[str, Any] | None = None, expires_at: datetime | None = None,
               schema_hash: str = "") -> policies.Rule | None:
    """After the lock: store a rule for ``owner`` and tell the owner's other tabs."""
    db = persistence.database()
    if db is None or not owner:
        return None
    rule = await persistence.db_call(store.add, db, owner, tool, scope, effect, thread_id, conditions=conditions,
                                     expires_at=expires_at, schema_hash=schema_hash)
    await sync.changed(owner, POLICY_NOTICE)
    return rule


async def revoke(owner: str, rule_id: int) -> bool:
    """After the lock: revoke one of the owner's rules (it no longer answers the next set) and tell the tabs."""
    db = persistence.database()
    if db is None or not owner:
        return False
    done = await persistence.db_call(store.revoke, db, owner, rule_id)
    await sync.changed(owner, POLICY_NOTICE)
    return done


def _iso(moment: datetime | None) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z") if moment else ""


def _person_row(rule: policies.Rule) -> dict[str, str]:
    return {"id": str(rule.id), "tool": rule.tool, "scope": rule.scope, "effect": rule.effect,
            "thread_id": rule.thread_id, "rule": rule.describe(),
            "created": rule.created_at.strftime("%Y-%m-%d %H:%M") if rule.created_at else "",
            "conditions": json.dumps(rule.conditions, ensure_ascii=False, sort_keys=True),
            "expires": _iso(rule.expires_at), "source": "person", "mode": "", "revocable": "true", "line": ""}


def _file_row(rule: FileRule) -> dict[str, str]:
    return {"id": f"file-{rule.line}", "tool": rule.tool, "scope": "always", "effect": rule.effect, "thread_id": "",
            "rule": rule.describe(), "created": "", "expires": "", "source": "file",
            "conditions": json.dumps(rule.when, ensure_ascii=False, sort_keys=True),
            "mode": "shadow" if rule.shadow else "", "revocable": "false", "line": str(rule.line)}


async def rows(owner: str, chat_cls: Any = None) -> list[dict[str, str]]:
    """The policy file's rules (in the file's order), then the owner's in force (newest first): ``policy-item`` rows."""
    db = persistence.database()
    found = await persistence.db_read(store.rules, db, owner) if db is not None and owner else []
    return [*map(_file_row, file_rules.rules_of(chat_cls)), *map(_person_row, found)]


async def remember(chat: ChatLike, thread_id: str, interrupt_id: str, scope: str,
                   effect: str) -> dict[str, Any] | str:
    """A card's "allow in this thread" / "always allow" / "always deny": make the rule, return the answer to send.

    Checked here, not trusted from the page: the interrupt must be open in the owner's thread and
    one a rule may answer. Returns the payload the card's Approve (allow) or Reject (deny) sends,
    or the message to show in the card.
    """
    if scope not in policies.SCOPES or effect not in policies.EFFECTS:
        return "That is not a rule."
    session = await persistence.load_thread(chat, thread_id)  # only the owner's: ids come from the page
    pending = session.tracker.pending if session is not None else None
    interrupt = next((i for i in pending.interrupts if i.id == interrupt_id), None) if pending is not None else None
    if session is None or interrupt is None:
        return answers.ANSWERED_ELSEWHERE
    tool = policies.tool_name(interrupt, session.transcript)
    payload = policies.approval_payload(interrupt, effect)
    if payload is None or not policies.rememberable(interrupt, tool, policies.remember_fn(chat.__class__.remember)):
        return "This request cannot be remembered: answer it with the card's own buttons."
    return {"tool": tool, "payload": payload}


async def remember_in_chat(config: SlotLike, interrupt_id: Any, run_id: Any, scope: Any, effect: Any) -> None:
    """The chat's card: make the rule for the shown thread's tool, then answer the card as Approve / Reject would."""
    interrupt_id, run_id, scope, effect = str(interrupt_id), str(run_id or ""), str(scope), str(effect)
    async with config:
        chat = await driver.ready(config, config._chat())
        thread_id, owner = chat.thread_id, chat._owner_key
        found = await remember(chat, thread_id, interrupt_id, scope, effect)
        if isinstance(found, str):
            answers.card_error(config, interrupt_id, found)
            return
    await make(owner, found["tool"], scope, effect, thread_id)
    await answers.answer(config, "resolve", found["payload"], interrupt_id, run_id)


class PolicyHandlers(rx.State, mixin=True):
    """The chat state's rules: the ``policy-item`` rows and their revoke (a mixin of ``ChatState``)."""

    policies: list[dict[str, str]] = []  # the policy file's rules, then the owner's in force (newest first)
    policies_loaded: bool = False  # the list answered once: until then the page shows that it loads
    denial_notice: str = ""  # the shown thread's last run was stopped by the denial limit: why (denial-limit)
    _policies_shown: bool = False  # this tab lists them: a change on another tab lists them again (sync)
    remember: ClassVar[Any] = None  # Chat(remember=...): tool names or fn(tool, interrupt) -> bool (policies.py)
    policy_file: ClassVar[Any] = None  # Chat(policy_file=...): its PolicyFile (file_rules.py)
    risk_fn: ClassVar[Any] = None  # Chat(risk=fn): fn(request) -> ic.Risk | None, for requests no file rule rates
    denial_limit: ClassVar[int | None] = None  # Chat(denial_limit=...): rejections in a row that stop a run

    @rx.var
    def own_policy_count(self) -> int:
        """How many of the listed rules are the person's own (``policy-empty`` when none: file rules are not theirs)."""
        return sum(1 for row in self.policies if row.get("source") != "file")

    @rx.var
    def policy_notes(self) -> list[dict[str, str]]:
        """The shown thread's answers given by a rule (the transcript's ``policy-note``s; not a shadow's verdict)."""
        return [row for row in self.decisions  # type: ignore[attr-defined]
                if row.get("by") == "policy" and row.get("action") != "shadow"]

    @rx.event(background=True)
    async def load_policies(self):
        """List the owner's rules (the policy list's mount), and whether they are paused."""
        async with self:
            chat = await driver.ready(self, cast("type[ChatLike]", self.__class__))
            chat._policies_shown = True
            owner = chat._owner_key
        found, paused = await rows(owner, self.__class__), await pausing.paused(owner)
        async with self:
            chat = cast("ChatLike", self)
            if chat._owner_key == owner:  # the tab may serve another person by now
                chat.policies, chat.policies_loaded, chat.paused = found, True, paused

    @rx.event(background=True)
    async def revoke_policy(self, rule_id: str):
        """Revoke one of the owner's rules: the next set it would have answered shows its card again."""
        async with self:
            chat = await driver.ready(self, cast("type[ChatLike]", self.__class__))
            owner = chat._owner_key
        try:
            await revoke(owner, int(rule_id))
        except (TypeError, ValueError):  # an id that is no number (a file rule's) comes from no page of ours
            return
        found = await rows(owner, self.__class__)
        async with self:
            if cast("ChatLike", self)._owner_key == owner:
                self.policies = found


async def relist(chat: ChatLike) -> None:
    """Inside the lock (live sync): the rules or the pause changed on another tab; show them again."""
    chat.paused = await pausing.paused(chat._owner_key)
    if chat._policies_shown:
        chat.policies, chat.policies_loaded = await rows(chat._owner_key, chat.__class__), True
