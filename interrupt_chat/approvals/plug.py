"""The approvals, plugged into the chat's hooks (:mod:`interrupt_chat.tab.hooks`) and live sync's follower."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..store.audit import NOT_DECISIONS
from ..tab import hooks, server_secret
from ..workers import sync
from . import denials, expiry, follow, missing_pages, notifier, risks, rule_answers
from .channels import reach as channels_reach
from .channels import slack as channels_slack
from .people import assign as people_assign
from .people import deciding as people_deciding
from .people import rows as people_rows
from .people import views as people_views

if TYPE_CHECKING:
    from ..agui import AgentSession
    from ..model.protocols import ChatLike
    from ..tab.answers import Outcome

__all__ = ["Approvals", "install"]


class Approvals:
    """What the chat's hooks do with the approvals in place."""

    def served(self, chat_cls: type) -> None:
        """``Chat(on_expiry="cancel")``: this worker may sweep; the pages the chat points people at, checked once."""
        expiry.ensure_running()
        missing_pages.check(chat_cls)

    async def rules_for(self, owner: str, session: AgentSession) -> Any:
        """The set's routing between people is stored (before any card is drawn); the owner's rules (P2)."""
        routed = people_assign.routed(await people_assign.surfaced(owner, session))
        return _Rules(await rule_answers.rules_for(owner, session), routed)

    async def apply_rules(self, chat: ChatLike, session: AgentSession, rules: Any) -> Outcome | None:
        """The rules answer what they cover before any card is drawn (never a request routed to others)."""
        if isinstance(rules, _Rules):
            return await rule_answers.apply(chat, session, rules.rules, rules.routed)
        return None

    def rule_rows(self, audits: Sequence[Any]) -> list[dict[str, str]]:
        """The trail's rows for the rules' answers."""
        return rule_answers.shown_rows(list(audits))

    async def waiting(self, owner: str, session: AgentSession) -> None:
        """The set is saved: its assignees' inboxes follow; ``pending`` notifications, each with its decision link."""
        await people_assign.saved(owner, session)
        if notifier.wanted(owner):
            await server_secret.ready()  # links and names are keyed by the server secret: read it off the loop
            await notifier.emit(owner, notifier.requests_of("pending", owner, session))

    async def decided(self, owner: str, audits: Sequence[Any]) -> None:
        """``decided`` / ``expired`` notifications; the people's requests they decided are closed."""
        audits = [a for a in audits if a.action not in NOT_DECISIONS]  # a shadow rule's verdict decides nothing
        if not audits:
            return
        await people_rows.closed(owner, audits)
        if notifier.wanted(owner):
            await server_secret.ready()
            await notifier.emit(owner, notifier.decisions(owner, audits))

    async def tool_answered(self, owner: str, thread_id: str, tool: str, tool_call_id: str) -> None:
        """A ``decided`` notification for a frontend tool's result."""
        await server_secret.ready()
        await notifier.emit(owner, [notifier.notification("decided", owner, thread_id, tool=tool,
                                                          tool_call_id=tool_call_id)])


    async def gate(self, chat: ChatLike, session: AgentSession, verb: str, payload: Any,
                   interrupt_id: str | None) -> hooks.Gate:
        """People: whoever may not decide is refused, an approval short of the count counted; the denial limit."""
        denied = rule_answers.file_denied(chat, session, verb, payload, interrupt_id)
        if denied:
            return hooks.Gate(refusal=denied)
        gate = await people_deciding.gate(chat, session, verb, payload, interrupt_id)
        if not gate.refusal and not gate.handled:
            gate.halt = await denials.halt_for(chat, session, verb, payload, interrupt_id)
        return gate

    async def annotate(self, chat: ChatLike, session: AgentSession, cards: list[Any]) -> list[Any]:
        """People: who each card waits for, and whether the viewer may decide it; each card's risk (§6.4)."""
        return risks.annotate(chat.__class__, session, await people_views.annotate(chat, session, cards))


@dataclass(frozen=True)
class _Rules:
    """The owner's rules, and the requests they must not answer (routed to other people)."""

    rules: Any
    routed: set[str]


def install() -> None:
    """Plug the approvals into the chat, and live sync's notices into the tabs they concern."""
    hooks.install(Approvals())
    notifier.CHANNELS["deliver"] = channels_reach.deliver  # mail and Slack items of the outbox
    channels_slack.register()  # Slack's direct messages and their updates
    sync.set_follower(follow.follow_tab)
