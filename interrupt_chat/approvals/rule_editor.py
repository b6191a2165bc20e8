"""``rule-editor`` (§6.4): a narrower rule made from the shown call — argument conditions and a duration.

"Allow similar" on a tool approval opens the editor, one row per argument (an operator and the
shown value) and a duration. Saving checks everything again on the server (the page is not
trusted): the request must be open in the owner's thread, one a rule may answer, and still the
call the person saw (its hash); the conditions are read in the types of the shown arguments.
Then the rule is stored (``always``, ``allow``, with the tool's fingerprint, so a tool that
changes is not answered by it) and the shown call is approved, as the card's Approve does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

import reflex as rx

from ..model import conditions, policies
from ..model.cards import shown_hash
from ..tab import answers, driver
from . import inbox, rule_answers

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, SlotLike, StateLike

__all__ = ["DURATIONS", "Draft", "RuleEditorHandlers", "read_form", "save_in_chat", "save_in_inbox"]

DURATIONS = {"1h": timedelta(hours=1), "8h": timedelta(hours=8), "7d": timedelta(days=7), "always": None}
MAX_ARGS = 50  # argument rows an editor sends at most (a page of ours sends one per shown argument)


@dataclass(frozen=True)
class Draft:
    """The editor's form, read: which request, the call the person saw, the rows and the duration."""

    interrupt_id: str
    thread_id: str
    run_id: str
    shown: str
    rows: list[tuple[str, str, str]]
    duration: str


def read_form(form_data: dict[str, Any]) -> Draft:
    """The editor's form as a :class:`Draft` (every value a bounded string; rows by their index)."""
    def text(name: str, limit: int = 2000) -> str:
        value = form_data.get(name)
        return str(value)[:limit] if isinstance(value, str | int | float) else ""

    rows = []
    for index in range(MAX_ARGS):
        name = text(f"arg-{index}", 200)
        if not name:
            break
        rows.append((name, text(f"op-{index}", 20), text(f"value-{index}")))
    return Draft(text("__interrupt_id", 200), text("__thread_id", 200), text("__run_id", 200), text("__call", 100),
                 rows, text("duration", 20))


async def _checked(chat: ChatLike, thread_id: str, draft: Draft) -> dict[str, Any] | str:
    """Inside the lock: the rule to make and the answer to send, or why not (the card's error)."""
    if draft.duration not in DURATIONS:
        return "Choose how long the rule holds."
    found = await rule_answers.remember(chat, thread_id, draft.interrupt_id, "always", "allow")
    if isinstance(found, str):
        return found
    session = chat._sessions.get(thread_id)
    pending = session.tracker.pending if session is not None else None
    interrupt = next((i for i in pending.interrupts if i.id == draft.interrupt_id), None) if pending else None
    if session is None or interrupt is None:
        return answers.ANSWERED_ELSEWHERE
    if shown_hash(interrupt, session.transcript) != draft.shown:  # (a form without it is no form of ours)
        return answers.CALL_CHANGED
    try:
        when = conditions.from_editor(draft.rows, policies.call_args(interrupt, session.transcript))
    except ValueError as exc:
        return f"That rule cannot be made: {exc}"
    span = DURATIONS[draft.duration]
    return {**found, "conditions": when, "expires_at": datetime.now(UTC) + span if span else None,
            "schema_hash": policies.fingerprint(interrupt)}


async def _make(owner: str, thread_id: str, found: dict[str, Any]) -> None:
    await rule_answers.make(owner, found["tool"], "always", "allow", thread_id, conditions=found["conditions"],
                            expires_at=found["expires_at"], schema_hash=found["schema_hash"])


async def save_in_chat(config: SlotLike, form_data: dict[str, Any]) -> None:
    """The chat's card: make the narrower rule, then approve the shown call (bound to what was shown)."""
    draft = read_form(form_data)
    async with config:
        chat = await driver.ready(config, config._chat())
        thread_id, owner = chat.thread_id, chat._owner_key
        found = await _checked(chat, thread_id, draft)
        if isinstance(found, str):
            answers.card_error(config, draft.interrupt_id, found)
            return
    await _make(owner, thread_id, found)
    await answers.answer(config, "resolve", found["payload"], draft.interrupt_id, draft.run_id, shown=draft.shown)


async def save_in_inbox(state: StateLike, chat_cls: type[ChatLike], form_data: dict[str, Any]) -> None:
    """An inbox card: make the narrower rule for that thread's tool, then approve the shown call."""
    draft = read_form(form_data)
    async with state:
        chat = await driver.ready(state, chat_cls)
        owner = chat._owner_key
        found = await _checked(chat, draft.thread_id, draft)  # (remember loads the thread: only the owner's)
        if isinstance(found, str):
            inbox.show_card_error(chat, draft.thread_id, draft.interrupt_id, found)
            return
    await _make(owner, draft.thread_id, found)
    await inbox.answer(state, chat_cls, "resolve", draft.thread_id, found["payload"], draft.interrupt_id or None,
                       draft.run_id, shown=draft.shown)


class RuleEditorHandlers(rx.State, mixin=True):
    """The inbox's ``rule-save`` (a mixin of ``ChatState``; the chat's card uses ``InterruptState.save_rule``)."""

    @rx.event(background=True)
    async def inbox_save_rule(self, form_data: dict[str, Any]):
        """An inbox card's ``rule-editor`` was saved: make the rule, approve the shown call."""
        await save_in_inbox(self, cast("type[ChatLike]", self.__class__), form_data)
