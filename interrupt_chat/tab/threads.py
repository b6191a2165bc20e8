"""The thread list's actions: search, rename, delete, export; and a thread's audit rows.

Reads run inside the state lock; writes to the thread database run after it (a plain call, so
nothing else runs in between). Everything also works without a database (``INTERRUPT_CHAT_DB_URL
=off``): search then covers the threads in memory, and rename and delete act on them alone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

import reflex as rx

from ..agui.sanitize import short_text
from ..store import export as store_export
from ..store.threads_db import ThreadDBError
from ..workers import runs, sync
from ..workers.proxy_reads import tab_token
from . import driver, persistence, routing

if TYPE_CHECKING:
    from ..model.protocols import ChatLike, StateLike

__all__ = ["ThreadListHandlers", "delete", "export", "rename", "search"]

TITLE_CHARS = 80


async def search(chat: ChatLike, query: str) -> None:
    """Filter the list by title and message text (inside the lock)."""
    chat.thread_query = str(query).strip()[:200]
    db = persistence.database()
    if db is not None and chat._owner_key:
        try:
            chat._summaries = await persistence.db_read(db.threads, chat._owner_key, search=chat.thread_query or None)
        except ThreadDBError as exc:
            persistence.unavailable(chat, exc)
    driver.list_threads(chat)


def _known(chat: ChatLike, thread_id: str) -> bool:
    """One of the owner's threads as this state knows them (ids come from the page)."""
    return bool(thread_id) and (thread_id in chat._sessions or any(s.thread_id == thread_id for s in chat._summaries))


async def rename(state: StateLike, chat_cls: type[ChatLike], thread_id: str, title: str) -> None:
    """Give a thread a title; a blank one restores the default.

    Only the title is written (a rename never writes a tab's copy of the messages over a newer
    one). A thread that was only in memory is saved first, as a new thread.
    """
    title = short_text(title, TITLE_CHARS)
    async with state:
        chat = await driver.ready(state, chat_cls)
        if not _known(chat, thread_id):
            return
        session = chat._sessions.get(thread_id)
        chat._titles = {**chat._titles, thread_id: title}
        driver.list_threads(chat)
        db = persistence.database()
        if db is None or not chat._owner_key:
            return
        if session is not None and not session.revision and session.transcript.messages and not session.running:
            await persistence.save(chat, session)  # first save: conditional on the thread not existing
        owner = chat._owner_key
    notice = ""
    try:
        await persistence.db_call(db.rename, owner, thread_id, title)
        summaries = await persistence.db_read(db.threads, owner, search=None)
        await sync.changed(owner, thread_id, tab_token(state))
    except ThreadDBError:  # logged once per outage (persistence.db_call)
        notice, summaries = persistence.UNAVAILABLE_NOTICE, None
    async with state:
        chat = await routing.chat_of(state, chat_cls)
        if summaries is not None and not chat.thread_query and chat._owner_key == owner:  # (a person switch)
            chat._summaries = summaries
        chat.notice = notice or chat.notice
        driver.list_threads(chat)


async def delete(state: StateLike, chat_cls: type[ChatLike], thread_id: str) -> None:
    """Delete a thread (its audit entries stay); the view moves to the newest other thread, or a new one.

    A run in flight on it is stopped first, wherever it runs; the delete leaves a tombstone, so
    the run's last save (or a stale tab's) never brings the thread back.
    """
    async with state:
        chat = await driver.ready(state, chat_cls)
        if not _known(chat, thread_id):
            return
        owner = chat._owner_key
        await runs.stop(persistence.run_key(chat, thread_id))
        chat._sessions = {k: v for k, v in chat._sessions.items() if k != thread_id}
        chat._summaries = [s for s in chat._summaries if s.thread_id != thread_id]
        chat._titles = {k: v for k, v in chat._titles.items() if k != thread_id}
        if chat.thread_id == thread_id:
            chat.thread_id = next(iter(row["id"] for row in chat.threads if row["id"] != thread_id), "")
            shown = await persistence.load_thread(chat, chat.thread_id) if chat.thread_id else None
            if shown is None:
                chat.thread_id = ""
            await driver.publish(chat, shown or chat._session(), full=True)
            await routing.route(state, chat_cls, chat._session())
        driver.list_threads(chat)
    db = persistence.database()
    if db is not None and owner:
        try:
            await persistence.db_call(db.delete, owner, thread_id)
            await sync.changed(owner, thread_id, tab_token(state))
        except ThreadDBError:  # logged once per outage (persistence.db_call)
            async with state:
                (await routing.chat_of(state, chat_cls)).notice = persistence.UNAVAILABLE_NOTICE


def _file_name(title: str, thread_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", title).strip("-.")[:60] or "thread"
    return f"{slug}-{re.sub(r'[^A-Za-z0-9]+', '', thread_id)[-8:]}"


async def export(state: StateLike, chat_cls: type[ChatLike], thread_id: str) -> list[tuple[str, str]]:
    """The thread as files to download, ``[(file name, text)]``: Markdown, then JSON ([] when unknown).

    From the thread database (the thread as stored, read fresh), else from this tab's memory.
    """
    async with state:
        chat = await driver.ready(state, chat_cls)
        if not _known(chat, thread_id):
            return []
        owner, session = chat._owner_key, chat._sessions.get(thread_id)
        title = chat._titles.get(thread_id) or next(
            (row["title"] for row in chat.threads if row["id"] == thread_id), "")
        db = persistence.database()
        if db is None or not owner:
            if session is None:
                return []
            files = [store_export.thread_markdown(session, title, []), store_export.thread_json(session, title, [])]
    if db is not None and owner:
        try:
            exported = await persistence.db_read(store_export.export, db, owner, thread_id)
            files = [exported[fmt] for fmt in store_export.EXPORT_FORMATS] if exported else ["", ""]
        except ThreadDBError:  # logged once per outage (persistence.db_call)
            async with state:
                (await routing.chat_of(state, chat_cls)).notice = persistence.UNAVAILABLE_NOTICE
            return []
    name = _file_name(title, thread_id)
    return [(f"{name}.md", files[0]), (f"{name}.json", files[1])] if files[0] else []


def _chat(state: StateLike) -> type[ChatLike]:
    """The concrete chat class a mixin's handler runs on."""
    return cast("type[ChatLike]", state.__class__)


class ThreadListHandlers(rx.State, mixin=True):
    """The chat state's thread-list actions (a mixin of ``ChatState``)."""

    thread_query: str = ""  # the thread list's search

    @rx.event
    async def search_threads(self, query: str):
        """Filter the thread list by title and message text."""
        await search(await driver.ready(self, _chat(self)), query)

    @rx.event(background=True)
    async def rename_thread(self, form_data: dict[str, Any]):
        """Rename a thread (the rename form: ``thread_id``, ``title``)."""
        await rename(self, _chat(self), str(form_data.get("thread_id", "")), str(form_data.get("title", "")))

    @rx.event(background=True)
    async def export_thread(self, thread_id: str):
        """Download a thread as Markdown and as JSON (``thread-export``)."""
        for name, text in await export(self, _chat(self), str(thread_id)):
            yield rx.download(data=text, filename=name)

    @rx.event(background=True)
    async def delete_thread(self, thread_id: str):
        """Delete a thread (after the person confirmed it)."""
        await delete(self, _chat(self), str(thread_id))
