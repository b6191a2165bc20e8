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

import logging
import weakref
from typing import TYPE_CHECKING, Any, ClassVar, cast

import reflex as rx

from ..agui import AgentSession
from ..model import policies
from ..store import policies as store
from ..store.threads_db import ThreadDBError
from ..tab import answers, driver, persistence, trail
from ..workers import sync

if TYPE_CHECKING:
    from ..agui import Pending
    from ..model.protocols import ChatLike, SlotLike, StateLike

__all__ = [
    "POLICY_NOTICE",
    "PolicyHandlers",
    "answered_by_rule",
    "apply",
    "make",
    "relist",
    "remember",
    "remember_in_chat",
    "revoke",
    "rows",
    "rules_for",
    "save_in_chat",
    "save_in_inbox",
    "shown_rows",
]

log = logging.getLogger(__name__)

POLICY_NOTICE = "#policies"  # the sync notice's thread id for "the owner's rules changed"


async def rules_for(owner: str, session: AgentSession) -> list[policies.Rule]:
    """After the lock: the rules that may speak for the session's thread ([] when nothing waits or no database)."""
    db = persistence.database()
    pending = session.tracker.pending
    if db is None or not owner or pending is None or pending.kind != "standard" or session.running:
        return []
    try:
        return await persistence.db_read(store.rules, db, owner, session.thread_id)
    except ThreadDBError:  # no rule can be read: the person decides, as without rules
        log.warning("the owner's rules could not be read; the cards are shown instead")
        return []


MAX_RULE_RESUMES = 5  # resumes in a row that rules alone start; then a person looks (an agent asking in a loop)
_streaks: weakref.WeakKeyDictionary[AgentSession, int] = weakref.WeakKeyDictionary()


async def apply(chat: ChatLike, session: AgentSession, rules: list[policies.Rule],
                skip: set[str] | frozenset[str] = frozenset()) -> answers.Outcome | None:
    """Inside the lock: answer what ``rules`` cover; the outcome (its resume, if the set is complete) or None.

    ``skip``: requests the owner's rules do not speak for (assigned to other people, or needing
    more approvals than the owner's).

    After :data:`MAX_RULE_RESUMES` resumes in a row started by rules alone, the next set is left to
    the person (its cards are drawn), and the count starts again.
    """
    tracker = session.tracker
    if not rules or tracker.sealed:
        return None
    if _streaks.get(session, 0) >= MAX_RULE_RESUMES:
        _streaks[session] = 0
        return None
    covered = policies.answers_for(tracker.pending, tracker.answers, session.transcript, rules, session.thread_id,
                                   policies.remember_fn(chat.__class__.remember), tracker.now())
    covered = [found for found in covered if found.interrupt_id not in skip]
    audits: list[persistence.Audit] = []
    for found in covered:
        outcome = await answers.decide(chat, session, "resolve", found.payload, found.interrupt_id,
                                       lambda _card, _message: None)
        if outcome is None:  # the headers failed: the person sees the rest, with the notice
            break
        for audit in outcome.audits:
            audit.by = "policy"
            if audit.interrupt_id == found.interrupt_id:
                audit.detail = {"tool": found.tool, "rule": found.rule.describe(), "policyId": found.rule.id,
                                "toolCallId": found.tool_call_id}
        audits += outcome.audits
        if outcome.events is not None:
            _streaks[session] = _streaks.get(session, 0) + 1
            return answers.Outcome(outcome.events, audits, chat._owner_key)
    _streaks.pop(session, None)
    if not audits:
        return None
    return answers.Outcome(None, audits, chat._owner_key)


async def answered_by_rule(owner: str, pending: Pending | None) -> set[str]:
    """The interrupts of ``pending`` a rule answered (the inbox shows only the rest, as the chat does)."""
    db = persistence.database()
    if db is None or not owner or pending is None or not pending.run_id:
        return set()
    try:
        return await persistence.db_call(store.answered, db, owner, pending.run_id)
    except ThreadDBError:
        return set()


def shown_rows(audits: list[persistence.Audit]) -> list[dict[str, str]]:
    """The audit rows of a policy's answers, shown at once (their notes) until the written trail replaces them."""
    return [{"interrupt_id": a.interrupt_id, "action": a.action, "reason": a.reason or "", "by": a.by, "at": "",
             "actor": "", "on_behalf_of": "",
             "payload": "", **trail.policy_detail(a.detail)} for a in audits]


async def make(owner: str, tool: str, scope: str, effect: str, thread_id: str) -> policies.Rule | None:
    """After the lock: store a rule for ``owner`` and tell the owner's other tabs."""
    db = persistence.database()
    if db is None or not owner:
        return None
    rule = await persistence.db_call(store.add, db, owner, tool, scope, effect, thread_id)
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


async def rows(owner: str) -> list[dict[str, Any]]:
    """The owner's rules in force, as ``policy-item`` rows."""
    db = persistence.database()
    if db is None or not owner:
        return []
    found = await persistence.db_read(store.rules, db, owner)
    return [{"id": str(rule.id), "tool": rule.tool, "scope": rule.scope, "effect": rule.effect,
             "thread_id": rule.thread_id, "rule": rule.describe(),
             "created": rule.created_at.strftime("%Y-%m-%d %H:%M") if rule.created_at else ""} for rule in found]


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

    policies: list[dict[str, str]] = []  # the owner's rules in force, newest first
    policies_loaded: bool = False  # the list answered once: until then the page shows that it loads
    _policies_shown: bool = False  # this tab lists them: a change on another tab lists them again (sync)
    remember: ClassVar[Any] = None  # Chat(remember=...): tool names or fn(tool, interrupt) -> bool (policies.py)

    @rx.var
    def policy_notes(self) -> list[dict[str, str]]:
        """The shown thread's answers given by a rule (the transcript's ``policy-note``s)."""
        return [row for row in self.decisions if row.get("by") == "policy"]  # type: ignore[attr-defined]

    @rx.event(background=True)
    async def load_policies(self):
        """List the owner's rules (the policy list's mount)."""
        async with self:
            chat = await driver.ready(self, cast("type[ChatLike]", self.__class__))
            chat._policies_shown = True
            owner = chat._owner_key
        found = await rows(owner)
        async with self:
            if cast("ChatLike", self)._owner_key == owner:  # the tab may serve another person by now
                self.policies, self.policies_loaded = found, True

    @rx.event(background=True)
    async def revoke_policy(self, rule_id: str):
        """Revoke one of the owner's rules: the next set it would have answered shows its card again."""
        async with self:
            chat = await driver.ready(self, cast("type[ChatLike]", self.__class__))
            owner = chat._owner_key
        try:
            await revoke(owner, int(rule_id))
        except (TypeError, ValueError):  # an id that is no number comes from no page of ours
            return
        found = await rows(owner)
        async with self:
            if cast("ChatLike", self)._owner_key == owner:
                self.policies = found

    # STUB i43 (lead replaces): the pause and the denial limit's notice
    paused: bool = False  # the owner paused every agent (pause-all; pause-banner on the chat pages)
    denial_notice: str = ""  # why the shown thread's run was stopped after rejections in a row (denial-limit)

    @rx.event(background=True)
    async def toggle_pause(self):
        """Pause all agents, or resume them (``pause-all``; STUB i43: the lead writes the real one)."""
        async with self:
            self.paused = not self.paused


async def relist(chat: ChatLike) -> None:
    """Inside the lock (live sync): the rules changed on another tab; list them again if this tab shows them."""
    if chat._policies_shown:
        chat.policies, chat.policies_loaded = await rows(chat._owner_key), True


# STUB i43 (lead replaces)
async def save_in_chat(config: SlotLike, form_data: dict[str, Any]) -> None:
    """The chat's "Allow similar calls" (§6.4): make the narrower rule, then approve the shown call. STUB i43."""
    async with config:
        answers.card_error(config, str(form_data.get("__interrupt_id") or ""), "Rules that fit are not ready yet.")


# STUB i43 (lead replaces)
async def save_in_inbox(state: StateLike, chat_cls: type[ChatLike], form_data: dict[str, Any]) -> None:
    """The inbox's "Allow similar calls" (§6.4): make the narrower rule, then approve the shown call. STUB i43."""
    del state, chat_cls, form_data
