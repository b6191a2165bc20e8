"""Attachments in the browser (issue 25 §4, contracts §5.3): chosen, dropped and pasted files become chips, go out
with the message as AG-UI 1.0 parts, show in the sent message after a reload; a file outside the limits or in
disguise is refused in ``composer-error`` with nothing sent and the typed text kept."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image
from playwright.sync_api import expect

from .a11y import assert_axe_clean
from .conftest import Chat, DemoAgent

pytestmark = pytest.mark.stage("dev", why="the file chips, drop and paste, under React's development checks")


def png(width: int = 64, height: int = 48) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "orange").save(out, "PNG")
    return out.getvalue()


def _file(name: str, mime: str, data: bytes) -> dict:
    return {"name": name, "mimeType": mime, "buffer": data}


def test_attach_send_and_see_the_files_after_a_reload(chat: Chat, demo_agent: DemoAgent):
    chat.open()
    chat.page.get_by_test_id("composer-attach").set_input_files(
        [_file("chart.png", "image/png", png()), _file("notes.txt", "text/plain", b"three notes")])
    chips = chat.page.get_by_test_id("attachment-chip")
    expect(chips).to_have_count(2)
    expect(chips.first).to_have_attribute("data-name", "chart.png")
    expect(chips.first).to_have_attribute("data-mime", "image/png")
    expect(chips.first.locator("img")).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    with chat.page.expect_file_chooser() as chooser:  # the paperclip opens the file chooser
        chat.page.get_by_role("button", name="Attach files").click()
    chooser.value.set_files([_file("extra.txt", "text/plain", b"x")])
    expect(chips).to_have_count(3)
    chips.last.get_by_test_id("attachment-remove").click()
    expect(chips).to_have_count(2)
    assert_axe_clean(chat.page, "the composer with files to send")
    chat.send("history with files")
    chat.wait("idle")
    expect(chips).to_have_count(0)
    sent = chat.messages("user").last.get_by_test_id("message-attachment")
    expect(sent).to_have_count(2)
    expect(sent.first).to_have_attribute("data-mime", "image/png")
    expect(sent.last).to_have_attribute("data-name", "notes.txt")
    [request] = demo_agent.records(demo_agent.last_thread())
    parts = next(m for m in request["messages"] if m["role"] == "user")["content"]
    assert [p["type"] for p in parts] == ["text", "image", "document"]
    assert parts[1]["source"]["type"] == "data" and parts[1]["source"]["mimeType"] == "image/png"
    chat.shot_content("attachments")  # the README's
    chat.page.reload()
    sent = chat.messages("user").last.get_by_test_id("message-attachment")
    expect(sent).to_have_count(2, timeout=20_000)
    expect(sent.first.locator("img")).to_have_attribute("alt", "chart.png")
    expect(sent.last).to_contain_text("notes.txt")
    assert_axe_clean(chat.page, "a sent message with files")


def test_an_oversized_or_disguised_file_is_refused_and_nothing_is_sent(chat: Chat, demo_agent: DemoAgent):
    chat.open()
    before = len(demo_agent.records())
    chat.input.fill("my draft")
    attach = chat.page.get_by_test_id("composer-attach")
    attach.set_input_files([_file("huge.txt", "text/plain", b"a" * (10 * 1024 * 1024 + 1))])
    error = chat.page.get_by_test_id("composer-error")
    expect(error).to_contain_text("huge.txt is 10 MB: the limit is 10 MB per file.")
    attach.set_input_files([_file("photo.png", "image/png", b"PK\x03\x04" + b"\x00" * 64)])
    expect(error).to_contain_text("photo.png is a application/zip file (by its content)")
    expect(error).to_contain_text("accepted are PNG, JPEG, GIF, WEBP images, PDF, plain text")
    expect(chat.page.get_by_test_id("attachment-chip")).to_have_count(0)
    expect(chat.input).to_have_value("my draft")
    assert_axe_clean(chat.page, "a refused file")
    assert len(demo_agent.records()) == before


def test_a_pasted_or_dropped_image_becomes_a_chip(chat: Chat):
    chat.open()
    chat.input.click()
    chat.page.evaluate("""async () => {
      const canvas = document.createElement("canvas"); canvas.width = 30; canvas.height = 20;
      canvas.getContext("2d").fillRect(0, 0, 30, 20);
      const blob = await new Promise((done) => canvas.toBlob(done, "image/png"));
      const data = new DataTransfer();
      data.items.add(new File([blob], "image.png", { type: "image/png" }));
      document.querySelector('[data-testid="chat-input"]').dispatchEvent(
        new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    }""")
    chip = chat.page.get_by_test_id("attachment-chip")
    expect(chip).to_have_count(1)
    expect(chip).to_have_attribute("data-name", "image.png")
    expect(chip).to_have_attribute("data-mime", "image/png")
    drop = chat.page.evaluate_handle("""() => {
      const data = new DataTransfer();
      data.items.add(new File(["%PDF-1.4\\n%%EOF\\n"], "report.pdf", { type: "application/pdf" }));
      return data;
    }""")
    chat.page.dispatch_event(".ic-drop-zone", "dragenter", {"dataTransfer": drop})
    chat.page.dispatch_event(".ic-drop-zone", "drop", {"dataTransfer": drop})
    expect(chip).to_have_count(2)
    expect(chip.last).to_have_attribute("data-mime", "application/pdf")
