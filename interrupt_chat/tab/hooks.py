"""What the chat tells the layers above it: approvals beyond the tab plug in here (docs/decisions/0024).

The chat never imports the approvals package (the inbox, rules, links, notifications, expiry):
they build on the chat. Where a tab's work concerns them (a run ended with a set waiting, a
decision was recorded, a chat served its first event), the chat calls :data:`beyond`, which the
assembled state sets with :func:`install` (``interrupt_chat.approvals.install``). Until then,
and in a program that uses the chat alone, nothing beyond the tab happens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..agui import AgentSession
    from ..model.protocols import ChatLike
    from .answers import Outcome

__all__ = ["CHATS", "Beyond", "Gate", "beyond", "install"]

CHATS: dict[str, type] = {}  # the concrete chat state classes by class name (the assembly's registry fills it)


@dataclass
class Gate:
    """What the approvals say of an answer before it is claimed: refused, counted (``handled``), or go on."""

    refusal: str = ""
    handled: bool = False
    detail: dict[str, Any] = field(default_factory=dict)  # stamped on the answer's audit entries (actor, …)
    halt: str = ""  # the run this answer resumes is stopped as it starts, saying this (the denial limit, §6.4)


class Beyond(Protocol):
    """The approvals beyond the tab, as the chat sees them."""

    def served(self, chat_cls: type) -> None:
        """A chat served an event: sweepers it needs run, and its missing pages are reported (once)."""

    async def rules_for(self, owner: str, session: AgentSession) -> Any:
        """The owner's rules for the thread's pending set (read outside the lock)."""

    async def apply_rules(self, chat: ChatLike, session: AgentSession, rules: Any) -> Outcome | None:
        """P2: the rules answer what they cover before a card is drawn (inside the lock)."""

    def rule_rows(self, audits: Sequence[Any]) -> list[dict[str, str]]:
        """The audit trail's rows for what the rules answered."""

    async def waiting(self, owner: str, session: AgentSession) -> None:
        """A run ended with requests waiting: notify whoever receives the owner's notifications."""

    async def decided(self, owner: str, audits: Sequence[Any]) -> None:
        """Decisions were recorded: notify (``decided`` / ``expired``)."""

    async def tool_answered(self, owner: str, thread_id: str, tool: str, tool_call_id: str) -> None:
        """A frontend tool call got its result: notify (``decided``)."""

    async def gate(self, chat: ChatLike, session: AgentSession, verb: str, payload: Any,
                   interrupt_id: str | None) -> Gate:
        """Before an answer is claimed (inside the lock): may this person give it (people, two-person rule)?"""

    async def annotate(self, chat: ChatLike, session: AgentSession, cards: list[Any]) -> list[Any]:
        """The cards as the viewer sees them: who they wait for, whether the viewer may decide (people)."""


class _Nothing:
    """No approvals beyond the tab: no rules, no notifications."""

    def served(self, chat_cls: type) -> None:
        return None

    async def rules_for(self, owner: str, session: AgentSession) -> Any:
        return None

    async def apply_rules(self, chat: ChatLike, session: AgentSession, rules: Any) -> Outcome | None:
        return None

    def rule_rows(self, audits: Sequence[Any]) -> list[dict[str, str]]:
        return []

    async def waiting(self, owner: str, session: AgentSession) -> None:
        return None

    async def decided(self, owner: str, audits: Sequence[Any]) -> None:
        return None

    async def tool_answered(self, owner: str, thread_id: str, tool: str, tool_call_id: str) -> None:
        return None

    async def gate(self, chat: ChatLike, session: AgentSession, verb: str, payload: Any,
                   interrupt_id: str | None) -> Gate:
        return Gate()

    async def annotate(self, chat: ChatLike, session: AgentSession, cards: list[Any]) -> list[Any]:
        return cards


beyond: Beyond = _Nothing()


def install(implementation: Beyond) -> None:
    """Plug the approvals in (the assembled state does, once, when it is imported)."""
    global beyond
    beyond = implementation
