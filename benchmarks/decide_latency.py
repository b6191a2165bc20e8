"""The latencies a person feels around a decision, idle and beside K streaming chats (issue 45).

One run per app (this tree, then the ``--baseline`` commit checked out in a git worktree), each
served with ``reflex run --env prod`` (one granian worker, a fresh SQLite thread database) on a
loopback port, and driven by one person: two pages of ONE Chromium context (two tabs of one
browser: one owner) showing the same thread. Per round the first tab sends ``approval``; the
scripted demo agent (``interrupt_chat.demo.agent``) streams a ``delete_files`` tool call and ends
the run with an interrupt outcome; the person clicks Approve in the first tab; the agent answers
the resume with a follow-up ("Approved: ...").

Timestamps, all epoch milliseconds on this one machine's clock:

- **the pages**: a MutationObserver (``page.add_init_script``) stamps ``performance.timeOrigin +
  performance.now()`` when an ``interrupt-card`` with a new ``data-interrupt-id`` enters the DOM,
  when the newest assistant message is a new one and holds the follow-up's first word, and (a
  capture listener) when the Approve button is clicked;
- **the agent** (its own process: the demo agent and the load harness's paced agent behind a
  timing ASGI wrapper, ``_TimedAgent``): when it hands the interrupt outcome's ``RUN_FINISHED`` to
  its server ("the agent asks"), when it has read a resume request's body ("received"), and when
  it hands over the follow-up's first text delta;
- **a TCP proxy** between the backend and the agent (its own process, ``INTERRUPT_CHAT_AGENT_URL``
  points at it): when the first byte of each request reaches it (the resume POST "leaves the
  backend"). Proxy → agent is the agent side's share: its server parsing the request.

Latencies per round: agent asks → card in the asking tab; → card in the second tab (live sync);
click → the resume POST leaves the backend (proxy); click → received by the agent; click → first
character of the follow-up in the asking tab; in the second tab. Each is printed as p50 / p95 /
max over ``--rounds`` rounds (after ``--warmup`` unmeasured ones), idle and then with ``--load``
other chats streaming on the same worker (browserless: ``benchmarks/load_harness.py``'s clients in
a process of their own, each chat answering paced turns of ``--deltas`` deltas at ``--rate``/s, one
after the other, the whole time), then this tree's figures as ratios of the baseline's.

The demo agent sleeps ``--agent-delay`` (its default, 30 ms) before each streamed delta, the
follow-up's first one included: the click → follow-up figures hold that pause, printed apart as
the agent's own "received → first delta".

Run it alone (the backend, the agent, the load clients and Chromium share the machine's cores):

    .venv/bin/python -m benchmarks.decide_latency --load 300    # ~10 min: 20 rounds idle, 20 beside 300 chats; 2 apps
    .venv/bin/python -m benchmarks.decide_latency --baseline ''    # ~1 min: this tree, idle only
    .venv/bin/python -m benchmarks.decide_latency --load 300 --baseline '' --trace --py-spy PATH   # where it waits
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "27f9a7c"  # main before issue 45's work
FOLLOW_UP_WORD = "Approved"  # the first word of the demo agent's answer to an approved delete_files


def resumed_ids(body: bytes) -> list[str]:
    """The interrupt ids a ``RunAgentInput`` body resumes (its ``resume`` entries), or ``[]``."""
    if b'"interruptId"' not in body:
        return []
    try:
        entries = json.loads(body).get("resume") or []
        return [str(e["interruptId"]) for e in entries]
    except (ValueError, AttributeError, KeyError, TypeError):
        return []

# -- the page's probe -----------------------------------------------------------------------------

PROBE = """(() => {
  const stamp = () => performance.timeOrigin + performance.now();
  const ic = window.__ic = {cards: {}, clicks: [], before: null, follow: null};
  const assistants = () => document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  const check = () => {
    for (const card of document.querySelectorAll('[data-testid="interrupt-card"]')) {
      const id = card.getAttribute('data-interrupt-id');
      if (id && !(id in ic.cards)) ic.cards[id] = stamp();
    }
    if (ic.before !== null && ic.follow === null) {
      const all = assistants();
      const last = all[all.length - 1];
      if (last && !ic.before.has(last.getAttribute('data-message-id'))
          && last.textContent.includes('FOLLOW_UP_WORD')) ic.follow = stamp();
    }
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, characterData: true,
                                                 attributes: true, attributeFilter: ['data-interrupt-id']});
  document.addEventListener('click', (event) => {
    const button = event.target.closest && event.target.closest('[data-testid="interrupt-approve"]');
    if (!button) return;
    const card = button.closest('[data-testid="interrupt-card"]');
    ic.clicks.push([card ? card.getAttribute('data-interrupt-id') : null, stamp()]);
  }, true);
  ic.arm = () => {
    ic.before = new Set(Array.from(assistants()).map(m => m.getAttribute('data-message-id')));
    ic.follow = null;
  };
})();""".replace("FOLLOW_UP_WORD", FOLLOW_UP_WORD)


# -- the agent: the demo agent and the paced agent behind a timing wrapper ----------------------------

class _TimedAgent:
    """Raw ASGI: ``nonce:`` runs go to the paced agent (the load), the rest to the demo agent, timed."""

    def __init__(self, delay: float, deltas: int, rate: float) -> None:
        from benchmarks._paced_agent import PacedAgent
        from interrupt_chat.demo.agent import create_app

        self.demo = create_app(delay=delay, records=False)
        self.paced = PacedAgent(deltas, rate)
        self.runs: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Serve one request: ``GET /timings`` and ``/sent``, or a run."""
        from benchmarks._asgi import read_body, send_json

        if scope["type"] != "http":
            return
        if scope["method"] == "GET":
            path = scope["path"].rstrip("/")
            if path.endswith("/timings"):
                await send_json(send, json.dumps(self.runs).encode())
            else:
                await self.paced(scope, receive, send)  # /sent, /health
            return
        head = time.time()
        body = await read_body(receive)
        received = time.time()
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        if b"nonce:Z" in body:
            await self.paced(scope, replay, send)
            return
        ids = resumed_ids(body)
        run: dict[str, Any] = {"head": head, "received": received, "resume": bool(ids), "ids": ids}
        self.runs.append(run)

        async def timed(message: dict[str, Any]) -> None:
            chunk = message.get("body", b"") if message["type"] == "http.response.body" else b""
            if chunk:
                now = time.time()
                if "first_text" not in run and b"TEXT_MESSAGE_CONTENT" in chunk:
                    run["first_text"] = now
                if b'"RUN_FINISHED"' in chunk:
                    run["finished"] = now
                    with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                        event = json.loads(chunk.decode().split("data:", 1)[1])
                        outcome = event.get("outcome") or {}
                        if outcome.get("type") == "interrupt":
                            run["asked"] = [i["id"] for i in outcome.get("interrupts", [])]
            await send(message)

        await self.demo(scope, replay, timed)


def _serve_agent(args: argparse.Namespace) -> None:
    from benchmarks._asgi import serve

    serve(_TimedAgent(args.agent_delay, args.deltas, args.rate), 0, loop="asyncio", backlog=2048,
          timeout_keep_alive=60)


# -- the proxy between the backend and the agent ------------------------------------------------------

class _Requests:
    """HTTP/1.1 request boundaries in a client's byte stream: when each request's first byte came."""

    def __init__(self, log: Any) -> None:
        self.log = log
        self.buffer = b""
        self.first: float | None = None
        self.body_left: int | None = None  # bytes of the current body still to come; None: reading a head
        self.chunked = False
        self.body = b""

    def feed(self, data: bytes, now: float) -> None:
        """Account ``data`` (arrived at ``now``)."""
        while data:
            if self.body_left is None:
                if self.first is None:
                    self.first = now
                self.buffer += data
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                head, data = self.buffer[:end].lower(), self.buffer[end + 4:]
                self.buffer = b""
                length = re.search(rb"\r\ncontent-length:\s*(\d+)", head)
                self.chunked = b"transfer-encoding: chunked" in head
                self.body_left = int(length.group(1)) if length else (-1 if self.chunked else 0)
                self.body = b""
                if self.body_left == 0:
                    self._done(now)
                    continue
            if self.chunked:
                self.body += data
                data = b""
                if self.body.endswith(b"0\r\n\r\n"):
                    self._done(now)
            else:
                take = data[:self.body_left]
                self.body += take
                self.body_left -= len(take)
                data = data[len(take):]
                if self.body_left == 0:
                    self._done(now)

    def _done(self, now: float) -> None:
        ids = resumed_ids(self.body)
        if ids:
            self.log.write(json.dumps({"first": self.first, "done": now, "ids": ids}) + "\n")
            self.log.flush()
        self.first, self.body_left, self.body, self.chunked = None, None, b"", False


class _Downstream(asyncio.Protocol):
    """The backend's side of one proxied connection."""

    def __init__(self, target: int, log: Any) -> None:
        self.target, self.requests = target, _Requests(log)
        self.transport: asyncio.Transport | None = None
        self.up: asyncio.Transport | None = None
        self.pending: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Connect to the agent; hold what comes meanwhile."""
        self.transport = transport  # type: ignore[assignment]
        self.connecting = asyncio.ensure_future(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            self.up, _ = await loop.create_connection(lambda: _Upstream(self), "127.0.0.1", self.target)
        except OSError:
            assert self.transport is not None
            self.transport.close()
            return
        for data in self.pending:
            self.up.write(data)
        self.pending.clear()

    def data_received(self, data: bytes) -> None:
        """Stamp and forward the backend's bytes."""
        self.requests.feed(data, time.time())
        if self.up is None:
            self.pending.append(data)
        else:
            self.up.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        """Close the agent's side too."""
        if self.up is not None:
            self.up.close()


class _Upstream(asyncio.Protocol):
    """The agent's side of one proxied connection."""

    def __init__(self, down: _Downstream) -> None:
        self.down = down

    def data_received(self, data: bytes) -> None:
        """Forward the agent's bytes."""
        assert self.down.transport is not None
        self.down.transport.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        """Close the backend's side too."""
        if self.down.transport is not None:
            self.down.transport.close()


def _serve_proxy(args: argparse.Namespace) -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        with open(args.proxy_log, "a") as log:
            server = await loop.create_server(lambda: _Downstream(args.serve_proxy, log), "127.0.0.1", 0,
                                              backlog=2048)
            print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
            await server.serve_forever()

    asyncio.run(run())


# -- the load: browserless chats streaming the whole time ---------------------------------------------

def _load_driver(args: argparse.Namespace) -> None:
    """``--load`` chats: connect, load, then paced turns one after the other until SIGTERM; a RESULT line."""
    asyncio.run(_load(args))


async def _load(args: argparse.Namespace) -> None:
    import httpx

    from benchmarks._reflex_client import ReflexSocket
    from benchmarks.load_harness import Chat, Turn, pct, read

    url, count = args.load_driver, args.load
    stop, streaming = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    chats = [Chat(i) for i in range(count)]
    t0 = time.time() + 0.5
    window: list[float] = []

    async def one(chat: Chat) -> None:
        await asyncio.sleep(max(0.0, t0 + chat.index / args.connect_rate - time.time()))
        chat.sock = sock = ReflexSocket(url)
        reader = None
        try:
            await sock.connect()
            reader = asyncio.ensure_future(read(chat))
            while chat.view.state_key is None and not reader.done():
                await asyncio.sleep(0.05)
            if chat.view.state_key is None:
                raise RuntimeError("no chat state in the hydrate delta")
            for handler in ("on_load_chat", "ensure_loaded"):
                await sock.emit(f"{chat.view.state_key}.{handler}")
            await asyncio.wait_for(chat.ready.wait(), 120)
            await streaming.wait()
            await asyncio.sleep(max(0.0, window[0] + chat.index * args.ramp / count - time.time()))
            while not stop.is_set():
                nonce = "Z" + secrets.token_hex(8)
                chat.nonces.add(nonce)
                turn = Turn(nonce, re.compile(re.escape(nonce) + r":(\d+);"), time.time())
                chat.turns.append(turn)
                await sock.emit(f"{chat.view.state_key}.send_text", {"text": f"nonce:{nonce}"})
                done = asyncio.ensure_future(turn.done.wait())
                halt = asyncio.ensure_future(stop.wait())
                await asyncio.wait([done, halt], timeout=args.deltas / args.rate + 60,
                                   return_when=asyncio.FIRST_COMPLETED)
                done.cancel()
                halt.cancel()
                if not turn.done.is_set() and not stop.is_set():
                    chat.errors.append("a turn timed out")
                    return
                if chat.reader_closed:
                    chat.errors.append(f"disconnected: {chat.reader_closed}")
                    return
                await asyncio.sleep(0.2)
        except Exception as exc:  # noqa: BLE001 - reported per chat
            chat.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            chat.ready.set()
        finally:
            if reader is not None:
                reader.cancel()
                with contextlib.suppress(BaseException):
                    await reader
            await sock.close()

    tasks = [asyncio.ensure_future(one(chat)) for chat in chats]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in chats)), count / args.connect_rate + 120)
    ready = sum(1 for c in chats if c.ready_at is not None and not c.errors)
    print(f"READY {ready}", flush=True)
    window.append(time.time() + 0.5)
    streaming.set()
    await asyncio.sleep(args.ramp + 0.5)
    print("STREAMING", flush=True)
    await stop.wait()
    window.append(time.time())
    await asyncio.wait(tasks, timeout=30)
    async with httpx.AsyncClient(timeout=30) as client:
        sent = (await client.get(f"{args.agent_url}/sent")).json()["sent"]
    lags = [seen - sent[t.nonce][seq] for c in chats for t in c.turns for seq, seen in t.seen.items()
            if seq < len(sent.get(t.nonce, [])) and window[0] + args.ramp <= sent[t.nonce][seq] <= window[1]]
    result = {"ready": ready, "errors": sum(len(c.errors) for c in chats), "leaks": sum(1 for c in chats if c.leaks),
              "turns_done": sum(1 for c in chats for t in c.turns if t.done_at is not None),
              "lag_ms": {"p50": pct(lags, 50) * 1000, "p95": pct(lags, 95) * 1000}, "deltas": len(lags),
              "error_samples": [e for c in chats for e in c.errors][:3]}
    print("RESULT " + json.dumps(result), flush=True)


# -- processes -------------------------------------------------------------------------------------

@contextlib.contextmanager
def _child(name: str, argv: list[str], logs: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """This module in another process (its own group) that prints ``PORT <n>``; yields it and the port."""
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.decide_latency", *argv], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=(logs / f"{name}.log").open("w"), start_new_session=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"{name} did not start: {line!r}; see {logs / f'{name}.log'}")
        yield proc, int(line.split()[1])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def _load_chats(args: argparse.Namespace, url: str, agent_url: str, logs: Path) -> Iterator[dict[str, Any]]:
    """``--load`` browserless chats streaming on the app at ``url``, in a process of their own.

    Yields once they all stream a dict that holds, after the block, their RESULT (errors, the lag of their deltas).
    """
    argv = [sys.executable, "-m", "benchmarks.decide_latency", "--load-driver", url, "--load", str(args.load),
            "--agent-url", agent_url, "--deltas", str(args.deltas), "--rate", str(args.rate),
            "--ramp", str(args.ramp), "--connect-rate", str(args.connect_rate)]
    proc = subprocess.Popen(argv, cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=(logs / "load.log").open("w"),
                            start_new_session=True)
    out: dict[str, Any] = {"pid": proc.pid}
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("READY"):
                out["ready"] = int(line.split()[1])
                print(f"  load: {out['ready']}/{args.load} chats connected and loaded", flush=True)
            if line.startswith("STREAMING"):
                break
        else:
            raise RuntimeError(f"the load driver ended early; see {logs / 'load.log'}")
        yield out
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            rest, _ = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rest = ""
        for line in rest.splitlines():
            if line.startswith("RESULT "):
                out.update(json.loads(line[7:]))


# -- one person, two tabs ---------------------------------------------------------------------------

@dataclass
class Round:
    """One decision's page-side stamps (epoch ms) and its interrupt id."""

    interrupt_id: str
    card_a: float
    card_b: float
    click: float
    follow_a: float
    follow_b: float


@dataclass
class Phase:
    """The rounds of one app in one condition (idle, or beside the load) and what else was measured."""

    app: str
    load: int
    rounds: list[Round] = field(default_factory=list)
    lat: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    load_result: dict[str, Any] = field(default_factory=dict)
    profile: list[str] = field(default_factory=list)
    trace: dict[str, list[float]] = field(default_factory=dict)  # --trace: step of the click path -> ms per round
    loop_lag: list[float] = field(default_factory=list)  # --trace: the worker's loop lag (ms) during the clicks


LATENCIES = [
    ("ask_card_a", "agent asks → card visible, asking tab"),
    ("ask_card_b", "agent asks → card visible, second tab"),
    ("click_proxy", "click → resume POST leaves the backend"),
    ("click_agent", "click → resume received by the agent"),
    ("click_follow_a", "click → follow-up's first character, asking tab"),
    ("click_follow_b", "click → follow-up's first character, second tab"),
    ("agent_think", "(agent: resume received → first delta sent)"),
]


def _status(page: Any, status: str, timeout: float = 120_000) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", status, timeout=timeout)


def _send(page: Any, text: str) -> None:
    from playwright.sync_api import expect

    box = page.get_by_test_id("chat-input")
    expect(box).to_be_enabled(timeout=120_000)
    box.fill(text)
    box.press("Enter")


def _current_thread(page: Any) -> str | None:
    item = page.locator('[data-testid="thread-item"][data-current="true"]')
    return item.first.get_attribute("data-thread-id", timeout=30_000) if item.count() else None


def open_tabs(browser: Any, url: str) -> tuple[Any, Any, Any]:
    """One context (one person), two pages on the same thread; returns (context, asking tab, second tab)."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(PROBE)
    a = context.new_page()
    a.goto(url + "/")
    expect(a.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
    _status(a, "idle")
    _send(a, "hello")
    expect(a.locator('[data-testid="message"][data-role="assistant"]')).to_have_count(1, timeout=120_000)
    _status(a, "idle")
    b = context.new_page()
    b.goto(url + "/")
    expect(b.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
    _status(b, "idle")
    a.wait_for_timeout(1000)
    if _current_thread(a) != _current_thread(b):
        raise RuntimeError(f"the tabs show different threads: {_current_thread(a)} / {_current_thread(b)}")
    shown = [p.evaluate("() => [document.visibilityState, document.hasFocus()]") for p in (a, b)]
    before = time.time() * 1000
    page_clock = a.evaluate("() => [performance.timeOrigin + performance.now(), Date.now()]")
    after = time.time() * 1000
    middle = (before + after) / 2
    print(f"  tabs: one thread {_current_thread(a)}; visibility and focus {shown}; the page's clock - this "
          f"process's: {page_clock[0] - middle:+.1f} ms (Date.now: {page_clock[1] - middle:+.1f}; the call took "
          f"{after - before:.1f} ms)", flush=True)
    return context, a, b


def one_round(a: Any, b: Any) -> Round:
    """The asking tab sends ``approval``, both tabs show the card, the asking tab approves, both show the answer."""
    known = a.evaluate("() => Object.keys(window.__ic.cards)")
    _send(a, "approval")
    a.wait_for_function("(known) => Object.keys(window.__ic.cards).some(k => !known.includes(k))", arg=known,
                        timeout=120_000, polling=20)
    interrupt_id = next(k for k in a.evaluate("() => Object.keys(window.__ic.cards)") if k not in known)
    b.wait_for_function("(id) => id in window.__ic.cards", arg=interrupt_id, timeout=120_000, polling=20)
    _status(a, "interrupted")
    _status(b, "interrupted")
    a.wait_for_timeout(200)  # the person reads the card
    a.evaluate("() => window.__ic.arm()")
    b.evaluate("() => window.__ic.arm()")
    card = a.locator(f'[data-testid="interrupt-card"][data-interrupt-id="{interrupt_id}"]')
    card.get_by_test_id("interrupt-approve").click()
    a.wait_for_function("() => window.__ic.follow !== null", timeout=120_000, polling=20)
    b.wait_for_function("() => window.__ic.follow !== null", timeout=120_000, polling=20)
    _status(a, "idle")
    _status(b, "idle")
    stamps_a = a.evaluate("(id) => [window.__ic.cards[id], window.__ic.clicks.filter(c => c[0] === id).map(c => c[1]),"
                          " window.__ic.follow]", interrupt_id)
    stamps_b = b.evaluate("(id) => [window.__ic.cards[id], window.__ic.follow]", interrupt_id)
    a.wait_for_timeout(300)
    return Round(interrupt_id, stamps_a[0], stamps_b[0], stamps_a[1][0], stamps_a[2], stamps_b[1])


def latencies(rounds: list[Round], runs: list[dict[str, Any]], proxied: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Per latency, its value (ms) in each round, from the pages' stamps, the agent's and the proxy's."""
    asked = {i: r for r in runs for i in r.get("asked", [])}
    resumed = {i: r for r in runs if r["resume"] for i in r["ids"]}
    left = {i: p for p in proxied for i in p["ids"]}
    out: dict[str, list[float]] = {key: [] for key, _ in LATENCIES}
    for r in rounds:
        ask, resume, proxy = asked.get(r.interrupt_id), resumed.get(r.interrupt_id), left.get(r.interrupt_id)
        if ask is not None:
            out["ask_card_a"].append(r.card_a - ask["finished"] * 1000)
            out["ask_card_b"].append(r.card_b - ask["finished"] * 1000)
        if proxy is not None:
            out["click_proxy"].append(proxy["first"] * 1000 - r.click)
        if resume is not None:
            out["click_agent"].append(resume["received"] * 1000 - r.click)
            if "first_text" in resume:
                out["agent_think"].append((resume["first_text"] - resume["received"]) * 1000)
        out["click_follow_a"].append(r.follow_a - r.click)
        out["click_follow_b"].append(r.follow_b - r.click)
    return out


def _get_json(url: str) -> Any:
    import httpx

    return httpx.get(url, timeout=30).json()


def _proxied(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _worker(server_pid: int) -> psutil.Process:
    """The granian worker that serves the app: the ``reflex run`` process's child running reflex (one worker)."""
    try:
        root = psutil.Process(server_pid)
        children = [c for c in root.children() if "reflex" in " ".join(c.cmdline())]
    except psutil.Error:
        raise RuntimeError("the app's process is gone") from None
    return children[0] if children else root


def run_phase(args: argparse.Namespace, app: str, pages: tuple[Any, Any], load: int, url: str, agent: tuple[Any, str],
              proxy_log: Path, logs: Path, groups: dict[str, list[psutil.Process]]) -> Phase:
    """``--warmup`` + ``--rounds`` rounds, beside ``load`` streaming chats (0: idle)."""
    from benchmarks.load_harness import CpuSnapshot, cpu_report, profile_summary, start_profilers, stop_profilers

    a, b = pages
    phase = Phase(app, load)
    with contextlib.ExitStack() as stack:
        if load:
            phase.load_result = stack.enter_context(_load_chats(args, url, agent[1], logs))
            driver = psutil.Process(phase.load_result["pid"])
            groups = {**groups, "load clients": [driver, *driver.children(recursive=True)]}
        for n in range(args.warmup):
            one_round(a, b)
            print(f"  {app}, load {load}: warm-up round {n + 1}", flush=True)
        before = CpuSnapshot.take(groups)
        profile_args = argparse.Namespace(py_spy=args.py_spy if load or args.idle_only else None,
                                          tmp=logs / f"profile-{app.replace(' ', '-')}-{load}")
        if profile_args.py_spy:
            profile_args.tmp.mkdir(parents=True, exist_ok=True)
        profilers = start_profilers(profile_args, groups["worker"])
        for n in range(args.rounds):
            phase.rounds.append(one_round(a, b))
            r = phase.rounds[-1]
            print(f"  {app}, load {load}: round {n + 1}: the second tab's card {r.card_b - r.card_a:+.0f} ms after the "
                  f"first's; the follow-up {r.follow_a - r.click:.0f} ms after the click", flush=True)
        stop_profilers(profilers)
        report = cpu_report(before, CpuSnapshot.take(groups))
        phase.cpu = {name: g["total"] for name, g in report["groups"].items()}
        phase.cpu["machine busy"] = report["machine_busy_cores"]
        if profilers:
            phase.profile = profile_summary(sorted(profile_args.tmp.glob("profile-*.txt")))
    phase.lat = latencies(phase.rounds, _get_json(f"{agent[1]}/timings"), _proxied(proxy_log))
    return phase


@contextlib.contextmanager
def _app(name: str, cwd: Path, agent_url: str, logs: Path, trace: Path | None) -> Iterator[tuple[str, int]]:
    """The demo site of the tree at ``cwd`` in production mode, one worker, a fresh SQLite database.

    As ``browser_stream.reflex_prod`` (one loopback port, the page's origin as the API URL), with a web
    directory of its own per app (kept between runs: a warm build) and, for ``trace``, the tracing
    ``sitecustomize`` on the path.
    """
    from benchmarks.browser_stream import _free_port, _get, _process

    folder = Path(tempfile.mkdtemp(prefix=f"ic-decide-{name}-"))
    port = _free_port()
    origin = f"http://127.0.0.1:{port}"
    paths = [str(cwd)]
    if trace is not None:
        site = folder / "trace-site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(TRACE_SITE)
        paths.insert(0, str(site))
    env = {key: value for key, value in os.environ.items()
           if key not in ("REFLEX_REDIS_URL", "INTERRUPT_CHAT_POLICY_FILE", "DECIDE_TRACE")}
    env.update({"INTERRUPT_CHAT_AGENT_URL": agent_url, "INTERRUPT_CHAT_DB_URL": f"sqlite:///{folder / 'threads.db'}",
                "GRANIAN_WORKERS": "1", "REFLEX_STATES_WORKDIR": str(folder / "states"),
                "REFLEX_WEB_WORKDIR": str(Path(tempfile.gettempdir()) / f"ic-decide-web-{name}"),
                "REFLEX_FRONTEND_PORT": str(port), "REFLEX_BACKEND_PORT": str(port), "REFLEX_API_URL": origin,
                "REFLEX_DEPLOY_URL": origin, "PYTHONPATH": os.pathsep.join(paths),
                "REFLEX_TELEMETRY_ENABLED": "false"})
    if trace is not None:
        env["DECIDE_TRACE"] = str(trace)
    reflex = str(Path(sys.executable).with_name("reflex"))
    try:
        with _process([reflex, "run", "--env", "prod", "--backend-host", "127.0.0.1"], cwd, env,
                      logs / f"{name}.log") as server:
            deadline = time.monotonic() + 900
            while True:
                with contextlib.suppress(OSError):
                    if b"pong" in _get(origin + "/ping", 2):
                        break
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not start: see {logs / f'{name}.log'}")
                time.sleep(1)
            yield origin, server.pid
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure_app(args: argparse.Namespace, browser: Any, name: str, cwd: Path, agent: tuple[Any, str],
                proxy: tuple[str, Path, Any], logs: Path) -> list[Phase]:
    """The idle phase and the loaded one for the app at ``cwd``."""
    phases = []
    trace = logs / f"trace-{name.replace(' ', '-')}.jsonl" if args.trace else None
    if trace is not None:
        trace.unlink(missing_ok=True)
    with _app(name.replace(" ", "-"), cwd, proxy[0], logs, trace) as (url, pgid):
        worker = _worker(pgid)
        print(f"{name}: {url}, worker pid {worker.pid}", flush=True)
        groups = {"worker": [worker], "agent": [psutil.Process(agent[0].pid)], "proxy": [psutil.Process(proxy[2].pid)]}
        context, a, b = open_tabs(browser, url)
        for load in ([0] if args.idle_only or args.load == 0 else [0, args.load]):
            phase = run_phase(args, name, (a, b), load, url, agent, proxy[1], logs, groups)
            if trace is not None:
                phase.trace, phase.loop_lag = trace_steps(phase.rounds, trace, _proxied(proxy[1]),
                                                          _get_json(f"{agent[1]}/timings"))
            phases.append(phase)
            print_phase(phase)
        context.close()
    return phases


# -- --trace: where a click waits, stamped inside the worker ------------------------------------------
# A sitecustomize module on the app's PYTHONPATH (the package is not changed): once the demo
# site's app module is imported, it wraps the click path's steps with time stamps that
# are kept only inside a click's task (a context variable set by answers.answer), and samples the
# event loop's lag (a 5 ms timer's lateness). One JSON line per click in DECIDE_TRACE's file.

TRACE_SITE = """
import asyncio, collections, contextvars, functools, importlib, importlib.abc, importlib.util, inspect, json, os
import sys, time

_PATH = os.environ.get("DECIDE_TRACE", "")
_CLICK = contextvars.ContextVar("decide_click", default=None)  # a click's task: its marks
_ASK = contextvars.ContextVar("decide_ask", default=None)  # a run that ended asking: its marks, until its end is done
_WS = {}
_LAG = collections.deque(maxlen=100_000)
_STARTED = []


async def _lag():
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(0.005)
        _LAG.append((time.time(), loop.time() - before - 0.005))


def _lags(start, end):
    return [round(lag * 1000, 2) for t, lag in list(_LAG) if start - 0.005 <= t <= end + 0.005]


def _write(item):
    with open(_PATH, "a") as out:
        out.write(json.dumps(item) + "\\n")


def _stamp(label, edge):
    now = time.time()
    for var in (_CLICK, _ASK):
        traced = var.get()
        if traced is not None:
            traced["marks"].append((label, edge, now))


def _wrap(fn, label):
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def timed(*args, **kwargs):
            _stamp(label, ">")
            try:
                return await fn(*args, **kwargs)
            finally:
                _stamp(label, "<")
        return timed

    @functools.wraps(fn)
    def plain(*args, **kwargs):
        _stamp(label, ">")
        try:
            return fn(*args, **kwargs)
        finally:
            _stamp(label, "<")
    return plain


def _install(app_module):
    import interrupt_chat.tab.answers as answers
    import interrupt_chat.tab.claims as claims
    import interrupt_chat.tab.driver as driver
    import interrupt_chat.tab.persistence as persistence
    import interrupt_chat.tab.routing as routing
    try:  # the after-lock saves have a module of their own (tab.saving); a baseline may predate it
        import interrupt_chat.tab.saving as saving
    except ImportError:
        saving = persistence
    import interrupt_chat.tab.trail as trail
    import interrupt_chat.workers.runs as runs
    import interrupt_chat.workers.sync as sync
    import interrupt_chat.approvals.follow as follow
    from interrupt_chat.agui.aiohttp_transport import AiohttpTransport
    from reflex.app import EventNamespace

    for module, name in ((driver, "ready"), (answers, "record"), (persistence, "refresh"), (claims, "claim"),
                         (answers, "decide"), (driver, "publish"), (routing, "route"), (answers, "conclude"),
                         (saving, "write"), (trail, "decision_rows"), (routing, "chat_of"), (driver, "drive"),
                         (runs, "add"), (runs, "remove"), (driver, "_surface"), (driver, "_save_end"),
                         (driver, "_emit"), (sync, "deliver"), (saving, "summaries"),
                         (persistence, "owner_of"), (persistence, "load_thread"), (follow, "follow_rest")):
        setattr(module, name, _wrap(getattr(module, name), name))
    # the follower: a task of its own started by sync.deliver, in a copy of the run's context (its marks too)
    sync.set_follower(_wrap(follow.follow_tab, "follow_tab"))
    AiohttpTransport.handle_async_request = _wrap(AiohttpTransport.handle_async_request, "post")
    driver._Throttle.close = _wrap(driver._Throttle.close, "close")
    _install_on_event(EventNamespace, getattr(app_module, "app", None))
    answer = answers.answer

    async def traced_answer(config, verb, payload, interrupt_id, *args, **kwargs):
        traced = {"kind": "click", "id": interrupt_id,
                  "marks": [("ws", ">", _WS.pop(str(interrupt_id), 0.0)), ("answer", ">", time.time())]}
        token = _CLICK.set(traced)
        try:
            return await answer(config, verb, payload, interrupt_id, *args, **kwargs)
        finally:
            traced["marks"].append(("answer", "<", time.time()))
            _CLICK.reset(token)
            marks = traced["marks"]
            post = next((t for label, edge, t in marks if label == "post" and edge == ">"), time.time())
            traced["lag_ms"] = _lags(marks[0][2] or marks[1][2], post)
            _write(traced)

    answers.answer = traced_answer
    event = driver._Throttle.event

    async def traced_event(self, item, *args, **kwargs):
        outcome = getattr(item, "outcome", None)
        if outcome is not None and getattr(outcome, "type", "") == "interrupt":
            _ASK.set({"kind": "ask", "ids": [i.id for i in outcome.interrupts], "marks": [("seen", ">", time.time())]})
        return await event(self, item, *args, **kwargs)

    driver._Throttle.event = traced_event
    end = driver._end

    async def traced_end(*args, **kwargs):
        traced = _ASK.get()
        if traced is None:
            return await end(*args, **kwargs)
        traced["marks"].append(("end", ">", time.time()))
        try:
            return await end(*args, **kwargs)
        finally:
            traced["marks"].append(("end", "<", time.time()))
            _ASK.set(None)
            traced["lag_ms"] = _lags(traced["marks"][0][2], time.time())
            asyncio.get_running_loop().call_later(3.0, _write, traced)  # the other tabs' followers may still run

    driver._end = traced_end


def _install_on_event(EventNamespace, app):
    on_event = EventNamespace.on_event

    def arrived(data):
        if not _STARTED:
            _STARTED.append(asyncio.ensure_future(_lag()))
        if isinstance(data, dict) and str(data.get("name", "")).endswith(".resolve"):
            payload = data.get("payload") or {}
            _WS[str(payload.get("interrupt_id"))] = time.time()

    async def traced_on_event(self, sid, data):
        arrived(data)
        return await on_event(self, sid, data)

    EventNamespace.on_event = traced_on_event
    namespace = getattr(app, "event_namespace", None)
    if namespace is not None and "on_event" in vars(namespace):  # ic.tune_events wrapped the method it found
        tuned = namespace.on_event

        async def traced_tuned(sid, data):
            arrived(data)
            return await tuned(sid, data)

        namespace.on_event = traced_tuned


class _After(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "interrupt_chat.interrupt_chat":  # the demo site's app module: the whole package is loaded
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _install(module)

        spec.loader.exec_module = exec_module
        return spec


if _PATH:
    sys.meta_path.insert(0, _After())
"""

TRACE_STEPS: list[tuple[str, tuple[str, ...], tuple[str, str]]] = [
    ("click → the worker reads the event (on_event)", ("click", ">"), ("ws", ">")),
    ("Reflex: event queue → the handler runs", ("ws", ">"), ("answer", ">")),
    ("the tab's state lock (async with)", ("answer", ">"), ("ready", ">")),
    ("driver.ready", ("ready", ">"), ("ready", "<")),
    ("record: refresh (head read)", ("refresh", ">"), ("refresh", "<")),
    ("record: the rest of the claim (decide, conditional write)", ("refresh", "<"), ("record", "<")),
    ("publish + route", ("record", "<"), ("route", "<")),
    ("leaving the lock (state saved, delta pushed)", ("route", "<"), ("conclude", ">")),
    ("audit write", ("write", ">"), ("write", "<")),
    ("decision rows (lock, read)", ("write", "<"), ("decision_rows", "<")),
    ("drive: lock, runs.add, the run's first step", ("drive", ">"), ("post", ">")),
    ("the POST: connect and write (→ proxy)", ("post", ">"), ("proxy", ">")),
    ("proxy → the agent has read it", ("proxy", ">"), ("agent", ">")),
    ("total: click → POST leaves", ("click", ">"), ("proxy", ">")),
    ("the agent: received → its first text delta sent (its pause)", ("agent", ">"), ("agent_text", ">")),
    ("first delta sent → pushed to the asking tab (read, throttle)", ("agent_text", ">"), ("_emit", "<")),
    ("pushed → the follow-up in the asking tab (wire, browser)", ("_emit", "<", "agent_text"), ("follow_a", ">")),
    ("the asking tab → the second tab (live rows, every 0.3 s)", ("follow_a", ">"), ("follow_b", ">")),
]

ASK_STEPS: list[tuple[str, tuple[str, ...], tuple[str, str]]] = [
    ("agent sends RUN_FINISHED → the driver has it (read, parse)", ("asked", ">"), ("seen", ">")),
    ("the throttle's last pushes (close)", ("seen", ">"), ("close", "<")),
    ("→ _surface starts", ("close", "<"), ("_surface", ">")),
    ("_surface: rules, lock, the card streamed and routed", ("_surface", ">"), ("_surface", "<")),
    ("  of which the card's push (_emit)", ("_emit", ">", "_surface"), ("_emit", "<")),
    ("pushed → card in the asking tab (wire, browser)", ("_surface", "<"), ("card_a", ">")),
    ("save the end (write, runs.remove, waiting)", ("_save_end", ">"), ("_save_end", "<")),
    ("  of which: up to the sync notice (deliver)", ("_save_end", ">"), ("deliver", ">")),
    ("the notice → card in the second tab (follow, push, browser)", ("deliver", ">"), ("card_b", ">")),
    ("  the follower's task starts", ("deliver", ">"), ("follow_tab", ">")),
    ("  the tab's state and lock (modify_state)", ("follow_tab", ">", "deliver"), ("owner_of", ">")),
    ("  the owner's check (owner_of)", ("owner_of", ">", "deliver"), ("owner_of", "<")),
    ("  the thread read (refresh)", ("refresh", ">", "deliver"), ("refresh", "<")),
    ("  publish + route", ("refresh", "<", "deliver"), ("route", "<")),
    ("  route → card drawn (lock exit, push, wire, browser)", ("route", "<", "deliver"), ("card_b", ">")),
    ("the rest of _end (thread list: summaries, lock)", ("_save_end", "<"), ("end", "<")),
    ("total: agent asks → card in the second tab", ("asked", ">"), ("card_b", ">")),
]


def _steps(steps: list[tuple[str, tuple[str, ...], tuple[str, str]]], marks: dict[tuple[str, str], list[float]],
           out: dict[str, list[float]]) -> None:
    """Each step's duration (ms): from its start mark's first time to the first end mark at or after it.

    A start given with a third name counts only from that step's start on.
    """
    for label, start, end in steps:
        anchor = min(marks.get((start[2], ">"), []), default=0.0) if len(start) > 2 else 0.0
        begun = min((t for t in marks.get(start[:2], []) if t >= anchor), default=None)
        ended = next((t for t in sorted(marks.get(end, [])) if begun is not None and t >= begun), None)
        if begun is not None and ended is not None:
            out.setdefault(label, []).append((ended - begun) * 1000)


def trace_steps(rounds: list[Round], path: Path, proxied: list[dict[str, Any]],
                runs: list[dict[str, Any]]) -> tuple[dict[str, list[float]], list[float]]:
    """Per step of the click path and of the surface path, its duration (ms) in each traced round.

    And the worker's loop lag samples (ms) during them.
    """
    clicks, asks = {}, {}
    if path.exists():
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError):
                item = json.loads(line)
                if item["kind"] == "click":
                    clicks[str(item["id"])] = item
                else:
                    for interrupt_id in item["ids"]:
                        asks[interrupt_id] = item
    left = {i: p["first"] for p in proxied for i in p["ids"]}
    received = {i: r["received"] for r in runs if r["resume"] for i in r["ids"]}
    first_text = {i: r["first_text"] for r in runs if r["resume"] and "first_text" in r for i in r["ids"]}
    asked = {i: r["finished"] for r in runs for i in r.get("asked", [])}
    steps: dict[str, list[float]] = {}
    lags: list[float] = []
    for r in rounds:
        for item, labels in ((clicks.get(r.interrupt_id), TRACE_STEPS), (asks.get(r.interrupt_id), ASK_STEPS)):
            if item is None:
                continue
            marks: dict[tuple[str, str], list[float]] = {("click", ">"): [r.click / 1000],
                                                         ("card_a", ">"): [r.card_a / 1000],
                                                         ("card_b", ">"): [r.card_b / 1000],
                                                         ("follow_a", ">"): [r.follow_a / 1000],
                                                         ("follow_b", ">"): [r.follow_b / 1000]}
            for label, edge, t in item["marks"]:
                if t:
                    marks.setdefault((label, edge), []).append(t)
            for key, found in ((("proxy", ">"), left), (("agent", ">"), received), (("asked", ">"), asked),
                               (("agent_text", ">"), first_text)):
                if r.interrupt_id in found:
                    marks[key] = [found[r.interrupt_id]]
            _steps(labels, marks, steps)
            lags += item.get("lag_ms", [])
    return steps, lags

# -- report ----------------------------------------------------------------------------------------

def _stats(values: list[float]) -> tuple[float, float, float]:
    from benchmarks.load_harness import pct

    return pct(values, 50), pct(values, 95), max(values, default=float("nan"))


def print_phase(phase: Phase) -> None:
    """One phase's figures, as soon as it ends."""
    print(f"\n{phase.app}, {'idle' if not phase.load else f'beside {phase.load} streaming chats'}: "
          f"{len(phase.rounds)} rounds; ms p50 / p95 / max")
    for key, label in LATENCIES:
        p50, p95, top = _stats(phase.lat.get(key, []))
        print(f"  {label:<50} {p50:7.0f} / {p95:5.0f} / {top:5.0f}  (n={len(phase.lat.get(key, []))})")
    print("  CPU (cores) " + ", ".join(f"{k} {v:.2f}" for k, v in phase.cpu.items()))
    if phase.load_result:
        r = phase.load_result
        print(f"  load chats: {r.get('ready')} ready, {r.get('turns_done')} turns done, {r.get('errors')} errors, "
              f"{r.get('leaks')} leaks; their delta lag p50 / p95 {r.get('lag_ms', {}).get('p50', float('nan')):.0f} / "
              f"{r.get('lag_ms', {}).get('p95', float('nan')):.0f} ms ({r.get('deltas')} deltas)")
    if phase.trace:
        for title, steps in (("where a click waits", TRACE_STEPS), ("where a card waits", ASK_STEPS)):
            print(f"  {title} (--trace; ms p50 / p95 / max):")
            for label, _, _ in steps:
                p50, p95, top = _stats(phase.trace.get(label, []))
                print(f"    {label:<62} {p50:7.1f} / {p95:6.1f} / {top:6.1f}  (n={len(phase.trace.get(label, []))})")
        p50, p95, top = _stats(phase.loop_lag)
        print(f"    the worker's event loop lag during the clicks (a 5 ms timer's lateness): {p50:.1f} / {p95:.1f} / "
              f"{top:.1f} ms over {len(phase.loop_lag)} samples")
    if phase.profile:
        print("  backend worker profile (py-spy) over the rounds:")
        print("\n".join("    " + line for line in phase.profile))
    sys.stdout.flush()


# issue 45's goals, p95 in ms: (latency, loaded?, target)
GOALS = [("click_agent", False, 50.0), ("click_agent", True, 250.0), ("ask_card_a", False, 100.0),
         ("ask_card_a", True, 100.0), ("ask_card_b", False, 300.0), ("ask_card_b", True, 300.0),
         ("click_follow_a", False, 150.0)]


def goals(phases: list[Phase]) -> None:
    """This tree's p95s against issue 45's goals."""
    labels = dict(LATENCIES)
    print("\nissue 45's goals, this tree (p95):")
    for key, loaded, target in GOALS:
        for phase in phases:
            if phase.app == "this tree" and bool(phase.load) == loaded and phase.lat.get(key):
                p95 = _stats(phase.lat[key])[1]
                where = f"beside {phase.load} chats" if loaded else "idle"
                print(f"  {labels[key]:<50} {where:<18} {p95:6.0f} ms, goal ≤ {target:.0f}: "
                      f"{'met' if p95 <= target else 'NOT MET'}")


def report(phases: list[Phase], baseline: str) -> None:
    """The table of every app and condition, and this tree's ratios to the baseline."""
    conditions = sorted({p.load for p in phases})
    apps = list(dict.fromkeys(p.app for p in phases))
    cell = {(p.app, p.load): p for p in phases}
    head = "".join(f"{f'{app}, ' + ('idle' if not load else f'{load} chats'):>24}"
                   for app in apps for load in conditions)
    print(f"\n{'ms, p50 / p95 / max':<50}{head}")
    for key, label in LATENCIES:
        line = f"{label:<50}"
        for app in apps:
            for load in conditions:
                phase = cell.get((app, load))
                values = phase.lat.get(key, []) if phase else []
                p50, p95, top = _stats(values)
                line += f"{f'{p50:.0f} / {p95:.0f} / {top:.0f}':>24}" if values else f"{'-':>24}"
        print(line)
    if baseline and "baseline" in apps:
        print(f"\nthis tree / baseline ({baseline}), p50 and p95:")
        for key, label in LATENCIES:
            parts = []
            for load in conditions:
                ours, base = cell.get(("this tree", load)), cell.get(("baseline", load))
                if ours is None or base is None or not ours.lat.get(key) or not base.lat.get(key):
                    continue
                o, bs = _stats(ours.lat[key]), _stats(base.lat[key])
                parts.append(f"{'idle' if not load else f'{load} chats'} {o[0] / bs[0]:.2f} / {o[1] / bs[1]:.2f}")
            print(f"  {label:<50} " + "; ".join(parts))


def main(argv: list[str] | None = None) -> None:
    """Serve the agent and the proxy, then measure each app; or be one of the helper processes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="measured decisions per condition")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured decisions first, per condition")
    parser.add_argument("--load", type=int, default=0, help="other chats streaming on the worker, after the idle"
                        " rounds (0: idle only; the issue's figure: 300)")
    parser.add_argument("--idle-only", action="store_true", help="no loaded phase")
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with ('': none)")
    parser.add_argument("--deltas", type=int, default=200, help="deltas per answer of a load chat")
    parser.add_argument("--rate", type=float, default=20.0, help="deltas per second per load chat")
    parser.add_argument("--ramp", type=float, default=5.0, help="seconds over which the load chats start streaming")
    parser.add_argument("--connect-rate", type=float, default=40.0, help="load chats connected per second")
    parser.add_argument("--agent-delay", type=float, default=0.03, help="the demo agent's pause before each delta")
    parser.add_argument("--py-spy", dest="py_spy", metavar="PATH", help="sample the worker over the loaded rounds")
    parser.add_argument("--trace", action="store_true",
                        help="stamp the click path's steps inside the worker (a sitecustomize on the app's path)")
    parser.add_argument("--json", type=Path, help="also write every round's latencies here")
    parser.add_argument("--baseline-first", action="store_true",
                        help="measure the baseline before this tree (a host that slows down over a run favours "
                             "whichever goes first: run both orders)")
    parser.add_argument("--serve-proxy", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--proxy-log", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--serve-agent", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--load-driver", help=argparse.SUPPRESS)
    parser.add_argument("--agent-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_agent:
        return _serve_agent(args)
    if args.serve_proxy:
        return _serve_proxy(args)
    if args.load_driver:
        return _load_driver(args)

    from playwright.sync_api import sync_playwright

    from benchmarks.browser_stream import CHROMIUM_ARGS
    from benchmarks.long_thread import checkout

    logs = ROOT / "test-artifacts" / "decide_latency"
    logs.mkdir(parents=True, exist_ok=True)
    proxy_log = logs / "proxy.jsonl"
    proxy_log.unlink(missing_ok=True)
    chromium = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
    phases: list[Phase] = []
    started = time.time()
    with contextlib.ExitStack() as stack:
        agent_proc, agent_port = stack.enter_context(_child("agent", [
            "--serve-agent", "--agent-delay", str(args.agent_delay), "--deltas", str(args.deltas),
            "--rate", str(args.rate)], logs))
        agent = (agent_proc, f"http://127.0.0.1:{agent_port}")
        proxy_proc, proxy_port = stack.enter_context(_child("proxy", ["--serve-proxy", str(agent_port),
                                                                      "--proxy-log", str(proxy_log)], logs))
        proxy = (f"http://127.0.0.1:{proxy_port}/", proxy_log, proxy_proc)
        trees = [("this tree", ROOT)]
        if args.baseline:
            trees.append(("baseline", stack.enter_context(checkout(args.baseline))))
            if args.baseline_first:
                trees.reverse()
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for name, cwd in trees:
            phases += measure_app(args, browser, name, cwd, agent, proxy, logs)
        browser.close()
    report(phases, args.baseline)
    goals(phases)
    print(f"\nhost: {psutil.cpu_count()} cores; total {time.time() - started:.0f} s; logs in {logs}")
    if args.json:
        args.json.write_text(json.dumps([{"app": p.app, "load": p.load, "latencies_ms": p.lat, "cpu_cores": p.cpu,
                                          "load_result": p.load_result, "rounds": [r.__dict__ for r in p.rounds],
                                          "trace_ms": p.trace, "loop_lag_ms": p.loop_lag}
                                         for p in phases], indent=1))
    return None


if __name__ == "__main__":
    main()
