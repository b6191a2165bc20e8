"""AG-UI 1.0 multimodal user content: files as image, document, audio or video parts.

A file the person attached is kept in the transcript (and so in a stored thread) as a part whose
source is a *reference*, ``UrlSource("ic-file:<id>")``, with ``metadata`` ``{name, size, thumb}``:
the bytes live in a file store, never in the messages. Before a run, :func:`resolve` turns each
reference into what the agent can read, a base64 ``DataSource`` (or whatever the registered
source returns), and drops the thumbnail, which is only for drawing. A part whose source is a real
URL (the app hosts its files) is sent as it is. Every shape is an ``ag_ui.core`` model.

A reference may come from anyone who writes messages, the agent's ``MESSAGES_SNAPSHOT`` too: it
is read only as a file of the thread's own owner (``resolve(owner=...)``), and a thumbnail is drawn
only when it is a small raster ``data:image/`` URL, so the page never fetches what a message names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ag_ui.core import (
    AudioInputContent,
    DocumentInputContent,
    ImageInputContent,
    InputContent,
    InputContentDataSource,
    InputContentUrlSource,
    Message,
    TextInputContent,
    UserMessage,
    VideoInputContent,
)

__all__ = ["FILE_SCHEME", "FileSource", "OwnedSource", "attachments_of", "file_part", "register_source", "resolve",
           "safe_thumb", "user_content"]

FILE_SCHEME = "ic-file:"
MAX_THUMB_CHARS = 128 * 1024  # a drawn thumbnail's data URL (the chat's own are 96-pixel PNGs, a few KB)
_THUMB = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}")

#: ``source(file_id, mime)``: what the agent receives for a referenced file; None when it is gone.
FileSource = Callable[[str, str], InputContentDataSource | InputContentUrlSource | None]
#: ``source(owner, file_id, mime)``: the process's file store; a file of another owner is None.
OwnedSource = Callable[[str, str, str], InputContentDataSource | InputContentUrlSource | None]

_PART_TYPES: tuple[tuple[str, type[Any]], ...] = (("image/", ImageInputContent), ("audio/", AudioInputContent),
                                                  ("video/", VideoInputContent))
_source: OwnedSource | None = None


def register_source(source: OwnedSource | None) -> None:
    """The process's file store: how :func:`resolve` reads a referenced file of an owner (the chat registers it)."""
    global _source
    _source = source


def safe_thumb(value: Any) -> str:
    """``value`` when it is a thumbnail the page may draw (a raster ``data:image/`` URL, not too long), else ""."""
    if isinstance(value, str) and len(value) <= MAX_THUMB_CHARS and _THUMB.fullmatch(value):
        return value
    return ""


def file_part(file_id: str, mime: str, *, name: str, size: int, thumb: str = "", url: str = "") -> InputContent:
    """A file as a part: image, audio or video by its type, else a document; ``url``: hosted, not referenced."""
    kind = next((cls for prefix, cls in _PART_TYPES if mime.startswith(prefix)), DocumentInputContent)
    source = InputContentUrlSource(value=url or f"{FILE_SCHEME}{file_id}", mime_type=mime)
    thumb = safe_thumb(thumb)
    meta: dict[str, Any] = {"fileId": file_id, "name": name, "size": size, **({"thumb": thumb} if thumb else {})}
    part: InputContent = kind(source=source, metadata=meta)
    return part


def user_content(text: str, parts: Sequence[InputContent]) -> list[InputContent]:
    """A user message's content: its text (if any), then its files."""
    return [*([TextInputContent(text=text)] if text else []), *parts]


def attachments_of(content: Any) -> list[dict[str, Any]]:
    """The files of a message's content, for drawing: ``{file_id, name, mime, size, thumb}`` each."""
    if not isinstance(content, list):
        return []
    out = []
    for part in content:
        source = getattr(part, "source", None)
        if source is None:
            continue
        meta = part.metadata if isinstance(getattr(part, "metadata", None), dict) else {}
        out.append({"file_id": str(meta.get("fileId") or ""), "name": str(meta.get("name") or part.type),
                    "mime": str(getattr(source, "mime_type", None) or ""), "size": _int(meta.get("size")),
                    "thumb": safe_thumb(meta.get("thumb"))})
    return out


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def resolve(messages: list[Message], source: FileSource | None = None, *, owner: str = "") -> list[Message]:
    """The messages a run sends: file references read from the store, thumbnails dropped.

    Messages without files are returned as they are (no copy). A reference the store does not give
    (gone, or not ``owner``'s) becomes a text part saying so, so the run still goes out.

    Args:
        messages: the history.
        source: reads a reference; default: the registered store, for ``owner``'s files only.
        owner: whose files the references may name (the thread's owner); "": nobody's.
    """
    read = source if source is not None else _owned_by(owner)
    out: list[Message] = []
    for message in messages:
        content = message.content if isinstance(message, UserMessage) else None
        if not isinstance(content, list) or all(getattr(p, "source", None) is None for p in content):
            out.append(message)
            continue
        out.append(message.model_copy(update={"content": [_sent(part, read) for part in content]}))
    return out


def _owned_by(owner: str) -> FileSource | None:
    store = _source
    if not owner or store is None:
        return None
    return lambda file_id, mime: store(owner, file_id, mime)


def _sent(part: Any, read: FileSource | None) -> Any:
    source = getattr(part, "source", None)
    if source is None:
        return part
    meta = {k: v for k, v in (part.metadata or {}).items() if k != "thumb"} if isinstance(part.metadata, dict) else None
    value = getattr(source, "value", "")
    if getattr(source, "type", "") == "url" and isinstance(value, str) and value.startswith(FILE_SCHEME):
        found = read(value[len(FILE_SCHEME):], source.mime_type or "") if read is not None else None
        if found is None:
            name = (meta or {}).get("name", "a file")
            return TextInputContent(text=f"[{name}: the file is no longer available]")
        return part.model_copy(update={"source": found, "metadata": meta})
    return part.model_copy(update={"metadata": meta})
