"""Attachments: which files a chat takes, checked by their content, and their thumbnails (framework-free).

A file's type is what its bytes say (magic numbers, through ``filetype``; text is UTF-8 without
NUL), never its name or the browser's guess: a program renamed ``photo.png`` is refused. The
limits are per file, per message and in number; each refusal names the file, the reason and the
limit. An image is also limited in pixels (``MAX_IMAGE_PIXELS``), read from its header before
anything decodes it: a small file can hold an image that costs gigabytes to decode.
"""

from __future__ import annotations

import base64
import io
import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import filetype

__all__ = ["DEFAULT_TYPES", "MAX_IMAGE_PIXELS", "Attachments", "StoredFile", "human_size", "refusal", "sniff",
           "thumbnail"]

log = logging.getLogger(__name__)

MB = 1024 * 1024
#: Images, PDF and plain text.
DEFAULT_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain")
THUMB_PIXELS = 96
#: Pixels of an image that is taken (36 MP: an 8K screenshot, a 6000 x 6000 photo). Decoding costs about 4 bytes
#: a pixel, whatever the file's size: a 440 KB PNG of 12000 x 12000 pixels would cost 550 MB to thumbnail.
MAX_IMAGE_PIXELS = 36_000_000
_TEXT_PROBE = 64 * 1024  # bytes of a text file checked for UTF-8 (the whole file when smaller)


@dataclass(frozen=True)
class StoredFile:
    """A file as stored: its id, name, type (from its content) and size in bytes."""

    file_id: str
    name: str
    mime: str
    size: int


@dataclass(frozen=True)
class Attachments:
    """What a chat takes as attachments (``ic.Chat(attachments=...)``).

    Attributes:
        types: accepted MIME types; ``image/*`` takes every image type ``filetype`` knows.
        max_file_bytes: the size of one file (10 MB).
        max_message_bytes: the files of one message together (20 MB).
        max_files: files in one message (10).
        url: file hosting: ``url(file) -> str`` a URL the agent can fetch; the message then carries a URL
            source instead of the bytes, so its history does not re-send them. None: inline data.
    """

    types: Sequence[str] = DEFAULT_TYPES
    max_file_bytes: int = 10 * MB
    max_message_bytes: int = 20 * MB
    max_files: int = 10
    url: Callable[[StoredFile], str] | None = None

    def accepts(self, mime: str) -> bool:
        """Whether files of this type are taken."""
        return any(mime == t or (t.endswith("/*") and mime.startswith(t[:-1])) for t in self.types)

    def described(self) -> str:
        """The accepted types for people: "PNG, JPEG, GIF, WEBP images, PDF, plain text"."""
        names = {"application/pdf": "PDF", "text/plain": "plain text"}
        images = [t.split("/")[1].upper() for t in self.types if t.startswith("image/") and t != "image/*"]
        parts = ["images"] if "image/*" in self.types else [f"{', '.join(images)} images"] if images else []
        parts += [names.get(t, t) for t in self.types if not t.startswith("image/")]
        return ", ".join(parts)


def sniff(data: bytes) -> str | None:
    """The type the bytes say they are, or None: magic numbers first, then UTF-8 text without NUL."""
    kind = filetype.guess(data[:8192])
    if kind is not None:
        return str(kind.mime)
    probe = data[:_TEXT_PROBE]
    if b"\x00" in probe:
        return None
    try:
        probe.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) <= _TEXT_PROBE or exc.start < len(probe) - 4:  # not a character cut by the probe's end
            return None
    return "text/plain"


def human_size(size: int) -> str:
    """Bytes for people: ``812 B``, ``4.88 KB``, ``10 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < MB:
        return f"{size / 1024:.3g} KB"
    return f"{size / MB:.3g} MB"


def refusal(name: str, data: bytes, mime: str | None, held: Sequence[int], limits: Attachments, *,
            size: int | None = None) -> str:
    """Why this file cannot be attached ("" when it can), given the sizes of the files already held.

    ``data`` may be only the file's first ``max_file_bytes + 1`` bytes (what is read of an upload);
    ``size`` is then the whole file's size (-1: unknown). None: ``data`` is the whole file.
    """
    label = name or "The file"
    if len(held) >= limits.max_files:
        return f"{label}: a message takes at most {limits.max_files} files."
    if len(data) > limits.max_file_bytes:
        whole = len(data) if size is None else size
        said = human_size(whole) if whole > limits.max_file_bytes else f"over {human_size(limits.max_file_bytes)}"
        return f"{label} is {said}: the limit is {human_size(limits.max_file_bytes)} per file."
    if sum(held) + len(data) > limits.max_message_bytes:
        return f"{label}: the files of a message may be {human_size(limits.max_message_bytes)} together."
    if not data:
        return f"{label} is empty."
    if mime is None or not limits.accepts(mime):
        what = f"a {mime} file" if mime else "not a file type this chat knows"
        return f"{label} is {what} (by its content): accepted are {limits.described()}."
    return _pixel_refusal(label, data, mime)


def _pixel_refusal(label: str, data: bytes, mime: str) -> str:
    """Why an image has too many pixels to be decoded ("" when it has not): from its header alone."""
    if not mime.startswith("image/"):
        return ""
    from PIL import Image, UnidentifiedImageError  # imported on first use: the chat starts without it

    limit = f"the limit is {MAX_IMAGE_PIXELS // 1_000_000} megapixels per image."
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the size is what is checked here
            with Image.open(io.BytesIO(data)) as image:  # reads the header; decodes nothing
                width, height = image.size
    except Image.DecompressionBombError:  # Pillow's own cap (twice its MAX_IMAGE_PIXELS), far above ours
        return f"{label} has too many pixels: {limit}"
    except (UnidentifiedImageError, OSError, ValueError):
        return ""  # not an image Pillow reads: nothing here decodes it
    return f"{label} is {width} x {height} pixels: {limit}" if width * height > MAX_IMAGE_PIXELS else ""


def thumbnail(data: bytes, mime: str) -> str:
    """A small PNG ``data:`` URL of an image (at most ``THUMB_PIXELS`` a side), or "" (not an image, unreadable)."""
    if not mime.startswith("image/"):
        return ""
    from PIL import Image, UnidentifiedImageError  # imported on first use: the chat starts without it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # its size is checked here
            image = Image.open(io.BytesIO(data))
        with image:
            if image.width * image.height > MAX_IMAGE_PIXELS:  # refused before (refusal); never decoded here
                return ""
            image.thumbnail((THUMB_PIXELS, THUMB_PIXELS))
            out = io.BytesIO()
            image.convert("RGBA").save(out, format="PNG", optimize=True)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        log.info("no thumbnail for a %s attachment: %s", mime, exc)
        return ""
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")
