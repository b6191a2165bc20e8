"""Copy and feedback (issue 25 §3): a rating per message and owner, toggled, with a comment; stored, shown on the
owner's other tabs, exported, and handed to ``Chat(on_feedback=fn)`` (sync or async) outside the lock."""

from __future__ import annotations

import json
from typing import Any

import pytest

import interrupt_chat as ic
from interrupt_chat.store import feedback as store
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

pytestmark = pytest.mark.loopback

GIVEN: list[dict[str, Any]] = []


async def _told(feedback: dict[str, Any]) -> None:  # the app's function: async here
    GIVEN.append(feedback)


@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="feedback", on_feedback=_told)


def _answer(tab: Tab) -> str:
    return next(m.id for m in reversed(tab.session.transcript.messages) if m.role == "assistant")


async def test_a_rating_toggles_keeps_its_comment_and_reaches_the_app_the_store_and_the_export(chat, agent, database):
    GIVEN.clear()
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("hello")
    answer = _answer(tab)
    rate, comment = chat.state.rate_message.fn, chat.state.comment_message.fn
    await rate(tab.chat, answer, "up")
    assert tab.chat.feedback == {answer: "up"}
    await comment(tab.chat, {"message_id": answer, "comment": "  clear and short  "})
    assert tab.chat.feedback_comments == {answer: "clear and short"}
    [stored] = database.feedback(tab.chat._owner_key)
    assert (stored.message_id, stored.rating, stored.comment) == (answer, "up", "clear and short")
    other = await Tab(chat.state, agent[1]).load()  # another tab (or a reload) of the owner shows it
    assert other.chat.feedback == {answer: "up"} and other.chat.feedback_comments == {answer: "clear and short"}
    await rate(tab.chat, answer, "down")  # another rating: a new one, without the comment
    await rate(tab.chat, answer, "down")  # the same again: taken back
    assert tab.chat.feedback == {} and database.feedback(tab.chat._owner_key) == []
    assert [(g["rating"], g["comment"]) for g in GIVEN] == [("up", ""), ("up", "clear and short"), ("down", ""),
                                                           (None, "")]
    await rate(tab.chat, answer, "down")
    lines = [json.loads(line) for line in database.export_jsonl(tab.chat._owner_key).splitlines()]
    assert [(line["messageId"], line["rating"]) for line in lines if line.get("kind") == "feedback"] == [
        (answer, "down")]


async def test_only_an_answer_of_the_shown_thread_can_be_rated(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("hello")
    user = next(m.id for m in tab.session.transcript.messages if m.role == "user")
    await chat.state.rate_message.fn(tab.chat, user, "up")  # not an answer
    await chat.state.rate_message.fn(tab.chat, "msg-made-up", "up")
    await chat.state.rate_message.fn(tab.chat, _answer(tab), "sideways")
    assert tab.chat.feedback == {} and database.feedback(tab.chat._owner_key) == []
    with pytest.raises(ValueError):
        store.give(database, "o", "t", "m", "meh")


def test_copy_gives_the_source_text(chat, agent):
    import asyncio

    tab = asyncio.run(_sent(chat, agent))
    answer = next(m for m in tab.session.transcript.messages if m.role == "assistant")
    event = chat.state.copy_message.fn(tab.chat, answer.id)
    sent = str(event.args) if event is not None else ""
    assert "clipboard" in sent and "**approval**" in sent and "def greet(name: str)" in sent  # the markdown source
    assert chat.state.copy_message.fn(tab.chat, "msg-made-up") is None


async def _sent(chat, agent) -> Tab:
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("markdown")
    return tab
