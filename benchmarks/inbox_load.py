"""Issue 38 §5: how long does one load of the approvals inbox take with 300 waiting threads, before and now?

One owner has 300 threads, each waiting on one ``delete_files`` approval of the demo agent, in a
fresh SQLite thread database. The first thread is made by a real run (the demo agent on loopback,
in-process); the other 299 are copies of its rows under new thread ids (the same rows a run
writes). Then, in a fresh process per tree and a fresh tab (a new ``rx.State()`` tree, as after a
reload), ``inbox.load`` is timed:

- ``first``: the tab's first load (what opening ``/inbox`` runs);
- ``again``: the median of 5 more loads in the same tab (what every inbox event and every live
  change of one of the owner's threads runs).

"Before" is the baseline commit (default ``8824d90``), checked out into a temporary git worktree;
"now" is this checkout. Each tree seeds its own database with its own code. Also printed: the
cards in the tab's state, the threads its state holds in memory, and the pickled size of the
chat state (what Redis would store per tab).

Run: ``.venv/bin/python -m benchmarks.inbox_load [baseline-commit]`` (about a minute).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "8824d90"
THREADS = 300
AGAIN = 5

# Runs in the tree under test (cwd and sys.path[0]); prints one JSON line.
PROBE = r'''
import asyncio, json, os, pickle, sqlite3, statistics, sys, threading, time
sys.path.insert(0, os.getcwd())
import reflex as rx
from reflex.istate.data import SessionData

THREADS, AGAIN, OWNER = int(sys.argv[1]), int(sys.argv[2]), "bench-inbox-owner"


def tab(chat_cls):
    root = rx.State(_reflex_internal_init=True)
    token = f"bench-inbox-{time.monotonic_ns()}"
    root.rx_router_session = SessionData(client_token=token, client_ip="", session_id=token)
    chat = root.get_substate(chat_cls.get_full_name().split("."))
    try:
        from interrupt_chat import identity
    except ImportError:  # before the socket-bound identity
        chat.owner_cookie = OWNER
    else:
        identity.bind(token, OWNER)
    return chat


def serve(app):
    import socket, uvicorn
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="critical", access_log=False))
    threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return f"http://127.0.0.1:{sock.getsockname()[1]}/"


def clone(path, owner_key, thread_id, count):
    """``count`` copies of one waiting thread's rows, under new ids, waiting since one second apart."""
    db = sqlite3.connect(path)
    cols = [r[1] for r in db.execute("PRAGMA table_info(interrupt_chat_threads)")]
    mcols = [r[1] for r in db.execute("PRAGMA table_info(interrupt_chat_messages)")]
    row = db.execute(f"SELECT {', '.join(cols)} FROM interrupt_chat_threads WHERE owner=? AND thread_id=?",
                     (owner_key, thread_id)).fetchone()
    messages = db.execute(f"SELECT {', '.join(mcols)} FROM interrupt_chat_messages WHERE owner=? AND thread_id=?",
                          (owner_key, thread_id)).fetchall()
    for n in range(count):
        new = f"{thread_id}-copy-{n:04d}"
        values = [new if c == "thread_id" else v for c, v in zip(cols, row)]
        db.execute(f"INSERT INTO interrupt_chat_threads ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                   values)
        for m in messages:
            db.execute(f"INSERT INTO interrupt_chat_messages ({', '.join(mcols)}) VALUES "
                       f"({', '.join('?' * len(mcols))})", [new if c == "thread_id" else v for c, v in zip(mcols, m)])
    db.commit()
    db.close()


async def main():
    from interrupt_chat.demo.agent import create_app
    from interrupt_chat.assembly.registry import new_chat_state
    from interrupt_chat import inbox, persistence

    url = serve(create_app(delay=0.0))
    chat_cls = new_chat_state("bench-inbox", agent_url=url, configs=[])
    seeder = tab(chat_cls)
    await chat_cls.on_load_chat.fn(seeder)
    await chat_cls.new_thread.fn(seeder)
    await chat_cls.send.fn(seeder, {"text": "approval"})
    thread_id, owner_key = seeder.thread_id, seeder._owner_key
    assert seeder._sessions[thread_id].tracker.pending is not None
    clone(os.environ["INTERRUPT_CHAT_DB_URL"].removeprefix("sqlite:///"), owner_key, thread_id, THREADS - 1)

    chat = tab(chat_cls)  # a fresh tab: what a reload of /inbox has
    await chat_cls.on_load_chat.fn(chat)
    started = time.perf_counter()
    await inbox.load(chat, chat_cls)
    first = time.perf_counter() - started
    again = []
    for _ in range(AGAIN):
        started = time.perf_counter()
        await inbox.load(chat, chat_cls)
        again.append(time.perf_counter() - started)
    waiting = getattr(chat, "inbox_total", None)
    try:
        size = len(pickle.dumps(chat))
    except Exception:  # noqa: BLE001 - a measurement only
        size = -1
    print(json.dumps({"first": first, "again": statistics.median(again), "cards": len(chat.inbox),
                      "waiting": waiting if waiting is not None else len(chat.inbox),
                      "sessions": len(chat._sessions), "pickled": size}))
    persistence.database().close()


asyncio.run(main())
'''


def _measure(tree: Path, folder: Path, name: str) -> dict[str, float]:
    env = {**os.environ, "INTERRUPT_CHAT_DB_URL": f"sqlite:///{folder / (name + '.db')}",
           "PYTHONPATH": str(tree), "INTERRUPT_CHAT_REDIS_URL": "", "REFLEX_REDIS_URL": ""}
    done = subprocess.run([sys.executable, "-c", PROBE, str(THREADS), str(AGAIN)], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name}: the probe failed\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Measure the baseline commit (a temporary worktree) and this checkout; print the ratios."""
    baseline = sys.argv[1] if len(sys.argv) > 1 else BASELINE
    with tempfile.TemporaryDirectory(prefix="ic-inbox-bench-") as tmp:
        folder, worktree = Path(tmp), Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), baseline], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            before = _measure(worktree, folder, "before")
            now = _measure(ROOT, folder, "now")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False,
                           capture_output=True)
    print(f"inbox load, {THREADS} waiting threads, one owner, SQLite (before = {baseline}, now = this checkout)")
    print(f"{'':28}{'before':>12}{'now':>12}{'before/now':>12}")
    for key, label in (("first", "first load (fresh tab), s"), ("again", f"a load again (median of {AGAIN}), s")):
        print(f"{label:28}{before[key]:12.3f}{now[key]:12.3f}{before[key] / now[key]:11.1f}x")
    for key, label in (("cards", "cards in the tab's state"), ("sessions", "threads in the tab's memory"),
                       ("pickled", "pickled chat state, bytes")):
        print(f"{label:28}{before[key]:12}{now[key]:12}")
    print(f"requests waiting (listed):  {before['waiting']:>11}{now['waiting']:12}")


if __name__ == "__main__":
    main()
