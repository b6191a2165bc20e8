"""The approvals, plugged into the chat's hooks (:mod:`interrupt_chat.tab.hooks`) and live sync's follower."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..tab import hooks, server_secret
from ..workers import sync
from . import expiry, follow, missing_pages, notifier, rule_answers

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
        """The owner's rules for the pending set (P2)."""
        return await rule_answers.rules_for(owner, session)

    async def apply_rules(self, chat: ChatLike, session: AgentSession, rules: Any) -> Outcome | None:
        """The rules answer what they cover before any card is drawn."""
        return await rule_answers.apply(chat, session, rules)

    def rule_rows(self, audits: Sequence[Any]) -> list[dict[str, str]]:
        """The trail's rows for the rules' answers."""
        return rule_answers.shown_rows(list(audits))

    async def waiting(self, owner: str, session: AgentSession) -> None:
        """``pending`` notifications, each with its decision link."""
        if notifier.wanted(owner):
            await server_secret.ready()  # links and names are keyed by the server secret: read it off the loop
            await notifier.emit(owner, notifier.requests_of("pending", owner, session))

    async def decided(self, owner: str, audits: Sequence[Any]) -> None:
        """``decided`` / ``expired`` notifications."""
        if notifier.wanted(owner):
            await server_secret.ready()
            await notifier.emit(owner, notifier.decisions(owner, audits))

    async def tool_answered(self, owner: str, thread_id: str, tool: str, tool_call_id: str) -> None:
        """A ``decided`` notification for a frontend tool's result."""
        await server_secret.ready()
        await notifier.emit(owner, [notifier.notification("decided", owner, thread_id, tool=tool,
                                                          tool_call_id=tool_call_id)])


def install() -> None:
    """Plug the approvals into the chat, and live sync's notices into the tabs they concern."""
    hooks.install(Approvals())
    sync.set_follower(follow.follow_tab)
