"""AG-UI 1.0 multimodal user content: files as image, document, audio or video parts.

A file the person attached is kept in the transcript (and so in a stored thread) as a part whose
source is a *reference*, ``UrlSource("ic-file:<id>")``, with ``metadata`` ``{name, size, thumb}``:
the bytes live in a file store, never in the messages. Before a run, :func:`resolve` turns each
reference into what the agent can read, a base64 ``DataSource`` (or whatever the registered
source returns), and drops the thumbnail, which is only for drawing. A part whose source is a real
URL (the app hosts its files) is sent as it is. Every shape is an ``ag_ui.core`` model.
"""

from __future__ import annotations

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

__all__ = ["FILE_SCHEME", "FileSource", "attachments_of", "file_part", "register_source", "resolve", "user_content"]

FILE_SCHEME = "ic-file:"

#: ``source(file_id, mime)``: what the agent receives for a referenced file; None when it is gone.
FileSource = Callable[[str, str], InputContentDataSource | InputContentUrlSource | None]

_PART_TYPES: tuple[tuple[str, type[Any]], ...] = (("image/", ImageInputContent), ("audio/", AudioInputContent),
                                                  ("video/", VideoInputContent))
_source: FileSource | None = None


def register_source(source: FileSource | None) -> None:
    """The process's file store: how :func:`resolve` reads a referenced file (the chat registers it)."""
    global _source
    _source = source


def file_part(file_id: str, mime: str, *, name: str, size: int, thumb: str = "", url: str = "") -> InputContent:
    """A file as a part: image, audio or video by its type, else a document; ``url``: hosted, not referenced."""
    kind = next((cls for prefix, cls in _PART_TYPES if mime.startswith(prefix)), DocumentInputContent)
    source = InputContentUrlSource(value=url or f"{FILE_SCHEME}{file_id}", mime_type=mime)
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
                    "thumb": str(meta.get("thumb") or "")})
    return out


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def resolve(messages: list[Message], source: FileSource | None = None) -> list[Message]:
    """The messages a run sends: file references read from the store, thumbnails dropped.

    Messages without files are returned as they are (no copy). A reference the store no longer has
    becomes a text part saying so, so the run still goes out.
    """
    read = source or _source
    out: list[Message] = []
    for message in messages:
        content = message.content if isinstance(message, UserMessage) else None
        if not isinstance(content, list) or all(getattr(p, "source", None) is None for p in content):
            out.append(message)
            continue
        out.append(message.model_copy(update={"content": [_sent(part, read) for part in content]}))
    return out


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
