"""Copy and feedback on messages: thumbs up / down with an optional comment, per message and owner.

A rating is stored in the thread database (``store/feedback.py``), shown on every tab of the
owner (a live-sync notice), readable through ``ThreadDB.feedback(owner)`` and in the audit export,
and handed to the app's ``ic.Chat(on_feedback=fn)`` (sync or async, called outside the lock), whose
``owner`` names the person as a notification does (:func:`interrupt_chat.tab.server_secret.public_person`: the app's
user id, else an opaque ``anon-`` id), never by their identity key.
Copy reads the message's source from the thread (not the drawn markdown, nor a streamed prefix).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, cast

import reflex as rx

from ..store import feedback as store
from ..store.threads_db import ThreadDBError
from ..workers import sync
from ..workers.proxy_reads import tab_token
from . import driver, persistence, server_secret

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, StateLike
    from ..store.feedback import Feedback

__all__ = ["FeedbackHandlers", "apply", "of_thread", "rate", "show"]

log = logging.getLogger(__name__)


async def show(chat: ChatLike) -> None:
    """Inside the lock: the shown thread's ratings and comments (the database's, else what this tab holds)."""
    if persistence.database() is None or not chat._owner_key or not chat.thread_id:
        return
    try:
        found = await of_thread(chat._owner_key, chat.thread_id)
    except ThreadDBError as exc:
        persistence.unavailable(chat, exc)
        return
    if found is not None:
        apply(chat, found)


async def of_thread(owner: str, thread_id: str) -> list[Feedback] | None:
    """A thread's stored ratings (no lock needed); None without a database. Raises ThreadDBError."""
    db = persistence.database()
    if db is None or not owner or not thread_id:
        return None
    return await persistence.db_read(store.of_thread, db, owner, thread_id)


def apply(chat: ChatLike, found: list[Feedback]) -> None:
    """The shown thread's ratings and comments (:func:`of_thread`) in the tab (inside the lock)."""
    ratings = {f.message_id: f.rating for f in found}
    comments = {f.message_id: f.comment for f in found if f.comment}
    if chat.feedback != ratings:
        chat.feedback = ratings
    if chat.feedback_comments != comments:
        chat.feedback_comments = comments


def _answer_of(chat: ChatLike, message_id: str) -> Any:
    session = chat._sessions.get(chat.thread_id)
    if session is None:
        return None
    return next((m for m in session.transcript.messages if m.id == message_id and m.role == "assistant"), None)


async def rate(state: StateLike, message_id: str, rating: str | None, comment: str | None = None) -> None:
    """Set, change or take back a rating (``rating`` None: only the comment changes); tell the tabs and the app."""
    chat_cls = cast("type[ChatLike]", state.__class__)
    async with state:
        chat = await driver.ready(state, chat_cls)
        if _answer_of(chat, message_id) is None:  # ids come from the page: only an answer of the shown thread
            return
        owner, thread_id, origin = chat._owner_key, chat.thread_id, tab_token(chat)
        current = chat.feedback.get(message_id, "")
        if rating is None:  # the comment of the rating given
            if not current:
                return
            new, text = current, (comment or "").strip()[:store.MAX_COMMENT_CHARS]
        else:  # the same button again takes it back; another rating starts without a comment
            new, text = ("" if rating == current else rating), ""
        if new not in ("", *store.RATINGS):
            return
        chat.feedback = {**{k: v for k, v in chat.feedback.items() if k != message_id},
                         **({message_id: new} if new else {})}
        chat.feedback_comments = {**{k: v for k, v in chat.feedback_comments.items() if k != message_id},
                                  **({message_id: text} if text else {})}
    await _store(owner, thread_id, message_id, new, text, origin)
    if chat_cls.on_feedback_fn is not None and owner:  # nobody's rating tells the app nothing
        await server_secret.ready()  # the server secret, read off the event loop
        await _tell_app(chat_cls, {"owner": server_secret.public_person(owner, chat_cls), "thread_id": thread_id,
                                   "message_id": message_id, "rating": new or None, "comment": text})


async def _store(owner: str, thread_id: str, message_id: str, rating: str, comment: str, origin: str) -> None:
    db = persistence.database()
    if db is None or not owner:
        return
    try:
        if rating:
            await persistence.db_call(store.give, db, owner, thread_id, message_id, rating, comment)
        else:
            await persistence.db_call(store.clear, db, owner, message_id)
    except ThreadDBError:
        log.warning("feedback could not be stored")
        return
    await sync.changed(owner, thread_id, origin)


async def _tell_app(chat_cls: type[ChatLike], given: dict[str, Any]) -> None:
    """``Chat(on_feedback=fn)``: outside the lock; its failure is logged, never shown or raised."""
    fn = chat_cls.on_feedback_fn
    if fn is None:
        return
    try:
        result = fn(given)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("chat(on_feedback=...) raised")


class FeedbackHandlers(rx.State, mixin=True):
    """The chat state's copy and feedback (a mixin of ``ChatState``)."""

    feedback: dict[str, str] = {}  # the shown thread's ratings: assistant message id -> up | down
    feedback_comments: dict[str, str] = {}  # assistant message id -> the comment given with its rating
    on_feedback_fn: ClassVar[Callable[[dict[str, Any]], Any] | None] = None  # Chat(on_feedback=...)

    @rx.event(background=True)
    async def rate_message(self, message_id: str, rating: str):
        """Thumbs up / down on an answer; pressing the same one again takes it back."""
        await rate(self, str(message_id), str(rating))

    @rx.event(background=True)
    async def comment_message(self, form_data: dict[str, Any]):
        """The optional comment of a rating (its form: ``message_id``, ``comment``)."""
        await rate(self, str(form_data.get("message_id") or ""), None, str(form_data.get("comment") or ""))

    @rx.event
    def copy_message(self, message_id: str):
        """Copy a message's source text (the markdown as the agent wrote it, the user's text as sent)."""
        session = self._sessions.get(self.thread_id)  # type: ignore[attr-defined]
        found = next((m for m in session.transcript.messages if m.id == str(message_id)), None) if session else None
        if found is not None and found.role in ("user", "assistant"):
            return rx.set_clipboard(found.content)
        return None
