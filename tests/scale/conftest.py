"""Scale-out browser tests: the real app on Reflex's own engine, two granian workers sharing Redis.

``reflex run --env prod`` runs as a subprocess in its own process group, with ``GRANIAN_WORKERS=2``,
``REFLEX_REDIS_URL`` (a ``redis-server`` started here), the scripted demo agent on its own loopback
port, a SQLite thread database in a temporary folder, one free loopback port (prod serves the
frontend from the backend) and its own web directory (``REFLEX_WEB_WORKDIR``), so it never touches
the ``.web`` the other browser tests build. The pages' backend URL (``REFLEX_API_URL``: the websocket)
is a TCP proxy in this process, as a load balancer would be; psutil then tells which worker serves a
tab's websocket (the one connected to the proxy's upstream socket) and which worker drives a run
(the one whose connection to the demo agent carries a request the agent is still answering: a worker
keeps idle connections to the agent open between runs, so an open one alone says nothing).

Run as its own pytest process, after ``. scripts/env.sh`` like every reflex command (``scripts/test.sh``);
``tests/e2e`` does not collect it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
from playwright.sync_api import Page, expect

from interrupt_chat.demo.agent import create_app as create_demo_agent
from tests.browser_errors import browser_errors  # noqa: F401 - an autouse fixture
from tests.e2e.conftest import ARTIFACTS, Chat, DemoAgent, browser_type_launch_args  # noqa: F401 - a fixture
from tests.proxy import TcpProxy
from tests.redis_server import running_redis
from tests.unit.agents import free_port, serve_in_thread

APP_ROOT = Path(__file__).resolve().parents[2]
REFLEX = str(Path(sys.executable).parent / "reflex")  # the reflex of the venv running the tests
WEB_DIR = Path(tempfile.gettempdir()) / "interrupt_chat-scale-web"  # kept between runs: a warm build
AGENT_DELAY = 0.02  # seconds per streamed delta: the "long" answer takes 40 s, ample time to act mid-stream
EXPIRES_IN = 6.0  # the "expiring" scenario (the sweeper test waits it out)
START_TIMEOUT = 240.0

expect.set_options(timeout=20_000)


class ScaleApp:
    """``reflex run --env prod`` with two workers on Redis; started, killed and restarted by the tests."""

    def __init__(self, env: dict[str, str], port: int, log: Path) -> None:
        self.env, self.port, self.log = env, port, log
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, again: bool = False) -> None:
        """``again``: on the compiled app and the build of the first start, as a supervisor restarts it."""
        command = [sys.executable, "-m", "tests.scale.rerun"] if again else [REFLEX]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen([*command, "run", "--env", "prod", "--backend-host", "127.0.0.1"],
                                            cwd=APP_ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the app exited ({self.process.returncode}):\n{self.tail()}", pytrace=False)
            if _ok(self.url + "/ping") and _ok(self.url + "/") and len(self.workers()) == 2:
                return
            time.sleep(0.5)
        pytest.fail(f"the app did not start within {START_TIMEOUT:.0f} s:\n{self.tail()}", pytrace=False)

    def stop(self) -> None:
        """End the whole process group (the CLI, granian's workers, anything they started)."""
        if self.process is None:
            return
        pgid = self.process.pid
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(wait)
                deadline = time.monotonic() + wait
                while _group_alive(pgid) and time.monotonic() < deadline:
                    time.sleep(0.1)
                if not _group_alive(pgid):
                    break
            except subprocess.TimeoutExpired:
                continue
        self.process = None

    def tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def workers(self) -> list[psutil.Process]:
        """Granian's worker processes: the ``reflex run`` process (granian's supervisor) forks them, so they
        have its command line (which its other children, such as multiprocessing's resource tracker, have not)."""
        if self.process is None or self.process.poll() is not None:
            return []
        try:
            supervisor = psutil.Process(self.process.pid)
            command, children = _cmdline(supervisor), supervisor.children()
        except psutil.NoSuchProcess:
            return []
        return [c for c in children if _alive(c) and _cmdline(c) == command]

    def websockets(self) -> dict[int, int]:
        """The open websockets: the proxy's upstream port -> the pid of the worker serving it."""
        upstream = {c.laddr.port for c in psutil.Process().net_connections("tcp")
                    if c.raddr and c.raddr.port == self.port and c.status == psutil.CONN_ESTABLISHED}
        found = {}
        for worker in self.workers():
            with contextlib.suppress(psutil.NoSuchProcess):
                found.update({c.raddr.port: worker.pid for c in worker.net_connections("tcp")
                              if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == self.port
                              and c.raddr and c.raddr.port in upstream})
        return found

    def websocket_workers(self) -> Counter[int]:
        """Worker pid -> number of websockets it serves."""
        return Counter(self.websockets().values())

    def run_workers(self, agent: ScaleAgent) -> set[int]:
        """The workers with a request open to the agent, still being answered: the ones driving a run."""
        agent_port, streaming = urllib.parse.urlsplit(agent.url).port, agent.in_flight.ports()
        found = set()
        for worker in self.workers():
            with contextlib.suppress(psutil.NoSuchProcess):
                if any(c.raddr and c.raddr.port == agent_port and c.laddr.port in streaming
                       and c.status == psutil.CONN_ESTABLISHED for c in worker.net_connections("tcp")):
                    found.add(worker.pid)
        return found


class InFlight:
    """ASGI middleware: the client (peer) ports of the requests the app is still answering."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._ports: Counter[int] = Counter()
        self._lock = threading.Lock()  # the app runs in the server's thread; the tests ask from theirs

    async def __call__(self, scope, receive, send) -> None:
        client = scope.get("client") if scope["type"] == "http" else None
        if not client:
            await self.app(scope, receive, send)
            return
        with self._lock:
            self._ports[client[1]] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            with self._lock:
                self._ports[client[1]] -= 1
                if not self._ports[client[1]]:
                    del self._ports[client[1]]

    def ports(self) -> set[int]:
        with self._lock:
            return set(self._ports)


@dataclass
class ScaleAgent(DemoAgent):
    """The demo agent as the scale tests serve it: it tells which of its requests are still being answered."""

    in_flight: InFlight


def _ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []


def _group_alive(pgid: int) -> bool:
    for process in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(process.pid) == pgid and _alive(process):
                return True
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    return False


# One agent and one app for the whole run: a start compiles the app and builds its frontend (about 20 s here).
# Each test's anonymous tabs are a person of their own; the demo's people sign in in test_people_scale only.
@pytest.fixture(scope="session")
def scale_agent() -> Iterator[ScaleAgent]:
    app = create_demo_agent(delay=AGENT_DELAY, expires_in=EXPIRES_IN)
    in_flight = InFlight(app)
    with serve_in_thread(in_flight) as base_url:
        yield ScaleAgent(app, base_url + "/", in_flight)


@pytest.fixture(scope="session")
def scale_app(scale_agent: ScaleAgent, tmp_path_factory) -> Iterator[ScaleApp]:
    folder = tmp_path_factory.mktemp("scale")
    port = free_port()
    with running_redis() as redis_url, TcpProxy(port) as proxy:
        env = {**os.environ, "REFLEX_REDIS_URL": redis_url, "GRANIAN_WORKERS": "2",
               "INTERRUPT_CHAT_AGENT_URL": scale_agent.url,
               "INTERRUPT_CHAT_DB_URL": f"sqlite:///{folder / 'threads.db'}",
               "REFLEX_DB_URL": f"sqlite:///{folder / 'auth.db'}",  # the demo's logins (both workers make its tables)
               "INTERRUPT_CHAT_DEMO_PEOPLE": "1",  # the demo's people (§6.2); anonymous tabs work as without them
               "REFLEX_FRONTEND_PORT": str(port), "REFLEX_BACKEND_PORT": str(port),
               "REFLEX_API_URL": f"http://127.0.0.1:{proxy.port}", "REFLEX_WEB_WORKDIR": str(WEB_DIR)}
        app = ScaleApp(env, port, folder / "app.log")
        try:
            app.start()
            yield app
        finally:
            app.stop()
            ARTIFACTS.mkdir(exist_ok=True)
            (ARTIFACTS / "scale-out-app.log").write_text(app.tail(200_000))


@pytest.fixture
def tab(page: Page, scale_app: ScaleApp) -> Chat:
    page.set_viewport_size({"width": 1280, "height": 900})
    return Chat(page, scale_app.url)
