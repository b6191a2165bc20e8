"""Attachments in the chat: files chosen, dropped or pasted on the composer, checked, stored, sent.

The bytes come through Reflex's upload endpoint (``rx.upload``: an HTTP POST, never a state delta),
are checked by content (:mod:`interrupt_chat.files`), and go straight into the thread database
(``store/files.py``). The state holds only their rows (name, type, size, a small thumbnail). A sent
message references each file (:mod:`interrupt_chat.agui.multimodal`); each run reads the bytes back
and sends them as AG-UI 1.0 data sources, or as URL sources where the app hosts its files.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, ClassVar

import reflex as rx
from ag_ui.core import InputContent, InputContentDataSource

from . import driver, persistence
from .agui import multimodal
from .files import Attachments, StoredFile, human_size, refusal, sniff, thumbnail
from .store import files as store
from .threads_db import ThreadDBError
from .views import AttachmentRow

if TYPE_CHECKING:
    from .state import ChatState

__all__ = ["AttachmentHandlers", "limits_of", "parts", "sent"]

log = logging.getLogger(__name__)

NO_DATABASE = "Attachments need the thread database, which is not available."
MAX_NAME_CHARS = 200


ENCODED_CACHE_CHARS = 64 * 1024 * 1024  # base64 of recently sent files kept for the next runs (files never change)
_encoded: OrderedDict[str, tuple[str, str]] = OrderedDict()
_encoded_lock = threading.Lock()


def _source(file_id: str, mime: str) -> InputContentDataSource | None:
    """What a run sends for a referenced file: its bytes as base64, read from the thread database.

    Every run re-sends the history's files: the last ``ENCODED_CACHE_CHARS`` of them stay encoded in
    memory, so a turn of a thread with files reads and encodes only the new ones.
    """
    with _encoded_lock:
        cached = _encoded.get(file_id)
        if cached is not None:
            _encoded.move_to_end(file_id)
            return InputContentDataSource(value=cached[1], mime_type=cached[0] or mime)
    db = persistence.database()
    if db is None:
        return None
    try:
        found = store.read(db, file_id)
    except ThreadDBError:
        log.warning("an attached file could not be read for a run; it is sent as a note")
        return None
    if found is None:
        return None
    value = base64.b64encode(found[1]).decode("ascii")
    with _encoded_lock:
        _encoded[file_id] = (found[0], value)
        while sum(len(v) for _, v in _encoded.values()) > ENCODED_CACHE_CHARS and len(_encoded) > 1:
            _encoded.popitem(last=False)
    return InputContentDataSource(value=value, mime_type=found[0] or mime)


multimodal.register_source(_source)


def limits_of(chat_cls: type[Any]) -> Attachments:
    """The chat's attachment limits (``Chat(attachments=...)``, else the defaults)."""
    return chat_cls.attachment_limits or DEFAULT_LIMITS


DEFAULT_LIMITS = Attachments()


def _name(raw: Any) -> str:
    name = str(raw or "file").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable()).strip() or "file"
    return name[:MAX_NAME_CHARS]


def parts(chat: ChatState) -> list[InputContent]:
    """The files ready to send, as the message's parts (a URL source where the app hosts files)."""
    limits = limits_of(chat.__class__)
    out = []
    for row in chat.attachments:
        size = chat._held.get(row.file_id, 0)
        url = limits.url(StoredFile(row.file_id, row.name, row.mime, size)) if limits.url is not None else ""
        out.append(multimodal.file_part(row.file_id, row.mime, name=row.name, size=size, thumb=row.thumb, url=url))
    return out


async def sent(chat: ChatState, thread_id: str) -> None:
    """Inside the lock, once the message holding them is claimed: the composer is empty; the files join the thread."""
    ids = [row.file_id for row in chat.attachments]
    chat.attachments, chat._held, chat.composer_error = [], {}, ""
    db = persistence.database()
    if ids and db is not None:
        try:
            await persistence.db_call(store.assign, db, chat._owner_key, ids, thread_id)
        except ThreadDBError:
            log.warning("attached files could not be given their thread")


async def _take(chat: ChatState, upload: Any, limits: Attachments, db: Any) -> str:
    """One uploaded file: checked, stored, shown as a chip. Returns why it was refused ("" when taken)."""
    data = await upload.read()
    name = _name(getattr(upload, "name", None) or getattr(upload, "filename", None))
    mime = sniff(data)
    reason = refusal(name, data, mime, list(chat._held.values()), limits)
    if reason or mime is None:
        return reason
    file = StoredFile(store.new_file_id(), name, mime, len(data))
    thumb = await asyncio.to_thread(thumbnail, data, mime)
    await persistence.db_call(store.put, db, chat._owner_key, chat.thread_id, file, data)
    chat.attachments = [*chat.attachments, AttachmentRow(file.file_id, name, mime, human_size(file.size), thumb)]
    chat._held = {**chat._held, file.file_id: file.size}
    return ""


class AttachmentHandlers(rx.State, mixin=True):
    """The chat state's attachments (a mixin of ``ChatState``)."""

    attachments: list[AttachmentRow] = []  # the files ready to send with the next message
    composer_error: str = ""  # why a file (or a message) was refused
    _held: dict[str, int] = {}  # file id -> bytes, of the files ready to send
    attachment_limits: ClassVar[Attachments | None] = None  # Chat(attachments=...); None: the defaults

    @rx.event
    async def attach_files(self, files: list[rx.UploadFile]):
        """Files chosen, dropped or pasted on the composer: each is checked, stored and shown, or refused."""
        chat: ChatState = await driver.ready(self, type(self))  # type: ignore[arg-type]
        db = persistence.database()
        if db is None or not chat._owner_key:
            self.composer_error = NO_DATABASE
            return
        reasons = []
        for upload in files:
            try:
                reasons.append(await _take(chat, upload, limits_of(type(self)), db))
            except ThreadDBError as exc:
                persistence.unavailable(chat, exc)
                reasons.append(f"{_name(getattr(upload, 'name', None))} could not be stored.")
        self.composer_error = " ".join(r for r in reasons if r)

    @rx.event
    def remove_attachment(self, file_id: str):
        """Take a file out of the next message (its stored bytes stay until the thread is deleted)."""
        self.attachments = [row for row in self.attachments if row.file_id != file_id]
        self._held = {k: v for k, v in self._held.items() if k != file_id}
        self.composer_error = ""
