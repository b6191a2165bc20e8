"""Attachments (issue 25 §4): checked by content, limited, stored outside the messages, sent as AG-UI 1.0 parts.

The policy (``files.py``) and the parts (``agui/multimodal.py``) are checked on their own; the chat through a tab
against the demo agent, which records each run's input.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
import reflex as rx
from ag_ui.core import ImageInputContent, InputContentDataSource, TextInputContent, UserMessage
from PIL import Image

import interrupt_chat as ic
from interrupt_chat.agui import multimodal
from interrupt_chat.model.files import Attachments, human_size, refusal, sniff, thumbnail
from interrupt_chat.store import files as store
from interrupt_chat.store.schema import messages_table
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab


def png(width: int = 40, height: int = 20) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "teal").save(out, "PNG")
    return out.getvalue()


PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
ZIP = b"PK\x03\x04" + b"\x00" * 40


def test_a_files_type_is_what_its_content_says_not_its_name():
    assert sniff(png()) == "image/png"
    assert sniff(PDF) == "application/pdf"
    assert sniff("plain text, ünïcode\n".encode()) == "text/plain"
    assert sniff(ZIP) == "application/zip"
    assert sniff(b"\x00\x01\x02binary") is None
    assert sniff(b"\xff\xfe\xfa not utf-8") is None


def test_each_refusal_names_the_file_the_reason_and_the_limit():
    limits = Attachments(max_file_bytes=100, max_message_bytes=150, max_files=2)
    assert refusal("a.txt", b"x" * 101, "text/plain", [], limits) == "a.txt is 101 B: the limit is 100 B per file."
    assert "together" in refusal("a.txt", b"x" * 60, "text/plain", [100], limits)
    assert "at most 2 files" in refusal("a.txt", b"x", "text/plain", [1, 1], limits)
    reason = refusal("photo.png", ZIP, "application/zip", [], Attachments())
    assert reason.startswith("photo.png is a application/zip file (by its content)") and "PDF, plain text" in reason
    assert "not a file type this chat knows" in refusal("x.png", b"\x00", None, [], Attachments())
    assert refusal("ok.pdf", PDF, "application/pdf", [], Attachments()) == ""
    assert Attachments(types=("image/*",)).accepts("image/avif") and not Attachments().accepts("image/avif")


def test_an_image_gets_a_small_thumbnail_and_anything_else_none():
    url = thumbnail(png(400, 200), "image/png")
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as small:
        assert small.size == (96, 48)
    assert thumbnail(PDF, "application/pdf") == "" and thumbnail(b"not an image", "image/png") == ""


def test_a_reference_is_resolved_for_the_run_and_the_thumbnail_stays_home():
    part = multimodal.file_part("file-1", "image/png", name="a.png", size=3, thumb="data:image/png;base64,AA")
    assert isinstance(part, ImageInputContent) and part.source.value == "ic-file:file-1"
    message = UserMessage(id="m", content=multimodal.user_content("look", [part]))
    plain = UserMessage(id="p", content="hi")
    sent = multimodal.resolve([plain, message], lambda file_id, mime: InputContentDataSource(
        value=f"data-of-{file_id}", mime_type=mime))
    assert sent[0] is plain
    text, image = sent[1].content
    assert isinstance(text, TextInputContent) and text.text == "look"
    assert image.source.value == "data-of-file-1" and image.metadata == {"fileId": "file-1", "name": "a.png", "size": 3}
    assert message.content[1].metadata["thumb"]  # the transcript's copy is untouched
    gone = multimodal.resolve([message], lambda file_id, mime: None)[0].content[1]
    assert gone == TextInputContent(text="[a.png: the file is no longer available]")
    hosted = multimodal.file_part("f", "application/pdf", name="r.pdf", size=1, url="https://files.example/r.pdf")
    assert hosted.type == "document" and hosted.source.value == "https://files.example/r.pdf"
    assert multimodal.attachments_of([text, part]) == [
        {"file_id": "file-1", "name": "a.png", "mime": "image/png", "size": 3, "thumb": "data:image/png;base64,AA"}]


# -- the chat ------------------------------------------------------------------------------------------

pytestmark = pytest.mark.loopback


@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="attachments", attachments=ic.Attachments(max_file_bytes=4096, max_files=3))


def upload(name: str, data: bytes) -> rx.UploadFile:
    return rx.UploadFile(file=io.BytesIO(data), path=Path(name))


async def test_files_are_stored_apart_sent_as_parts_and_resent_with_the_history(chat, agent, database, page):
    tab = await Tab(chat.state, agent[1]).load()
    image = png()
    await chat.state.attach_files.fn(tab.chat, [upload("a.png", image), upload("notes.txt", b"some notes")])
    assert [(a.name, a.mime) for a in tab.chat.attachments] == [("a.png", "image/png"), ("notes.txt", "text/plain")]
    assert tab.chat.attachments[0].thumb.startswith("data:image/png") and tab.chat.composer_error == ""
    await tab.send("history with files")
    assert tab.chat.attachments == []
    [sent] = [m for m in tab.requests()[-1]["messages"] if m["role"] == "user"]
    text, img, doc = sent["content"]
    assert text == {"type": "text", "text": "history with files"}
    assert img["type"] == "image" and img["source"] == {"type": "data", "mimeType": "image/png",
                                                       "value": base64.b64encode(image).decode()}
    assert "thumb" not in img["metadata"] and doc["type"] == "document" and doc["source"]["mimeType"] == "text/plain"
    with database.engine.connect() as conn:  # the stored message holds a reference, not the bytes
        bodies = [str(r.body) for r in conn.execute(messages_table.select())]
    assert any("ic-file:" in b for b in bodies) and not any(base64.b64encode(image).decode() in b for b in bodies)
    await tab.send("history again")  # the history re-sends the files, as the protocol requires
    first = next(m for m in tab.requests()[-1]["messages"] if m["role"] == "user")
    assert first["content"][1]["source"]["value"] == base64.b64encode(image).decode()
    other = await Tab(chat.state, agent[1]).load()  # a reload draws them
    row = next(r for r in page.history(other.chat) if r.role == "user")
    assert [(a.name, a.mime, a.size) for a in row.attachments] == [("a.png", "image/png", human_size(len(image))),
                                                                  ("notes.txt", "text/plain", "10 B")]
    owner, thread = tab.chat._owner_key, tab.chat.thread_id
    file_id = row.attachments[0].file_id
    assert store.read_owned(database, owner, file_id)[2] == image and store.read_owned(database, "x", file_id) is None
    database.delete(owner, thread)  # the files go with their thread
    assert store.read(database, file_id) is None


async def test_a_file_outside_the_limits_is_refused_and_nothing_else_changes(chat, agent):
    tab = await Tab(chat.state, agent[1]).load()
    await chat.state.attach_files.fn(tab.chat, [upload("big.txt", b"x" * 5000), upload("photo.png", ZIP),
                                                upload("ok.pdf", PDF)])
    assert [a.name for a in tab.chat.attachments] == ["ok.pdf"]
    assert "big.txt is 4.88 KB: the limit is 4 KB per file." in tab.chat.composer_error
    assert "photo.png is a application/zip file (by its content)" in tab.chat.composer_error
    await chat.state.attach_files.fn(tab.chat, [upload(f"{i}.txt", b"t") for i in range(3)])
    assert len(tab.chat.attachments) == 3 and "at most 3 files" in tab.chat.composer_error
    await chat.state.remove_attachment.fn(tab.chat, tab.chat.attachments[0].file_id)
    assert [a.name for a in tab.chat.attachments] == ["0.txt", "1.txt"] and tab.chat.composer_error == ""
    assert tab.requests() == []  # nothing was sent


async def test_an_edited_message_keeps_its_files(chat, agent):
    tab = await Tab(chat.state, agent[1]).load()
    await chat.state.attach_files.fn(tab.chat, [upload("a.pdf", PDF)])
    await tab.send("history with a pdf")
    user = next(m.id for m in tab.session.transcript.messages if m.role == "user")
    await chat.state.save_edit.fn(tab.chat, {"message_id": user, "text": "history, edited"})
    [sent] = [m for m in tab.requests()[-1]["messages"] if m["role"] == "user"]
    assert [p["type"] for p in sent["content"]] == ["text", "document"] and sent["content"][0]["text"] == \
        "history, edited"
    assert sent["content"][1]["source"]["value"] == base64.b64encode(PDF).decode()
