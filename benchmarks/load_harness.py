"""Load harness without browsers: N concurrent chats against the real Reflex backend, over its own websocket protocol.

It starts, on 127.0.0.1 and free ports:

1. a paced AG-UI agent (``benchmarks/_paced_agent.py``, its own process): every run streams
   ``--deltas`` text deltas at ``--rate`` deltas/s, each carrying the chat's nonce and its sequence
   number (``" Z<hex>:<seq>;"``); it records the wall-clock send time of every delta;
2. optionally (``--redis``, required for ``--workers`` > 1) a ``redis-server`` with no persistence;
3. the real app backend, ``reflex run --env prod --backend-only`` (granian, ``GRANIAN_WORKERS``), with
   ``INTERRUPT_CHAT_AGENT_URL`` pointing to the agent, the thread database in a temporary SQLite file
   (``--db off``: in memory) and Reflex's disk state folder in a temporary directory;

then ``--chats`` clients (one asyncio task each, ``benchmarks/_reflex_client.py``), each with its own
tab token, connect like a browser on ``/`` (hydrate in the CONNECT packet, then the chat's
``on_load_chat`` / ``ensure_loaded`` mount events), staggered at ``--connect-rate`` per second
(warm-up, not measured). Once all are ready, they send ``nonce:<hex>`` through the chat's
``send_text`` staggered over ``--ramp`` seconds, ``--turns`` times each (the next turn when the
answer is complete), and stay connected until every chat is done.

Per delta, lag = the time the client's socket handed over the frame that first shows it - the
agent's send time (same clock). Leak check: a frame carrying any nonce that is not the tab's own.
Everything started is killed by process group at the end, also on Ctrl-C.

    .venv/bin/python -m benchmarks.load_harness --chats 200 --workers 1
    .venv/bin/python -m benchmarks.load_harness --chats 200 --workers 2 --redis
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
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._reflex_client import ChatView, ReflexSocket, foreign_nonces

ROOT = Path(__file__).resolve().parents[1]
LOOP_TICK = 0.05


# -- processes ------------------------------------------------------------------------------------

def free_port() -> int:
    """A free loopback port (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Started:
    """A process group this harness started (killed as a group at the end)."""

    name: str
    proc: subprocess.Popen
    log: Path

    def stop(self) -> None:
        """SIGTERM to the whole group, SIGKILL after 8 s."""
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(8)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)

    def tail(self, lines: int = 30) -> str:
        """The end of the process's log."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def spawn(name: str, cmd: list[str], tmp: Path, env: dict[str, str] | None = None, cwd: Path = ROOT) -> Started:
    """Start ``cmd`` in a session (process group) of its own, its output in ``tmp/<name>.log``."""
    log = tmp / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return Started(name, proc, log)


def wait_http(url: str, started: Started, timeout: float) -> None:
    """Wait until ``url`` answers 200 (or the process dies, or ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if started.proc.poll() is not None:
            raise RuntimeError(f"{started.name} exited ({started.proc.returncode}):\n{started.tail()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{started.name} not ready after {timeout:.0f} s:\n{started.tail()}")


def start_agent(args: argparse.Namespace, tmp: Path) -> tuple[Started, str]:
    """The paced agent, and its base URL."""
    agent = spawn("agent", [sys.executable, "-m", "benchmarks._paced_agent", "--deltas", str(args.deltas),
                            "--rate", str(args.rate)], tmp, {**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 30
    port = None
    while port is None and time.monotonic() < deadline:
        found = re.search(r"PORT (\d+)", agent.log.read_text(errors="replace"))
        if found:
            port = int(found.group(1))
        elif agent.proc.poll() is not None:
            raise RuntimeError(f"agent exited:\n{agent.tail()}")
        else:
            time.sleep(0.1)
    if port is None:
        raise RuntimeError(f"agent did not report its port:\n{agent.tail()}")
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/health", agent, 30)
    return agent, url


def start_redis(tmp: Path) -> tuple[Started, str]:
    """A throw-away redis-server (no persistence), and its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("--redis: redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    data = tmp / "redis"
    data.mkdir()
    redis = spawn("redis", [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                            "--dir", str(data)], tmp)
    import redis as redis_lib

    client = redis_lib.Redis(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis_lib.RedisError:
            if redis.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start:\n{redis.tail()}") from None
            time.sleep(0.1)
    return redis, f"redis://127.0.0.1:{port}/0"


# What-if patches, loaded into the backend through a sitecustomize module (the app's code is not touched):
# ``--what-if NAME`` or ``--what-if NAME=VALUE``.
_SSL_CACHE = '''
# what-if ssl-cache: one SSL context per process; httpx builds a new one (loading the CA bundle) for
# every AsyncClient, and interrupt_chat.agui.transport makes an AsyncClient per run
import httpx._transports.default as _default

_build, _made = _default.create_ssl_context, {}


def _cached(verify=True, cert=None, trust_env=True):
    key = (verify if isinstance(verify, (bool, str)) else id(verify), cert if cert is None or isinstance(cert, str)
           else id(cert), trust_env)
    if key not in _made:
        _made[key] = _build(verify=verify, cert=cert, trust_env=trust_env)
    return _made[key]


_default.create_ssl_context = _cached
'''

_PUSH_INTERVAL = '''
# what-if push-interval={value}: interrupt_chat.workers.load.PUSH_INTERVAL (the shortest tick between two pushes
# of one chat while text streams) set as soon as the module is imported
import importlib.abc
import sys


class _SetInterval(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "interrupt_chat.workers.load":
            return None
        sys.meta_path.remove(self)
        spec = __import__("importlib.util").util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.PUSH_INTERVAL = {value}

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _SetInterval())
'''

_ADAPTIVE_PUSH = '''
# what-if adaptive-push={value}: one controller per worker sets interrupt_chat.workers.load.PUSH_INTERVAL from
# the event loop's lag: every 0.25 s, the worst lateness of a 50 ms timer in that window; above
# 100 ms the interval grows x1.5 (up to {value} s), below 25 ms it shrinks /1.25 (down to 50 ms)
import asyncio
import importlib.abc
import importlib.util
import sys


def _start(module):
    async def control():
        loop = asyncio.get_running_loop()
        while True:
            worst, until = 0.0, loop.time() + 0.25
            while loop.time() < until:
                before = loop.time()
                await asyncio.sleep(0.05)
                worst = max(worst, loop.time() - before - 0.05)
            load = sys.modules["interrupt_chat.workers.load"]
            if worst > 0.1:
                load.PUSH_INTERVAL = min({value}, load.PUSH_INTERVAL * 1.5)
            elif worst < 0.025:
                load.PUSH_INTERVAL = max(0.05, load.PUSH_INTERVAL / 1.25)

    init = module._Throttle.__init__
    tasks = {{}}

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        loop = asyncio.get_running_loop()
        if loop not in tasks:
            tasks[loop] = loop.create_task(control())

    module._Throttle.__init__ = __init__


class _Adaptive(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "interrupt_chat.tab.driver":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _start(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Adaptive())
'''

WHAT_IF = {"ssl-cache": lambda value: _SSL_CACHE,
           "push-interval": lambda value: _PUSH_INTERVAL.format(value=float(value or 0.5)),
           "adaptive-push": lambda value: _ADAPTIVE_PUSH.format(value=float(value or 0.6))}


def what_if(spec: str) -> str:
    """The argparse type of ``--what-if``: ``NAME`` or ``NAME=VALUE``, a key of ``WHAT_IF``."""
    name = spec.partition("=")[0]
    if name not in WHAT_IF:
        raise argparse.ArgumentTypeError(f"unknown what-if {name!r} (known: {', '.join(sorted(WHAT_IF))})")
    return spec


def start_backend(args: argparse.Namespace, tmp: Path, agent_url: str, redis_url: str | None) -> tuple[Started, str]:
    """``reflex run --env prod --backend-only`` on a free port, and its base URL."""
    port = free_port()
    states = tmp / "states"
    states.mkdir()
    env = {**os.environ,
           "INTERRUPT_CHAT_AGENT_URL": agent_url + "/",
           "INTERRUPT_CHAT_DB_URL": "off" if args.db == "off" else f"sqlite:///{tmp / 'threads.db'}",
           "REFLEX_STATES_WORKDIR": str(states),  # not the repository's .states (reflex run empties it)
           "GRANIAN_WORKERS": str(args.workers),
           "REFLEX_USE_GRANIAN": "1",
           "REFLEX_TELEMETRY_ENABLED": "false",
           "REFLEX_CHECK_LATEST_VERSION": "false",
           "PYTHONUNBUFFERED": "1"}
    env.pop("REFLEX_REDIS_URL", None)
    if args.what_if:
        patches = tmp / "what-if"
        patches.mkdir()
        code = [WHAT_IF[name](value) for name, _, value in (spec.partition("=") for spec in args.what_if)]
        (patches / "sitecustomize.py").write_text("\n".join(code))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(patches), env.get("PYTHONPATH", "")]))
    if redis_url:
        env["REFLEX_REDIS_URL"] = redis_url
    reflex = str(Path(sys.executable).with_name("reflex"))
    backend = spawn("backend", [reflex, "run", "--env", "prod", "--backend-only", "--backend-host", "127.0.0.1",
                                "--backend-port", str(port), "--loglevel", "warning"], tmp, env, args.app_root)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/ping", backend, 120)
    return backend, url


# -- CPU accounting -------------------------------------------------------------------------------

def tree(pid: int) -> list[psutil.Process]:
    """A process and its descendants."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def cpu_of(procs: list[psutil.Process]) -> dict[int, float]:
    """CPU seconds (user + system, own and reaped children) by pid."""
    out = {}
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            times = proc.cpu_times()
            out[proc.pid] = times.user + times.system + times.children_user + times.children_system
    return out


@dataclass
class CpuSnapshot:
    """CPU seconds by group and pid, and the machine's CPU times, at one moment."""

    t: float
    groups: dict[str, dict[int, float]]
    system: Any

    @classmethod
    def take(cls, groups: dict[str, list[psutil.Process]]) -> CpuSnapshot:
        """CPU seconds of every group's processes and of the machine, now."""
        return cls(time.monotonic(), {name: cpu_of(procs) for name, procs in groups.items()}, psutil.cpu_times())


def cpu_report(start: CpuSnapshot, end: CpuSnapshot) -> dict[str, Any]:
    """Cores used between two snapshots, by group and process; the machine's, and what others used."""
    wall = end.t - start.t
    report: dict[str, Any] = {"wall_s": wall, "groups": {}}
    for name, after in end.groups.items():
        before = start.groups.get(name, {})
        per = {pid: (used - before.get(pid, 0.0)) / wall for pid, used in after.items()}
        report["groups"][name] = {"total": sum(per.values()), "per_process": per}
    busy = (sum(end.system) - end.system.idle - end.system.iowait) - (
        sum(start.system) - start.system.idle - start.system.iowait)
    report["machine_busy_cores"] = busy / wall
    report["cores"] = psutil.cpu_count()
    ours = sum(g["total"] for g in report["groups"].values())
    report["others_cores"] = max(0.0, report["machine_busy_cores"] - ours)
    return report


# -- profile (optional) ----------------------------------------------------------------------------

def start_profilers(args: argparse.Namespace, backend: list[psutil.Process]) -> list[tuple[subprocess.Popen, Path]]:
    """``py-spy record`` (collapsed stacks) on every backend process but granian's supervisor."""
    if not args.py_spy:
        return []
    out = []
    for proc in backend[1:] or backend:
        path = args.tmp / f"profile-{proc.pid}.txt"
        cmd = [args.py_spy, "record", "--pid", str(proc.pid), "--rate", "100", "--format", "raw", "--nonblocking",
               "--output", str(path)]
        out.append((subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), path))
    return out


def stop_profilers(profilers: list[tuple[subprocess.Popen, Path]]) -> None:
    """Stop py-spy (it writes its output on SIGINT)."""
    for proc, _ in profilers:
        proc.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
    for proc, _ in profilers:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


_WRAPPERS = ("granian/", "click/", "multiprocessing/", "reflex/reflex.py", "reflex/utils/exec.py",
             "asyncio/base_events", "threading.py", "<module>")


def profile_summary(paths: list[Path], top: int = 30) -> list[str]:
    """Inclusive and self shares of the sampled (busy) time by function, from py-spy's collapsed stacks."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for path in paths:
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            stack, _, count = line.rpartition(" ")
            frames = [_short(f) for f in stack.split(";") if f]
            if not count.isdigit() or not frames:
                continue
            n = int(count)
            total += n
            for frame in set(frames):
                inclusive[frame] = inclusive.get(frame, 0) + n
            own[frames[-1]] = own.get(frames[-1], 0) + n
    if not total:
        return ["(no samples)"]
    shown = [(f, n) for f, n in sorted(inclusive.items(), key=lambda kv: -kv[1]) if not any(w in f for w in _WRAPPERS)]
    out = [f"{total} busy samples (100/s per process); inclusive % (self %), event-loop and server frames left out:"]
    out += [f"  {100 * n / total:5.1f} ({100 * own.get(f, 0) / total:4.1f})  {f}" for f, n in shown[:top]]
    out.append("top self %:")
    out += [f"  {100 * n / total:5.1f}  {f}" for f, n in sorted(own.items(), key=lambda kv: -kv[1])[:12]]
    return out


def _short(frame: str) -> str:
    """``fn (path/to/site-packages/pkg/mod.py:12)`` -> ``fn (pkg/mod.py)``."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "lib/python3.11/", str(ROOT) + "/"):
        if marker in where:
            where = where.split(marker, 1)[1]
            break
    return f"{name} ({where})" if where else name


# -- chats ----------------------------------------------------------------------------------------

@dataclass
class Turn:
    """One message sent and the answer it gets."""

    nonce: str
    pattern: re.Pattern[str]
    sent_at: float
    seen: dict[int, float] = field(default_factory=dict)  # seq -> receive time of the first frame showing it
    frames: int = 0
    chars: int = 0
    running: bool = False
    end_status: str = ""
    done_at: float | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Chat:
    """One tab: its socket, its view of the chat, its turns and what went wrong."""

    index: int
    view: ChatView = field(default_factory=ChatView)
    sock: ReflexSocket | None = None
    turns: list[Turn] = field(default_factory=list)
    nonces: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    leaks: set[str] = field(default_factory=set)
    leak_frames: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    ready_at: float | None = None
    reader_closed: str = ""
    resync_at: float = 0.0
    resyncs: int = 0  # resync_stream events sent after a gap


async def read(chat: Chat) -> None:
    """The tab's receive loop: leaks, texts, deltas first seen, turn ends, readiness."""
    assert chat.sock is not None
    try:
        async for frame in chat.sock.frames():
            foreign = foreign_nonces(frame.raw, chat.nonces)
            if foreign:
                chat.leaks |= foreign
                chat.leak_frames += 1
            changed = chat.view.apply(frame.update)
            if chat.view.gap_keys and time.time() - chat.resync_at > 2.0:  # as stream_text.jsx's onGap
                chat.view.take_gaps()
                chat.resync_at = time.time()
                chat.resyncs += 1
                await chat.sock.emit(f"{chat.view.state_key}.resync_stream")
            turn = chat.turns[-1] if chat.turns and chat.turns[-1].done_at is None else None
            if turn is not None:
                turn.frames += 1
                turn.chars += len(frame.raw)
                for _key, text, keep in changed:
                    for found in turn.pattern.finditer(text, max(0, keep - 40)):
                        turn.seen.setdefault(int(found.group(1)), frame.t)
                status = chat.view.vars.get("status")
                if status == "running":
                    turn.running = True
                elif turn.running:
                    turn.end_status, turn.done_at = str(status), frame.t
                    turn.done.set()
            if not chat.ready.is_set() and chat.view.vars.get("loaded") is True:
                chat.ready_at = time.time()
                chat.ready.set()
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a disconnect or a protocol error is a result, reported per chat
        chat.reader_closed = f"{type(exc).__name__}: {exc}"[:200]
    finally:
        for turn in chat.turns:
            turn.done.set()
        chat.ready.set()


async def sleep_until(t: float) -> None:
    """Sleep until wall-clock time ``t``."""
    delay = t - time.time()
    if delay > 0:
        await asyncio.sleep(delay)


@dataclass
class Plan:
    """The shared schedule: when tabs connect, when streaming starts, when everyone may leave."""

    base_url: str
    args: argparse.Namespace
    connect_t0: float
    stream_t0: float | None = None
    streaming: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)


async def run_chat(chat: Chat, plan: Plan) -> None:
    """One tab: connect, load the chat, send its turns, stay until every chat is done."""
    args = plan.args
    await sleep_until(plan.connect_t0 + chat.index / args.connect_rate)
    chat.sock = sock = ReflexSocket(plan.base_url)
    reader: asyncio.Task[None] | None = None
    try:
        await sock.connect()
        reader = asyncio.ensure_future(read(chat))
        deadline = time.time() + 60
        while chat.view.state_key is None and time.time() < deadline and not reader.done():
            await asyncio.sleep(0.05)  # the hydrate delta names the chat's state
        if chat.view.state_key is None:
            raise RuntimeError("no chat state in the hydrate delta")
        for handler in ("on_load_chat", "ensure_loaded"):  # what the chat's mount sends
            await sock.emit(f"{chat.view.state_key}.{handler}")
        await asyncio.wait_for(chat.ready.wait(), 60)
        if chat.reader_closed:
            raise RuntimeError(f"socket closed during warm-up: {chat.reader_closed}")
        await plan.streaming.wait()
        assert plan.stream_t0 is not None
        await sleep_until(plan.stream_t0 + chat.index * args.ramp / max(1, args.chats))
        timeout = args.deltas / args.rate + args.turn_timeout
        for _ in range(args.turns):
            nonce = "Z" + secrets.token_hex(8)
            chat.nonces.add(nonce)
            turn = Turn(nonce, re.compile(re.escape(nonce) + r":(\d+);"), time.time())
            chat.turns.append(turn)
            await sock.emit(f"{chat.view.state_key}.send_text", {"text": f"nonce:{nonce}"})
            try:
                await asyncio.wait_for(turn.done.wait(), timeout)
            except TimeoutError:
                chat.errors.append(f"turn timed out after {timeout:.0f} s ({len(turn.seen)} deltas seen, "
                                   f"status {chat.view.vars.get('status')!r}, notice {chat.view.vars.get('notice')!r})")
                break
            if turn.done_at is None:
                chat.errors.append(f"socket closed mid-turn: {chat.reader_closed}")
                break
            if turn.end_status != "idle" or chat.view.vars.get("error"):
                chat.errors.append(f"turn ended {turn.end_status!r}: {str(chat.view.vars.get('error'))[:120]}")
        await plan.finished.wait()  # stay connected while the others stream
        if chat.reader_closed:
            chat.errors.append(f"disconnected: {chat.reader_closed}")
    except Exception as exc:  # noqa: BLE001 - reported per chat
        chat.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        chat.ready.set()
    finally:
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
        await sock.close()


async def loop_lag(samples: list[tuple[float, float]], stop: asyncio.Event) -> None:
    """The harness's own event-loop lag (a late client clock would add to every measured lag)."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(LOOP_TICK)
        samples.append((time.time(), loop.time() - before - LOOP_TICK))


async def drive(args: argparse.Namespace, base_url: str, agent_url: str,
                groups: dict[str, list[psutil.Process]]) -> dict[str, Any]:
    """Warm up, stream, measure; returns the chats, the agent's send times, CPU and the harness's loop lag."""
    chats = [Chat(i) for i in range(args.chats)]
    plan = Plan(base_url, args, time.time() + 0.5)
    tasks = [asyncio.ensure_future(run_chat(chat, plan)) for chat in chats]
    lag_samples: list[tuple[float, float]] = []
    stop = asyncio.Event()
    monitor = asyncio.ensure_future(loop_lag(lag_samples, stop))
    try:
        warmup = args.chats / args.connect_rate + 90
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in chats)), warmup)
        ready = sum(1 for c in chats if c.ready_at is not None and not c.errors)
        print(f"warm-up: {ready}/{args.chats} chats connected and loaded in {time.time() - plan.connect_t0:.1f} s",
              flush=True)
        plan.stream_t0 = time.time() + 1.0
        plan.streaming.set()
        await sleep_until(plan.stream_t0)
        cpu_start = CpuSnapshot.take(groups)
        profilers = start_profilers(args, groups["backend"])
        pending = list(chats)

        async def all_turns_done() -> None:
            while True:
                active = [c for c in pending if not c.errors and (len(c.turns) < args.turns or not all(
                    t.done.is_set() for t in c.turns))]
                if not active:
                    return
                await asyncio.sleep(0.2)

        limit = args.ramp + args.turns * (args.deltas / args.rate + args.turn_timeout) + 30
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(all_turns_done(), limit)
        stream_t1 = time.time()
        cpu_end = CpuSnapshot.take(groups)
        stop_profilers(profilers)
        plan.finished.set()
        await asyncio.wait(tasks, timeout=30)
    finally:
        plan.finished.set()
        plan.streaming.set()
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, monitor, return_exceptions=True)
    async with httpx.AsyncClient(timeout=30) as client:
        sent = (await client.get(f"{agent_url}/sent")).json()
    return {"chats": chats, "sent": sent, "cpu": cpu_report(cpu_start, cpu_end), "stream_t0": plan.stream_t0,
            "stream_t1": stream_t1, "loop_lag": [lag for t, lag in lag_samples if plan.stream_t0 <= t <= stream_t1]}


# -- report ---------------------------------------------------------------------------------------

def pct(values: list[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def summarize(args: argparse.Namespace, result: dict[str, Any], names: dict[int, str]) -> dict[str, Any]:
    """The figures of a run, as a flat dict (printed, and written by ``--json``)."""
    chats: list[Chat] = result["chats"]
    sent: dict[str, list[float]] = result["sent"]["sent"]
    lags: list[float] = []
    windows: dict[int, list[float]] = {}
    first_delta: list[float] = []
    missing = completed = 0
    frames: list[int] = []
    chars: list[int] = []
    rates: list[float] = []
    for chat in chats:
        for turn in chat.turns:
            times = sent.get(turn.nonce, [])
            for seq, seen_at in turn.seen.items():
                if seq < len(times):
                    lag = seen_at - times[seq]
                    lags.append(lag)
                    windows.setdefault(int((times[seq] - result["stream_t0"]) // args.window), []).append(lag)
            if turn.seen:
                first_delta.append(min(turn.seen.values()) - turn.sent_at)
            lost = args.deltas - len([s for s in turn.seen if s < args.deltas])
            missing += lost
            if turn.done_at is not None and turn.end_status == "idle" and lost == 0:
                completed += 1
                frames.append(turn.frames)
                chars.append(turn.chars)
                rates.append(turn.frames / max(1e-9, turn.done_at - turn.sent_at))
    expected = args.chats * args.turns
    loop_lag = result["loop_lag"]
    cpu = result["cpu"]
    return {
        "chats": args.chats, "workers": args.workers, "redis": args.redis, "db": args.db,
        "deltas": args.deltas, "rate": args.rate, "turns": args.turns, "ramp_s": args.ramp,
        "streaming_wall_s": result["stream_t1"] - result["stream_t0"],
        "answers_completed": completed, "answers_expected": expected,
        "errors": sum(len(c.errors) for c in chats), "disconnects": sum(1 for c in chats if c.reader_closed),
        "error_samples": [e for c in chats for e in c.errors][:5],
        "leaks": sum(1 for c in chats if c.leaks), "leak_frames": sum(c.leak_frames for c in chats),
        "deltas_missing": missing, "deltas_measured": len(lags),
        "lag_ms": {q: pct(lags, q) * 1000 for q in (50, 95, 99)} | {"max": max(lags, default=float("nan")) * 1000},
        "lag_p95_ms_by_window": {f"{k * args.window}-{(k + 1) * args.window}s": round(pct(v, 95) * 1000)
                                 for k, v in sorted(windows.items())},
        "first_delta_ms": {q: pct(first_delta, q) * 1000 for q in (50, 95)},
        "frames_per_answer": statistics.fmean(frames) if frames else 0.0,
        "pushes_per_s_per_chat": statistics.fmean(rates) if rates else 0.0,
        "chars_per_answer": statistics.fmean(chars) if chars else 0.0,
        "frames_per_chat": statistics.fmean(c.sock.frames_in for c in chats if c.sock) if chats else 0.0,
        "chars_per_chat": statistics.fmean(c.sock.chars_in for c in chats if c.sock) if chats else 0.0,
        "stream_chunks": sum(c.view.stream_chunks for c in chats),
        "stream_gaps": sum(c.view.stream_gaps for c in chats),
        "resyncs": sum(c.resyncs for c in chats),
        "script_errors": sum(c.view.script_errors for c in chats),
        "client_loop_lag_ms": {"p95": pct(loop_lag, 95) * 1000, "max": max(loop_lag, default=float("nan")) * 1000},
        "cpu_cores": {name: round(group["total"], 3) for name, group in cpu["groups"].items()},
        "cpu_per_process": {f"{names.get(pid, name)} {pid}": round(v, 3)
                            for name, group in cpu["groups"].items() for pid, v in group["per_process"].items()},
        "machine_busy_cores": round(cpu["machine_busy_cores"], 3), "others_cores": round(cpu["others_cores"], 3),
        "machine_cores": cpu["cores"],
        "agent_counts": result["sent"]["counts"],
    }


def print_summary(s: dict[str, Any]) -> None:
    """The short table."""
    lag, cpu = s["lag_ms"], s["cpu_cores"]
    print()
    print(f"load harness: {s['chats']} chats, {s['workers']} worker(s){' + Redis' if s['redis'] else ''}, "
          f"db {s['db']}; {s['turns']} turn(s) x {s['deltas']} deltas at {s['rate']:g}/s, ramp {s['ramp_s']:g} s"
          + (f"; what-if {', '.join(s['what_if'])}" if s.get("what_if") else ""))
    print(f"  code: {s.get('code', '?')}")
    rows = [
        ("answers completed", f"{s['answers_completed']}/{s['answers_expected']} in {s['streaming_wall_s']:.1f} s"),
        ("errors / disconnects", f"{s['errors']} / {s['disconnects']}"),
        ("cross-session leaks", f"{s['leaks']} chats ({s['leak_frames']} frames)"),
        ("deltas measured / missing", f"{s['deltas_measured']} / {s['deltas_missing']}"),
        ("lag p50 / p95 / p99 / max", f"{lag[50]:.0f} / {lag[95]:.0f} / {lag[99]:.0f} / {lag['max']:.0f} ms"),
        ("lag p95 by window of send", "  ".join(f"{k}:{v}" for k, v in s["lag_p95_ms_by_window"].items())),
        ("first delta after send p50/p95", f"{s['first_delta_ms'][50]:.0f} / {s['first_delta_ms'][95]:.0f} ms"),
        ("frames per answer, pushes/s", f"{s['frames_per_answer']:.0f}, {s['pushes_per_s_per_chat']:.1f}/s per chat"),
        ("bytes per answer, per frame", f"{s['chars_per_answer'] / 1000:.0f} k, "
                                        f"{s['chars_per_answer'] / max(1, s['frames_per_answer']):.0f}"),
        ("per chat, whole session", f"{s['frames_per_chat']:.0f} frames, {s['chars_per_chat'] / 1000:.0f} kB received"),
        ("icStream chunks / gaps / resyncs", f"{s['stream_chunks']} / {s['stream_gaps']} / {s['resyncs']} "
                                            f"(unreadable scripts {s['script_errors']})"),
        ("CPU (cores) backend / agent / harness",
         f"{cpu.get('backend', 0):.2f} / {cpu.get('agent', 0):.2f} / {cpu.get('harness', 0):.2f}"
         + (f" / redis {cpu['redis']:.2f}" if "redis" in cpu else "")),
        ("CPU per process", ", ".join(f"{k} {v:.2f}" for k, v in s["cpu_per_process"].items())),
        ("machine busy / others", f"{s['machine_busy_cores']:.2f} / {s['others_cores']:.2f} of {s['machine_cores']} "
                                  "cores"),
        ("harness loop lag p95 / max",
         f"{s['client_loop_lag_ms']['p95']:.0f} / {s['client_loop_lag_ms']['max']:.0f} ms"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    for sample in s["error_samples"]:
        print(f"  error: {sample}")


def code_version(root: Path = ROOT) -> str:
    """The commit measured, and which files of the app differ from it (the working tree is what runs)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "interrupt_chat"], cwd=root, capture_output=True,
                               text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    changed = [line[3:] for line in dirty if line.strip()]
    if not changed:
        return head
    return f"{head} + {len(changed)} changed file(s) in interrupt_chat/ ({', '.join(changed[:6])})"


def backend_log_problems(log: Path) -> list[str]:
    """Lines of the backend's log that report a problem."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [line for line in lines if re.search(r"Traceback|ERROR|Error|Exception|WARNING", line)]


def main(argv: list[str] | None = None) -> int:
    """Run the harness; exit status 0 when every answer completed, without errors or leaks, within the p95 target."""
    parser = argparse.ArgumentParser(description="Concurrent chats against the real backend, without browsers.")
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1, help="GRANIAN_WORKERS (more than 1 needs --redis)")
    parser.add_argument("--redis", action="store_true", help="start redis-server and use Reflex's Redis state manager")
    parser.add_argument("--deltas", type=int, default=200, help="deltas per answer")
    parser.add_argument("--rate", type=float, default=20.0, help="deltas per second per answer")
    parser.add_argument("--turns", type=int, default=2, help="answers per chat, one after the other")
    parser.add_argument("--ramp", type=float, default=5.0, help="seconds over which the chats send their first message")
    parser.add_argument("--connect-rate", type=float, default=40.0, help="connections per second during warm-up")
    parser.add_argument("--turn-timeout", type=float, default=60.0, help="seconds allowed beyond an answer's length")
    parser.add_argument("--db", choices=["sqlite", "off"], default="sqlite", help="thread database: temp SQLite or off")
    parser.add_argument("--window", type=int, default=5, help="seconds per window of the lag-by-time line")
    parser.add_argument("--target-ms", type=float, default=1000.0, help="the p95 lag target (the verdict line)")
    parser.add_argument("--py-spy", dest="py_spy", metavar="PATH",
                        help="sample the backend worker(s) with this py-spy binary while the chats stream")
    parser.add_argument("--what-if", dest="what_if", action="append", type=what_if, default=[],
                        help="load a what-if patch into the backend, to size a fix before making it: ssl-cache, "
                             "push-interval=SECONDS, adaptive-push=MAX_SECONDS (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    parser.add_argument("--app-root", type=Path, default=ROOT,
                        help="the tree whose app the backend runs (another commit's checkout; default: this one)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, database)")
    args = parser.parse_args(argv)
    if args.workers > 1 and not args.redis:
        parser.error("--workers > 1 needs --redis (Reflex's disk state manager is per process)")

    def on_term(*_: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    tmp = args.tmp = Path(tempfile.mkdtemp(prefix="ic-load-"))
    started: list[Started] = []
    t_start = time.time()
    try:
        agent, agent_url = start_agent(args, tmp)
        started.append(agent)
        redis_url = None
        if args.redis:
            redis, redis_url = start_redis(tmp)
            started.append(redis)
        backend, base_url = start_backend(args, tmp, agent_url, redis_url)
        started.append(backend)
        time.sleep(1.0)  # let granian finish forking its workers
        groups = {"backend": tree(backend.proc.pid), "agent": tree(agent.proc.pid),
                  "harness": [psutil.Process()]}
        names = {p.pid: ("granian main" if p.pid == backend.proc.pid else "worker") for p in groups["backend"]}
        if args.redis:
            groups["redis"] = tree(redis.proc.pid)
        print(f"backend {base_url} (pids {[p.pid for p in groups['backend']]}), agent {agent_url}, tmp {tmp}",
              flush=True)
        result = asyncio.run(drive(args, base_url, agent_url, groups))
        summary = summarize(args, result, names)
        summary["total_s"] = time.time() - t_start
        summary["code"] = code_version(args.app_root)
        summary["what_if"] = args.what_if
        problems = backend_log_problems(backend.log)
        summary["backend_log_problem_lines"] = len(problems)
        print_summary(summary)
        print(f"  {'backend log problem lines':<31}  {len(problems)}"
              + (f"  (first: {problems[0][:160]})" if problems else ""))
        print(f"  {'total time':<31}  {summary['total_s']:.0f} s")
        if args.py_spy:
            profile = profile_summary(sorted(tmp.glob("profile-*.txt")))
            summary["profile"] = profile
            print("\nbackend profile (py-spy, streaming window):")
            print("\n".join(profile))
        ok = (summary["leaks"] == 0 and summary["errors"] == 0
              and summary["answers_completed"] == args.chats * args.turns)
        met = ok and summary["lag_ms"][95] < args.target_ms
        summary["target_met"] = met
        print(f"  {'verdict':<31}  {'MET' if met else 'NOT MET'}: every answer complete, no error, no leak, "
              f"p95 lag < {args.target_ms:.0f} ms")
        if args.json:
            args.json.write_text(json.dumps(summary, indent=2, default=str))
        return 0 if met else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        for process in reversed(started):
            process.stop()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
