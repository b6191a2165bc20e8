"""Attachments in the chat: files chosen, dropped or pasted on the composer, checked, stored, sent.

The bytes come through Reflex's upload endpoint (``rx.upload``: an HTTP POST, never a state delta),
are checked by content (:mod:`interrupt_chat.model.files`), and go straight into the thread database
(``store/files.py``). The state holds only their rows (name, type, size, a small thumbnail). A sent
message references each file (:mod:`interrupt_chat.agui.multimodal`); each run reads the bytes back
and sends them as AG-UI 1.0 data sources, or as URL sources where the app hosts its files.

What an upload may cost is bounded before anything is decoded: the request to a chat's upload
handler is refused past :func:`request_cap` (its ``Content-Length``, else a count of the bytes as
they arrive, :func:`install_upload_guard`), a file is read only up to its limit plus one byte, and
an image's pixels are checked from its header (:mod:`interrupt_chat.model.files`). A file waits unsent
until its message goes: removing its chip deletes it, a person has at most ``UNSENT_MESSAGES``
messages' worth waiting, and what was never sent is deleted after a day (``store/files.py``).
A run reads a referenced file only for the thread's own owner (``AgentSession.file_owner``).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, ClassVar

import reflex as rx
from ag_ui.core import InputContent, InputContentDataSource
from starlette.datastructures import UploadFile as StarletteUploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..agui import multimodal
from ..model.files import Attachments, StoredFile, human_size, refusal, sniff, thumbnail
from ..model.views import AttachmentRow
from ..store import files as store
from ..store.threads_db import ThreadDBError
from . import driver, persistence

if TYPE_CHECKING:
    from ..model.protocols import ChatLike

__all__ = ["AttachmentHandlers", "forget", "install_upload_guard", "limits_of", "parts", "request_cap", "sent"]

log = logging.getLogger(__name__)

NO_DATABASE = "Attachments need the thread database, which is not available."
MAX_NAME_CHARS = 200
UNSENT_MESSAGES = 3  # a person's unsent files: at most this many messages' worth (files and bytes)
SWEEP_SECONDS = 600.0  # how often an upload also deletes everyone's expired unsent files
MAX_REASONS = 5  # refusals named in composer-error; the rest are counted
PART_OVERHEAD = 8 * 1024  # a multipart part's headers (its name, its type)
ARGS_OVERHEAD = 64 * 1024  # the upload's event arguments and framing
_last_sweep = 0.0


ENCODED_CACHE_CHARS = 64 * 1024 * 1024  # base64 of recently sent files kept for the next runs (files never change)
_encoded: OrderedDict[tuple[str, str], tuple[str, str]] = OrderedDict()  # (owner, file id) -> (type, base64)
_encoded_lock = threading.Lock()


def _source(owner: str, file_id: str, mime: str) -> InputContentDataSource | None:
    """What a run sends for a referenced file of ``owner``: its bytes as base64, read from the thread database.

    A reference in a message may name any id (an agent's snapshot writes messages too): only a file
    of the thread's owner is read; another owner's is "no longer available". Every run re-sends the
    history's files: the last ``ENCODED_CACHE_CHARS`` of them stay encoded in memory, keyed by owner
    and id, so a turn of a thread with files reads and encodes only the new ones.
    """
    if not owner or not isinstance(file_id, str):
        return None
    key = (owner, file_id)
    with _encoded_lock:
        cached = _encoded.get(key)
        if cached is not None:
            _encoded.move_to_end(key)
            return InputContentDataSource(value=cached[1], mime_type=cached[0] or mime)
    db = persistence.database()
    if db is None:
        return None
    try:
        found = store.read_owned(db, owner, file_id)
    except ThreadDBError:
        log.warning("an attached file could not be read for a run; it is sent as a note")
        return None
    if found is None:
        return None
    value = base64.b64encode(found[2]).decode("ascii")
    with _encoded_lock:
        _encoded[key] = (found[1], value)
        while sum(len(v) for _, v in _encoded.values()) > ENCODED_CACHE_CHARS and len(_encoded) > 1:
            _encoded.popitem(last=False)
    return InputContentDataSource(value=value, mime_type=found[1] or mime)


multimodal.register_source(_source)


def limits_of(chat_cls: type[Any]) -> Attachments:
    """The chat's attachment limits (``Chat(attachments=...)``, else the defaults)."""
    return chat_cls.attachment_limits or DEFAULT_LIMITS


DEFAULT_LIMITS = Attachments()


def _name(raw: Any) -> str:
    name = str(raw or "file").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable()).strip() or "file"
    return name[:MAX_NAME_CHARS]


def parts(chat: ChatLike) -> list[InputContent]:
    """The files ready to send, as the message's parts (a URL source where the app hosts files)."""
    limits = limits_of(chat.__class__)
    out = []
    for row in chat.attachments:
        size = chat._held.get(row.file_id, 0)
        url = limits.url(StoredFile(row.file_id, row.name, row.mime, size)) if limits.url is not None else ""
        out.append(multimodal.file_part(row.file_id, row.mime, name=row.name, size=size, thumb=row.thumb, url=url))
    return out


async def sent(chat: ChatLike, thread_id: str) -> None:
    """Inside the lock, once the message holding them is claimed: the composer is empty; the files join the thread."""
    ids = [row.file_id for row in chat.attachments]
    chat.attachments, chat._held, chat.composer_error = [], {}, ""
    db = persistence.database()
    if ids and db is not None:
        try:
            await persistence.db_call(store.assign, db, chat._owner_key, ids, thread_id)
        except ThreadDBError:
            log.warning("attached files could not be given their thread")


def _whole_size(upload: Any) -> int:
    """An upload's size without reading it (-1: unknown): Starlette counted it, or its spooled file can seek."""
    size = getattr(upload, "size", None)
    if isinstance(size, int) and size >= 0:
        return size
    try:
        file = upload.file
        here = file.tell()
        end = int(file.seek(0, 2))
        file.seek(here)
        return end
    except (AttributeError, OSError, ValueError):
        return -1


async def _take(chat: ChatLike, upload: Any, limits: Attachments, db: Any, usage: list[int]) -> str:
    """One uploaded file: checked, stored, shown as a chip. Returns why it was refused ("" when taken).

    Only the file's first ``max_file_bytes + 1`` bytes are read: enough to know it is too large.
    ``usage``: the owner's unsent [files, bytes], counted on as files are taken (the quota).
    """
    name = _name(getattr(upload, "name", None) or getattr(upload, "filename", None))
    if not isinstance(upload, StarletteUploadFile):  # an event from the socket names anything as its files
        return f"{name} is not a file."
    data = await upload.read(limits.max_file_bytes + 1)
    mime = sniff(data)
    reason = refusal(name, data, mime, list(chat._held.values()), limits, size=_whole_size(upload))
    if reason or mime is None:
        return reason
    if usage[0] + 1 > UNSENT_MESSAGES * limits.max_files or \
            usage[1] + len(data) > UNSENT_MESSAGES * limits.max_message_bytes:
        return (f"{name}: too many files are waiting to be sent (in this tab or your others); send or remove "
                "some first.")
    file = StoredFile(store.new_file_id(), name, mime, len(data))
    thumb = await asyncio.to_thread(thumbnail, data, mime)
    await persistence.db_call(store.put, db, chat._owner_key, file, data)
    usage[0], usage[1] = usage[0] + 1, usage[1] + len(data)
    chat.attachments = [*chat.attachments, AttachmentRow(file.file_id, name, mime, human_size(file.size), thumb)]
    chat._held = {**chat._held, file.file_id: file.size}
    return ""


async def _sweep(db: Any, owner: str) -> None:
    """Before an upload: the owner's expired unsent files go, and now and then everyone's."""
    global _last_sweep
    now = time.monotonic()
    everyone = now - _last_sweep >= SWEEP_SECONDS
    if everyone:
        _last_sweep = now
    try:
        await persistence.db_call(store.expire_unsent, db, None, None if everyone else owner)
    except ThreadDBError:
        log.warning("expired attachments could not be deleted")


def _said(reasons: list[str]) -> str:
    refused = [r for r in reasons if r]
    more = len(refused) - MAX_REASONS
    return " ".join(refused[:MAX_REASONS]) + (f" {more} more files were refused." if more > 0 else "")


async def forget(chat: ChatLike) -> None:
    """Inside the lock: the composer's waiting files are dropped, and their stored bytes deleted.

    For a person switch in the tab: the next person must not send the last one's files. Only files
    this tab uploaded (``_held``, never set by the page) go, and only while unsent.
    """
    ids = list(chat._held)
    chat.attachments, chat._held, chat.composer_error = [], {}, ""
    db = persistence.database()
    if ids and db is not None:
        try:
            await persistence.db_call(store.drop_unsent, db, ids)
        except ThreadDBError:
            log.warning("removed attachments could not be deleted; they expire")


class AttachmentHandlers(rx.State, mixin=True):
    """The chat state's attachments (a mixin of ``ChatState``)."""

    attachments: list[AttachmentRow] = []  # the files ready to send with the next message
    composer_error: str = ""  # why a file (or a message) was refused
    _held: dict[str, int] = {}  # file id -> bytes, of the files ready to send
    attachment_limits: ClassVar[Attachments | None] = None  # Chat(attachments=...); None: the defaults

    @rx.event
    async def attach_files(self, files: list[rx.UploadFile]):
        """Files chosen, dropped or pasted on the composer: each is checked, stored and shown, or refused."""
        uploads = files if isinstance(files, list) else []
        if not uploads:  # a drop the page refused whole still uploads nothing: keep what refuse_dropped said
            return
        chat: ChatLike = await driver.ready(self, type(self))  # type: ignore[arg-type]
        db = persistence.database()
        if db is None or not chat._owner_key:
            self.composer_error = NO_DATABASE
            return
        limits = limits_of(type(self))
        await _sweep(db, chat._owner_key)
        try:
            usage = list(await persistence.db_read(store.unsent_usage, db, chat._owner_key))
        except ThreadDBError as exc:
            persistence.unavailable(chat, exc)
            return
        reasons = []
        for upload in uploads:
            try:
                reasons.append(await _take(chat, upload, limits, db, usage))
            except ThreadDBError as exc:
                persistence.unavailable(chat, exc)
                reasons.append(f"{_name(getattr(upload, 'name', None))} could not be stored.")
        self.composer_error = _said(reasons)

    @rx.event
    def refuse_dropped(self, rejected: list[dict[str, Any]]):
        """Files the page refused before uploading them (larger than a file may be): named in ``composer-error``.

        ``rejected``: ``[{name, size}]`` as the page sends them (hostile like any argument: only read).
        """
        limit = limits_of(type(self)).max_file_bytes
        items = rejected[:MAX_REASONS * 20] if isinstance(rejected, list) else []
        reasons = []
        for item in items:
            name, size = (item.get("name"), item.get("size")) if isinstance(item, dict) else (None, None)
            big = isinstance(size, int) and not isinstance(size, bool) and size > limit
            said = human_size(size) if big else f"over {human_size(limit)}"  # type: ignore[arg-type]
            reasons.append(f"{_name(name if isinstance(name, str) else None)} is {said}: the limit is "
                           f"{human_size(limit)} per file.")
        self.composer_error = _said(reasons)

    @rx.event
    async def remove_attachment(self, file_id: str):
        """Take a file out of the next message: its stored bytes are deleted (it was never sent)."""
        if not isinstance(file_id, str) or file_id not in self._held:
            return  # the page names only this composer's files
        self.attachments = [row for row in self.attachments if row.file_id != file_id]
        self._held = {k: v for k, v in self._held.items() if k != file_id}
        self.composer_error = ""
        db = persistence.database()
        if db is not None:
            try:
                await persistence.db_call(store.drop_unsent, db, [file_id])
            except ThreadDBError:
                log.warning("a removed attachment could not be deleted; it expires")


# -- the upload request ------------------------------------------------------------------------------

class _TooLarge(Exception):
    """The request's body went past its cap while it arrived."""


def request_cap(limits: Attachments) -> int:
    """The largest upload request a chat takes: as many files as a message takes, each of the largest size.

    A larger request cannot be a person's choice of files each of which could be taken (a drop of
    more than a message's bytes is still answered file by file, in ``composer-error``).
    """
    return limits.max_files * (limits.max_file_bytes + PART_OVERHEAD) + ARGS_OVERHEAD


def _chat_class(state_name: str) -> type[Any] | None:
    """The chat state class a handler's state name names, or None (not a state, not a chat)."""
    root, _, rest = state_name.partition(".")
    if root != rx.State.get_name() or not rest:
        return None
    try:
        cls = rx.State.get_class_substate(tuple(rest.split(".")))
    except ValueError:
        return None
    return cls if hasattr(cls, "attachment_limits") else None


def _cap_of(handler: str) -> int | None:
    """The body cap of an upload to ``handler`` (the request's header); None: not a chat's (the app's own)."""
    state_name, _, method = handler.rpartition(".")
    if method != "attach_files":
        return None
    cls = _chat_class(state_name)
    return request_cap(limits_of(cls) if cls is not None else DEFAULT_LIMITS)


def _too_large(cap: int) -> Response:
    return JSONResponse({"detail": f"The upload is larger than {human_size(cap)}."}, status_code=413)


Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


def _counted(receive: Receive, cap: int) -> Receive:
    seen = 0

    async def counted() -> MutableMapping[str, Any]:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body") or b"")
            if seen > cap:
                raise _TooLarge
        return message
    return counted


def _guarded(make: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Reflex's ``upload(app)`` endpoint factory, with a chat upload's body capped before Reflex parses it."""
    def upload(app: Any) -> Callable[[Request], Awaitable[Response]]:
        endpoint = make(app)

        async def upload_file(request: Request) -> Response:
            cap = _cap_of(request.headers.get("reflex-event-handler") or "")
            if cap is None:
                return await endpoint(request)
            length = (request.headers.get("content-length") or "").strip()
            if length and (not length.isdigit() or int(length) > cap):
                return _too_large(cap)  # refused before a byte of the body is read
            try:
                return await endpoint(Request(request.scope, _counted(request.receive, cap)))
            except _TooLarge:  # Starlette's parser closed its spooled files on the way out
                return _too_large(cap)
        return upload_file
    upload.ic_guarded = True  # type: ignore[attr-defined]
    return upload


def install_upload_guard() -> None:
    """Cap the body of an upload to a chat, before Reflex spools it (once per process; done on import).

    Reflex reads an upload's whole multipart body into temporary files before the handler runs
    (Starlette's form parser: 1 MB of each file in memory, the rest on disk), and offers no hook on
    its upload route, so the factory it builds the route with at compile time is wrapped. Uploads to
    the app's own handlers pass as they are.
    """
    import reflex.app as reflex_app

    if not getattr(reflex_app.upload, "ic_guarded", False):
        reflex_app.upload = _guarded(reflex_app.upload)


install_upload_guard()
