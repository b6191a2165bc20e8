"""Refresh, act, commit; on a loss reload and try again (``interrupt_chat.tab.claims``), with the database faked."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from interrupt_chat.agui import AgentSession
from interrupt_chat.tab import claims, pausing, persistence

Commit = persistence.Commit


class Script:
    """What ``persistence.commit`` answers, one write after another, and what the helper did."""

    def __init__(self, monkeypatch, *answers: Commit) -> None:
        self.answers, self.commits, self.reloads, self.undone, self.tries = list(answers), [], [], 0, 0
        monkeypatch.setattr(persistence, "commit", self.commit)
        monkeypatch.setattr(persistence, "reload", self.reload)

    async def commit(self, chat: Any, session: AgentSession, **kwargs: Any) -> Commit:
        self.commits.append(kwargs)
        return self.answers.pop(0)

    async def reload(self, chat: Any, thread_id: str) -> None:
        self.reloads.append(thread_id)

    async def undo(self) -> None:
        self.undone += 1

    def attempt(self, session: AgentSession, **kwargs: Any):
        async def attempt() -> claims.Attempt[int]:
            self.tries += 1
            return claims.Attempt(session, self.tries, undo=self.undo, **kwargs)
        return attempt


@pytest.fixture
def chat() -> Any:
    return SimpleNamespace(notice="")


@pytest.mark.parametrize("answer", [Commit.WON, Commit.LOCAL])
async def test_a_write_that_holds_returns_its_attempt(monkeypatch, chat, answer):
    script = Script(monkeypatch, answer)
    session = AgentSession("http://127.0.0.1:9/")
    claimed = await claims.claim(chat, script.attempt(session, in_flight=True))
    assert claimed is not None and claimed.session is session and claimed.value == 1
    assert script.commits == [{"in_flight": True, "branches": None, "unless_paused": ""}]
    assert script.undone == 0 and script.reloads == [] and chat.notice == ""


@pytest.mark.parametrize("loss", [Commit.LOST, Commit.DELETED])
async def test_a_lost_write_is_undone_and_tried_again_on_the_reloaded_thread(monkeypatch, chat, loss):
    script = Script(monkeypatch, loss, loss, Commit.WON)
    session = AgentSession("http://127.0.0.1:9/")
    claimed = await claims.claim(chat, script.attempt(session))
    assert claimed is not None and claimed.value == 3
    assert script.undone == 2 and script.reloads == [session.thread_id] * 2 and chat.notice == ""


async def test_a_pause_refuses_a_runs_claim_once_and_the_copy_is_read_back(monkeypatch, chat):
    """The person's pause, read with the claim (decision 0034): undone, the stored copy back, no other try."""
    script = Script(monkeypatch, Commit.PAUSED)
    chat._owner_key, chat.paused = "alice|app.state.chat", False
    session = AgentSession("http://127.0.0.1:9/")
    assert await claims.claim(chat, script.attempt(session, in_flight=True, unless_paused=True)) is None
    assert script.commits == [{"in_flight": True, "branches": None, "unless_paused": "alice"}]
    assert script.tries == 1 and script.undone == 1 and script.reloads == [session.thread_id]
    assert chat.paused and chat.notice == pausing.PAUSED_MESSAGE


async def test_a_runs_claim_that_holds_clears_the_pause_banner(monkeypatch, chat):
    script = Script(monkeypatch, Commit.WON)
    chat._owner_key, chat.paused = "alice|app.state.chat", True  # shown before another tab resumed the agents
    session = AgentSession("http://127.0.0.1:9/")
    assert await claims.claim(chat, script.attempt(session, in_flight=True, unless_paused=True)) is not None
    assert not chat.paused and chat.notice == ""


async def test_an_attempt_told_of_a_deleted_thread_ends_there(monkeypatch, chat):
    script, told = Script(monkeypatch, Commit.DELETED), []

    async def deleted() -> None:
        told.append(True)

    session = AgentSession("http://127.0.0.1:9/")
    assert await claims.claim(chat, script.attempt(session, deleted=deleted)) is None
    assert told == [True] and script.tries == 1 and script.undone == 1 and script.reloads == []


async def test_every_write_lost_gives_up_with_the_conflict_notice(monkeypatch, chat):
    script = Script(monkeypatch, *[Commit.LOST] * claims.CLAIM_ATTEMPTS)
    session = AgentSession("http://127.0.0.1:9/")
    assert await claims.claim(chat, script.attempt(session)) is None
    assert script.tries == claims.CLAIM_ATTEMPTS == 3 and script.undone == 3 and len(script.reloads) == 3
    assert chat.notice == persistence.CONFLICT_NOTICE


async def test_an_attempt_that_stops_writes_nothing(monkeypatch, chat):
    script = Script(monkeypatch)
    chat.notice = "Wait for the current answer, or stop it."

    async def stop() -> None:
        return None

    assert await claims.claim(chat, stop) is None
    assert script.commits == [] and script.reloads == [] and chat.notice == "Wait for the current answer, or stop it."
