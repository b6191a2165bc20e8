"""Bulk decisions from the inbox: each selected request answered once, as its own card's Approve or Reject.

Each item goes through the server-side answer path (:func:`interrupt_chat.approvals.headless.answer`: the
thread read fresh, the answer checked against the set the card showed and claimed by a
conditional write), audited ``by="bulk"``. Items of one thread are answered in turn, so its set
resumes once, when its last open interrupt is answered; threads go side by side, at most
:data:`CONCURRENT_THREADS` at a time (their resumes are bounded in :mod:`interrupt_chat.approvals.headless`).
What is not a plain approval (a form, a credential), what has expired and what was answered
elsewhere meanwhile is skipped, with the reason. A bulk action never makes a rule.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..model.cards import Card
from ..tab.answers import ANSWERED_ELSEWHERE, EXPIRED_MESSAGE
from . import headless
from .people.deciding import as_assignee

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["CONCURRENT_THREADS", "BulkResult", "decide_all", "item_key"]

CONCURRENT_THREADS = 8
NOT_PLAIN = "not a plain approval: answer it in its own card"
EXPIRED = "expired: it can only be cancelled"
ELSEWHERE = "answered elsewhere meanwhile"
NOT_YOURS = "it waits for someone else"


def item_key(thread_id: str, interrupt_id: str) -> str:
    """How the inbox names a request it lists (its selection)."""
    return f"{thread_id}\x1f{interrupt_id}"


@dataclass
class BulkResult:
    """What a bulk action did: how many it answered, and one line per skipped request."""

    done: int = 0
    skipped: list[str] = field(default_factory=list)

    def row(self) -> dict[str, object]:
        """As the ``inbox-bulk-result`` var holds it."""
        return {"done": self.done, "skipped": len(self.skipped), "lines": list(self.skipped)}


def _label(card: Card) -> str:
    return f"{card.thread_title or card.thread_id} · {card.tool_name or card.reason or 'request'}"


async def decide_all(chat_cls: type[ChatLike], owner: str, cards: Sequence[Card], approve: bool,
                     theirs: dict[str, str] | None = None) -> BulkResult:
    """Approve (or reject) each of ``cards`` (the inbox's, as the person saw them) once; the result.

    ``theirs``: thread id -> its asker's key, for requests of other people assigned to ``owner``
    (people): each is decided as ``owner``'s own approval (it counts towards the ones needed).
    """
    theirs = theirs or {}
    result = BulkResult()
    by_thread: dict[str, list[Card]] = defaultdict(list)
    for card in cards:
        if card.kind == "form" or not card.plain:
            result.skipped.append(f"{_label(card)}: {NOT_PLAIN}")
        elif card.expired:
            result.skipped.append(f"{_label(card)}: {EXPIRED}")
        elif not card.can_decide:
            result.skipped.append(f"{_label(card)}: {NOT_YOURS}")
        else:
            by_thread[card.thread_id].append(card)
    gate = asyncio.Semaphore(CONCURRENT_THREADS)

    async def one_thread(items: list[Card]) -> None:
        async with gate:
            for card in items:
                asker = theirs.get(card.thread_id)
                if asker is not None:  # someone else's request, assigned to this person
                    refusal = await as_assignee(owner, chat_cls, asker, card.thread_id, card.id, card.run_id,
                                                "resolve", {"approved": approve}, "bulk")
                    answered = headless.Answered(not refusal, refusal)
                else:
                    answered = await headless.answer(chat_cls, owner, card.thread_id, "resolve",
                                                     {"approved": approve}, card.id, card.run_id, "bulk")
                if answered.recorded:
                    result.done += 1
                else:
                    result.skipped.append(f"{_label(card)}: {_why(answered.message)}")

    await asyncio.gather(*(one_thread(items) for items in by_thread.values()))
    return result


def _why(message: str) -> str:
    if message == EXPIRED_MESSAGE:
        return EXPIRED
    if message == ANSWERED_ELSEWHERE or "moved on" in message or "deleted" in message:
        return ELSEWHERE
    return message or ELSEWHERE
