"""``stream_text``: a row's text that streams in as new bytes only (``stream_text.jsx``).

The backend sends the text of a streaming message through Reflex's event channel (see
:mod:`interrupt_chat.tab.streaming`); the row var carries the prefix the page had when the message
started. The component shows the longer of the two and asks for the whole text again
(``on_gap``) when the page missed part of it.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex_base.event import EventHandler, no_args_event_spec

__all__ = ["StreamText", "stream_text"]


class StreamText(rx.Component):
    """The React component behind :func:`stream_text`, shipped with the package."""

    library = rx.asset("stream_text.jsx", shared=True).importable_path
    lib_dependencies: list[str] = ["react-markdown@10.1.0", "remark-gfm@4.0.1",  # noqa: RUF012 - Reflex's field
                                   "rehype-unwrap-images@1.0.0"]
    tag = "StreamText"

    stream_key: rx.Var[str]
    base: rx.Var[str]
    streaming: rx.Var[bool]
    markdown: rx.Var[bool]
    element: rx.Var[str]

    on_gap: EventHandler[no_args_event_spec]  # type: ignore[type-arg, valid-type]  # Reflex's own idiom


def stream_text(row: Any, text: Any, on_gap: Any, *, markdown: bool = False, tag: str = "div",
                **props: Any) -> rx.Component:
    """The streamed text of a row var.

    Args:
        row: the row (a ``MessageRow`` or ``ToolCallRow`` var): its ``stream``, ``partial`` and
            ``streaming`` fields.
        text: the row's text var (the prefix the var carries).
        on_gap: the chat state's ``resync_stream`` handler.
        markdown: render sanitized markdown (no raw HTML, S24) rather than plain text.
        tag: the element the text is drawn in.
        **props: more props (``class_name``, ``custom_attrs``…).
    """
    return StreamText.create(stream_key=row.stream, base=text, streaming=row.streaming,
                             markdown=markdown, element=tag, on_gap=on_gap, **props)
