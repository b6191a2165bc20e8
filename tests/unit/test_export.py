"""A thread as a file (issue 27): ``ThreadDB.export`` as Markdown and JSON, and the thread list's
``export_thread`` that downloads both; read back, they hold the thread's messages, tool calls, what waits and
the decisions, with answers masked as stored (S23)."""

from __future__ import annotations

import json

import pytest
from ag_ui.core import AssistantMessage, UserMessage

import interrupt_chat as ic
from interrupt_chat.tab import threads
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab

pytestmark = pytest.mark.loopback


async def _thread(agent) -> Tab:
    tab = await Tab(ic.Chat(agent[0], name="export").state, agent[1]).load()
    await tab.send("history one")
    await tab.send("approval")  # answered: a decision
    await tab.resolve({"approved": True}, tab.ids()[0])
    await tab.send("credential")  # still waiting at the end
    return tab


async def test_json_reads_back_as_ag_ui_messages_with_what_waits_and_the_decisions(agent, database):
    tab = await _thread(agent)
    owner, thread_id = tab.chat._owner_key, tab.chat.thread_id
    document = json.loads(database.export(owner, thread_id, "json"))
    assert document["threadId"] == thread_id and document["title"] == "history one"
    messages = [(UserMessage if m["role"] == "user" else AssistantMessage).model_validate(m)
                for m in document["messages"] if m["role"] in ("user", "assistant")]
    assert [m.content for m in messages if m.role == "user"] == ["history one", "approval", "credential"]
    assert [w["reason"] for w in document["waiting"]] == ["input_required"]
    [decision] = document["decisions"]
    assert (decision["action"], decision["by"], decision["payload"]) == ("resolved", "person", {"approved": True})


async def test_markdown_has_a_heading_per_message_and_fenced_tool_calls(agent, database):
    tab = await _thread(agent)
    text = database.export(tab.chat._owner_key, tab.chat.thread_id, "markdown")
    assert text.startswith("# history one\n")
    assert text.count("## You") == 3 and "## Assistant" in text
    assert "*Tool call* `delete_files`" in text and "```json" in text
    assert "## Waiting for you" in text and "## Decisions" in text and "resolved by person" in text


async def test_unknown_threads_and_formats(agent, database):
    tab = await _thread(agent)
    assert database.export(tab.chat._owner_key, "thread-nope", "json") is None
    assert database.export("someone else", tab.chat.thread_id, "json") is None
    with pytest.raises(ValueError, match="export format"):
        database.export(tab.chat._owner_key, tab.chat.thread_id, "pdf")


async def test_the_thread_lists_export_gives_both_files_named_after_the_thread(agent, database):
    tab = await _thread(agent)
    files = await threads.export(tab.chat, tab.cls, tab.chat.thread_id)
    assert [name.rsplit(".", 1)[1] for name, _ in files] == ["md", "json"]
    assert files[0][0].startswith("history-one-") and json.loads(files[1][1])["threadId"] == tab.chat.thread_id
    assert await threads.export(tab.chat, tab.cls, "thread-not-mine") == []


async def test_s23_a_secret_answer_is_in_neither_file(agent, database):
    tab = await _thread(agent)
    await tab.resolve({"api_key": "sk-very-secret-123"}, tab.ids()[0])
    for fmt in ("markdown", "json"):
        text = database.export(tab.chat._owner_key, tab.chat.thread_id, fmt)
        assert "sk-very-secret-123" not in text
    decisions = json.loads(database.export(tab.chat._owner_key, tab.chat.thread_id, "json"))["decisions"]
    assert decisions[-1]["payload"] == {"api_key": "[masked]"}
