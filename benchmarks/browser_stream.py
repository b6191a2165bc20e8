"""Streaming in a real browser: this project's chat against the usual hand-written Reflex chat.

One assistant answer of ``--deltas`` deltas (4 characters each, markdown) from a paced agent
(``benchmarks/_markdown_agent.py``, its own process) is streamed into each app, built and served
with ``reflex run --env prod`` on loopback ports, and drawn in headless Chromium. Per token rate,
for both apps, it prints:

- **bytes ÷ answer**: websocket bytes the page received during the answer (CDP
  ``Network.webSocketFrameReceived``, UTF-8) over the answer's own bytes;
- **unchanged resends**: var values received again equal to the value the page already had;
- **first-token lag**: when the answer's first characters are in the DOM (a MutationObserver)
  minus when the agent wrote the first delta (same machine clock);
- **DOM lag**: the same for the answer's last characters;
- **main thread**: the page's busy time over the answer (CDP ``Performance.getMetrics``
  ``TaskDuration``);
- **backend CPU**: the CPU time of the app's server processes over the answer (``/proc``), per
  1,000 deltas;

and the project's figures as ratios of the naive chat's. The naive chat (``benchmarks/naive_chat``)
appends each delta to its message list inside ``async with self``.

Run it alone (it serves the project from its own ``.web``, which the browser tests also use):

    .venv/bin/python -m benchmarks.browser_stream                       # 20, 100 tok/s, unpaced: ~20 min
    .venv/bin/python -m benchmarks.browser_stream --deltas 1000 --rates 100,0   # a quick look
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NAIVE = ROOT / "benchmarks" / "naive_chat"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
TARGETS = {"bytes": 3.0, "dom_lag_ms": 50.0, "first_ms": 60.0, "main_thread_ratio": 0.30}

OBSERVER = """() => {
  window.__marks = {};
  const stamp = () => performance.timeOrigin + performance.now();
  const check = () => {
    const answers = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
    const last = answers[answers.length - 1];
    if (!last) return;
    const text = last.textContent;
    if (!window.__marks.begin && text.includes("Zq7x")) window.__marks.begin = stamp();
    if (!window.__marks.end && text.includes("Qz9w")) window.__marks.end = stamp();
  };
  new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


@dataclass
class Result:
    app: str
    rate: float
    answer_bytes: int
    ws_bytes: int
    frames: int
    unchanged: int
    first_ms: float
    dom_lag_ms: float
    main_thread_s: float
    backend_cpu_s: float

    @property
    def ratio(self) -> float:
        return self.ws_bytes / self.answer_bytes


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # loopback only
        return response.read()


@contextlib.contextmanager
def _process(args: list[str], cwd: Path, env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def agent(deltas: int, logs: Path) -> Iterator[str]:
    """The paced agent in its own process; yields its URL."""
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks._markdown_agent", "--deltas", str(deltas)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=(logs / "agent.log").open("wb"), start_new_session=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("PORT "), f"the agent did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def group_cpu(pgid: int) -> float:
    """CPU seconds (user + system) used so far by the live processes of process group ``pgid``."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ...
                total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def reflex_prod(name: str, cwd: Path, env: dict[str, str], logs: Path,
                wait: float = 600) -> Iterator[tuple[str, int]]:
    """``reflex run --env prod`` of the app at ``cwd`` on a free loopback port (``env`` added to the
    environment); yields the page's URL and its process group once it answers ``/ping``."""
    port = _free_port()  # prod: one port serves both
    # the page and its backend on one origin, as deployed (Reflex's default api_url names localhost, another
    # site than 127.0.0.1 for cookies: the browser's identity cookie would not stick, a reload a new person)
    origin = f"http://127.0.0.1:{port}"
    env = {**os.environ, **env, "REFLEX_FRONTEND_PORT": str(port), "REFLEX_BACKEND_PORT": str(port),
           "REFLEX_API_URL": origin, "REFLEX_DEPLOY_URL": origin,
           "PYTHONPATH": str(cwd), "REFLEX_TELEMETRY_ENABLED": "false"}
    reflex = str(Path(sys.executable).with_name("reflex"))
    with _process([reflex, "run", "--env", "prod", "--backend-host", "127.0.0.1"], cwd, env,
                  logs / f"{name}.log") as server:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + wait
        while True:
            with contextlib.suppress(OSError):
                if b"pong" in _get(url + "/ping", 2):
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start: see {logs / f'{name}.log'}")
            time.sleep(1)
        yield url, server.pid


@contextlib.contextmanager
def app(name: str, agent_url: str, logs: Path) -> Iterator[tuple[str, int]]:
    """``reflex run --env prod`` for the project or the naive chat; yields the page's URL and its process group."""
    cwd = ROOT if name == "project" else NAIVE
    env = {"INTERRUPT_CHAT_AGENT_URL": agent_url, "NAIVE_AGENT_URL": agent_url, "INTERRUPT_CHAT_DB_URL": "off"}
    with reflex_prod(name, cwd, env, logs) as server:
        yield server


def _unchanged(payloads: list[str]) -> int:
    """Var values received again, equal to what the page already held."""
    held: dict[tuple[str, str], str] = {}
    count = 0
    for payload in payloads:
        if not payload.startswith('42["event",'):
            continue
        update = json.loads(payload[2:])[1]
        for state, variables in (update.get("delta") or {}).items():
            for name, value in variables.items():
                encoded = json.dumps(value, sort_keys=True)
                count += held.get((state, name)) == encoded
                held[(state, name)] = encoded
    return count


def measure(browser: Any, name: str, server: tuple[str, int], agent_url: str, rate: float) -> Result:
    """One answer at ``rate`` deltas/s (0: unpaced) in a fresh page."""
    from playwright.sync_api import expect

    url, group = server
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Performance.enable")
    payloads: list[str] = []
    cdp.on("Network.webSocketFrameReceived", lambda event: payloads.append(event["response"]["payloadData"]))
    page.goto(url + "/")
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
    page.wait_for_timeout(1500)  # hydrated and idle
    page.evaluate(OBSERVER)
    page.get_by_test_id("chat-input").fill(f"rate:{rate:g}")
    busy, cpu = _task_duration(cdp), group_cpu(group)
    payloads.clear()
    page.get_by_test_id("chat-send").click()
    page.wait_for_function("() => window.__marks.end", timeout=1_800_000, polling=100)
    page.wait_for_timeout(1500)  # the end of the run (status, settling) is part of the answer's cost
    busy, cpu = _task_duration(cdp) - busy, group_cpu(group) - cpu
    marks = page.evaluate("() => window.__marks")
    sent = json.loads(_get(agent_url + "sent"))
    page.close()
    dump = ROOT / "test-artifacts" / "browser_stream" / f"frames-{name}-{rate:g}.json"
    dump.write_text(json.dumps(payloads, ensure_ascii=False, indent=0))
    return Result(app=name, rate=rate, answer_bytes=sent["bytes"], frames=len(payloads),
                  ws_bytes=sum(len(p.encode()) for p in payloads), unchanged=_unchanged(payloads),
                  first_ms=marks["begin"] - sent["first_sent"] * 1000, dom_lag_ms=marks["end"] - sent["last_sent"] * 1000,
                  main_thread_s=busy, backend_cpu_s=cpu)


def _task_duration(cdp: Any) -> float:
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return float(metrics["TaskDuration"])


def _rate_label(rate: float) -> str:
    return "unpaced" if rate == 0 else f"{rate:g} tok/s"


def report(results: list[Result], deltas: int) -> bool:
    """Print the table and the project's ratios to the naive chat; True when every target is met."""
    print(f"\n{'rate':>11} {'app':>8} {'bytes/answer':>13} {'frames':>7} {'unchanged':>9} {'first ms':>9} "
          f"{'DOM lag ms':>10} {'main thread s':>13} {'backend CPU s/1k':>16}")
    for r in results:
        print(f"{_rate_label(r.rate):>11} {r.app:>8} {r.ratio:>12.2f}× {r.frames:>7} {r.unchanged:>9} "
              f"{r.first_ms:>9.0f} {r.dom_lag_ms:>10.0f} {r.main_thread_s:>13.2f}"
              f" {r.backend_cpu_s * 1000 / deltas:>16.3f}")
    verdicts = []
    print("\nproject vs naive (same run), targets: bytes ≤ 3× answer, no unchanged resend, DOM lag ≤ 50 ms,"
          " first token ≤ 60 ms, main thread ≤ 30 % of naive")
    for rate in sorted({r.rate for r in results}, reverse=True):
        project = next((r for r in results if r.rate == rate and r.app == "project"), None)
        naive = next((r for r in results if r.rate == rate and r.app == "naive"), None)
        if project is None or naive is None:
            continue
        main = project.main_thread_s / naive.main_thread_s if naive.main_thread_s else float("nan")
        met = (project.ratio <= TARGETS["bytes"] and project.unchanged == 0
               and project.dom_lag_ms <= TARGETS["dom_lag_ms"] and project.first_ms <= TARGETS["first_ms"]
               and (main <= TARGETS["main_thread_ratio"] or rate != 100))
        verdicts.append(met)
        print(f"{_rate_label(rate):>11}: bytes {project.ratio:.2f}× answer ({naive.ws_bytes / project.ws_bytes:.0f}× fewer"
              f" than naive), main thread {main:.0%} of naive, DOM lag {project.dom_lag_ms:.0f} ms"
              f" (naive {naive.dom_lag_ms:.0f}), first token {project.first_ms:.0f} ms (naive {naive.first_ms:.0f})"
              f" {'OK' if met else 'MISSED'}")
    return bool(verdicts) and all(verdicts)


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=4000)
    parser.add_argument("--rates", default="20,100,0", help="deltas per second, comma-separated; 0 = unpaced")
    parser.add_argument("--apps", default="project,naive")
    args = parser.parse_args(argv)
    rates = [float(r) for r in args.rates.split(",")]
    logs = ROOT / "test-artifacts" / "browser_stream"
    logs.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    chromium = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
    with agent(args.deltas, logs) as agent_url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for name in args.apps.split(","):
            with app(name, agent_url, logs) as server:
                for rate in rates:
                    results.append(measure(browser, name, server, agent_url, rate))
                    print(f"{name} at {_rate_label(rate)}: {results[-1]}", flush=True)
        browser.close()
    ok = report(results, args.deltas)
    print("\nall targets met" if ok else "\nsome targets missed")


if __name__ == "__main__":
    main()
