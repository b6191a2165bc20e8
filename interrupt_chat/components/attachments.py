"""Attachments on the page: the composer's file input and drop zone, its chips, and a sent message's files."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import Var

from ..model.files import Attachments
from .page_script import page_script

__all__ = ["ATTACH_INPUT_ID", "UPLOAD_ID", "attach_button", "attachment_chips", "attachment_script", "drop_zone",
           "message_attachments"]

UPLOAD_ID = "ic-attach"
ATTACH_INPUT_ID = "ic-attach-input"

# Paste files (a screenshot) into the composer, and the Attach button: both hand the files to the drop
# zone's own file input, whose change event uploads them like a drop does.
_SCRIPT = r"""
(() => {
  if (window.__interruptChatAttach) return;
  window.__interruptChatAttach = true;
  const hand = (files) => {
    const input = document.getElementById("ic-attach-input");
    if (!input || !files.length) return false;
    const moved = new DataTransfer();
    for (const file of files) moved.items.add(file);
    input.files = moved.files;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  };
  document.addEventListener("paste", (e) => {
    if (!e.target || !e.target.closest || !e.target.closest(".ic-composer")) return;
    const files = Array.from((e.clipboardData && e.clipboardData.files) || []);
    if (files.length && hand(files)) e.preventDefault();
  });
  document.addEventListener("click", (e) => {
    const button = e.target && e.target.closest && e.target.closest("[data-ic-attach]");
    const input = button && document.getElementById("ic-attach-input");
    if (input) input.click();
  });
})();
"""


def attachment_script() -> rx.Component:
    """Paste and the Attach button (client-side: no round trip)."""
    return page_script("ChatAttach", _SCRIPT)


def _names_and_sizes(rejected: Any) -> Any:
    """react-dropzone's rejections, as ``[{name, size}]`` (a ``File`` itself reaches the server as ``{}``)."""
    return Var(_js_expr=f"(({rejected}) || []).map((r) => ({{name: (r && r.file && r.file.name) || '', "
                        "size: (r && r.file && r.file.size) || 0}))").to(list)


def drop_zone(state: Any, *children: rx.Component) -> rx.Component:
    """The composer as a drop zone: files dropped on it (or chosen, or pasted) go to ``attach_files``.

    Its file input is ``composer-attach``; clicks and keys on the zone stay the composer's. A file
    larger than the chat takes is refused on the page, before it is sent (``refuse_dropped``); the
    server checks every file again, and refuses a larger request whole (``attaching.request_cap``).
    """
    limits = getattr(state, "attachment_limits", None) or Attachments()  # Chat(attachments=...), else the defaults
    zone = rx.upload(
        *children,
        id=UPLOAD_ID,
        multiple=True,
        no_click=True,
        no_keyboard=True,
        max_size=limits.max_file_bytes,
        on_drop=state.attach_files(rx.upload_files(upload_id=UPLOAD_ID)),
        on_drop_rejected=lambda rejected: state.refuse_dropped(_names_and_sizes(rejected)),
        class_name="ic-drop-zone",
        border="none",
        padding="0",
    )
    file_input = zone.children[0].children[0]  # rx.upload's own <input type="file"> (react-dropzone's)
    file_input.id = ATTACH_INPUT_ID
    file_input.custom_attrs.update({"data-testid": "composer-attach", "aria-label": "Attach files"})
    return zone


def attach_button() -> rx.Component:
    """Opens the file chooser (the drop zone's input)."""
    return rx.icon_button(rx.icon("paperclip", size=14), type="button", size="2", variant="soft", color_scheme="gray",
                          high_contrast=True, custom_attrs={"data-ic-attach": "true", "aria-label": "Attach files",
                                                            "title": "Attach files"})


def _chip(state: Any, row: Any) -> rx.Component:
    return rx.hstack(
        rx.cond(row.thumb != "", rx.image(src=row.thumb, alt="", class_name="ic-thumb"),
                rx.icon("file_text", size=16)),
        rx.text(row.name, size="1", class_name="ic-attachment-name"),
        rx.text(row.size, size="1", color_scheme="gray", high_contrast=True),
        rx.icon_button(rx.icon("x", size=12), type="button", size="1", variant="ghost", color_scheme="gray",
                       high_contrast=True, on_click=state.remove_attachment(row.file_id),
                       custom_attrs={"data-testid": "attachment-remove", "aria-label": "Remove " + row.name.to(str)}),
        spacing="1", align="center", class_name="ic-attachment-chip",
        custom_attrs={"data-testid": "attachment-chip", "data-name": row.name, "data-mime": row.mime},
    )


def attachment_chips(state: Any) -> rx.Component:
    """The files ready to send, and why a file was refused (``composer-error``)."""
    return rx.fragment(
        rx.cond(state.attachments.length() > 0,
                rx.hstack(rx.foreach(state.attachments, lambda row: _chip(state, row)), spacing="2", wrap="wrap",
                          class_name="ic-attachment-chips", custom_attrs={"aria-label": "Files to send"})),
        rx.cond(state.composer_error != "",
                rx.text(state.composer_error, size="1", color_scheme="red", high_contrast=True, class_name="ic-hint",
                        custom_attrs={"data-testid": "composer-error", "role": "alert"})),
    )


def _attachment(row: Any) -> rx.Component:
    return rx.hstack(
        rx.cond(row.thumb != "", rx.image(src=row.thumb, alt=row.name, class_name="ic-thumb"),
                rx.hstack(rx.icon("file_text", size=16), rx.text(row.name, size="1"), rx.text(row.size, size="1"),
                          spacing="1", align="center")),
        class_name="ic-message-attachment",
        custom_attrs={"data-testid": "message-attachment", "data-name": row.name, "data-mime": row.mime,
                      "title": row.name.to(str) + " (" + row.size.to(str) + ")"},
    )


def message_attachments(row: Any) -> rx.Component:
    """A sent message's files: a thumbnail for images, name and size for the rest."""
    return rx.cond(row.attachments.length() > 0,
                   rx.hstack(rx.foreach(row.attachments, _attachment), spacing="2", wrap="wrap",
                             class_name="ic-message-attachments"))
