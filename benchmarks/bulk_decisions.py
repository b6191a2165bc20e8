"""How long does a bulk approval of 50 requests across 50 threads take, on one worker? (issue 24)

One owner has 50 threads, each waiting on one ``delete_files`` approval of the demo agent (served
on loopback in its own process, no delay). Timed, from the click to the last resume saved (every
thread idle again in the database):

- the baseline, measured here in the same run: the same 50 answered one after another through the
  inbox's own per-card path (``inbox.answer``: what 50 clicks on "Approve" do, each waiting for
  its resume to end);
- ``bulk.decide_all`` (what ``inbox-bulk-confirm-yes`` runs): each answered once through the
  server-side path, threads side by side, at most ``CONCURRENT_THREADS`` answering and
  ``headless.CONCURRENT_RESUMES`` resumes in flight at once.

Both run in this one process (one event loop: one worker), on a fresh SQLite thread database.
Prints the seconds, the ratio, and the audit entries each wrote (exactly 50: one answer per request).

Run: ``.venv/bin/python -m benchmarks.bulk_decisions`` (about 30 s).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import reflex as rx  # noqa: E402
from reflex.istate.data import SessionData  # noqa: E402

from interrupt_chat import identity  # noqa: E402

ITEMS = 50
OWNER = "bench-owner"
AGENT_CODE = """
import sys, uvicorn
from interrupt_chat.demo.agent import create_app
uvicorn.run(create_app(delay=0.0), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tab(chat_cls):
    root = rx.State(_reflex_internal_init=True)
    token = f"bench-{time.monotonic_ns()}"
    root.rx_router_session = SessionData(client_token=token, client_ip="", session_id=token)
    chat = root.get_substate(chat_cls.get_full_name().split("."))
    identity.bind(token, OWNER)  # the tab's socket: its browser's identity
    return chat


async def _waiting_threads(chat_cls, count: int):
    """A tab whose owner has ``count`` threads, each waiting on one approval; its inbox cards."""
    from interrupt_chat.approvals import inbox

    chat = _tab(chat_cls)
    await chat_cls.on_load_chat.fn(chat)
    for _ in range(count):
        await chat_cls.new_thread.fn(chat)
        await chat_cls.send.fn(chat, {"text": "approval"})
    await inbox.load(chat, chat_cls)
    assert len(chat.inbox) == count, len(chat.inbox)
    return chat, list(chat.inbox)


async def _all_idle(db, owner_key: str, thread_ids: list[str]) -> None:
    while True:
        heads = [db.head(owner_key, t) for t in thread_ids]
        if not any(h.in_flight for h in heads) and not db.waiting(owner_key):
            return
        await asyncio.sleep(0.01)


async def _one_by_one(chat_cls) -> tuple[float, str]:
    from interrupt_chat.approvals import inbox
    from interrupt_chat.tab import persistence

    chat, cards = await _waiting_threads(chat_cls, ITEMS)
    started = time.perf_counter()
    for card in cards:
        await inbox.answer(chat, chat_cls, "resolve", card.thread_id, {"approved": True}, card.id, card.run_id)
    await _all_idle(persistence.database(), chat._owner_key, [c.thread_id for c in cards])
    return time.perf_counter() - started, chat._owner_key


async def _bulk(chat_cls) -> tuple[float, str]:
    from interrupt_chat.approvals import bulk
    from interrupt_chat.tab import persistence

    chat, cards = await _waiting_threads(chat_cls, ITEMS)
    started = time.perf_counter()
    result = await bulk.decide_all(chat_cls, chat._owner_key, cards, approve=True)
    assert result.done == ITEMS, result.skipped
    await _all_idle(persistence.database(), chat._owner_key, [c.thread_id for c in cards])
    return time.perf_counter() - started, chat._owner_key


async def _entries(db, key: str, timeout: float = 10.0) -> list:
    """The owner's audit entries once all ``ITEMS`` are there: each is written after its resume leaves
    (decision 0028), so the last ones can follow the threads' idle state by a moment."""
    deadline = time.perf_counter() + timeout
    while len(entries := db.decisions(key)) < ITEMS and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    return entries


async def main() -> None:
    import interrupt_chat as ic
    from interrupt_chat.tab import persistence

    port = _free_port()
    agent = subprocess.Popen([sys.executable, "-c", AGENT_CODE, str(port)])
    try:
        for _ in range(200):
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=0.5)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        with tempfile.TemporaryDirectory() as folder:
            os.environ["INTERRUPT_CHAT_DB_URL"] = f"sqlite:///{folder}/threads.db"
            baseline_chat = ic.Chat(f"http://127.0.0.1:{port}/", name="bench-one-by-one").state
            bulk_chat = ic.Chat(f"http://127.0.0.1:{port}/", name="bench-bulk").state
            one_by_one, first = await _one_by_one(baseline_chat)
            print(f"one by one (inbox.answer, {ITEMS} clicks, 50 threads): {one_by_one:6.2f} s")
            together, second = await _bulk(bulk_chat)
            print(f"bulk.decide_all ({ITEMS} selected, 50 threads):       {together:6.2f} s")
            print(f"bulk / one by one: {together / one_by_one:.2f}x  ({one_by_one / together:.1f}x faster)")
            db = persistence.database()
            assert db is not None
            for name, key in (("one by one", first), ("bulk", second)):
                entries = await _entries(db, key)
                print(f"{name}: {len(entries)} audit entries, by {sorted({e.by for e in entries})}")
            db.close()
    finally:
        agent.terminate()
        agent.wait(10)


if __name__ == "__main__":
    asyncio.run(main())
