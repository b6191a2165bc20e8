"""What a fresh tab of the demo site loads, and what that costs the browser, route by route.

Reflex compiles the components it memoises into one file per Python module of the page function
that drew them, and a route loads every file whose components it uses, whole. This serves the
demo site of this tree and of ``--baseline`` (a git worktree) one after the other, with ``reflex
run`` in production mode (the default) or dev mode (``--dev``: Vite serving each module apart, as
the browser tests run it), and opens each route ``--loads`` times, each in a fresh browser
context (no cache: a new visitor, and every browser test). Per load:

- **bytes**: the bodies of the page's scripts (and their count), as the page received them;
- **ready**: from ``goto`` until the page is drawn and connected (``#main`` visible, and on a chat
  page its ``run-status`` says ``idle``);
- **cpu**: the CPU seconds every Chromium process used over the load (the renderer, its
  compositing and compile threads, the network service), read from ``/proc``.

It prints the median of each per route and app, then this tree's as ratios of the baseline's.
Run it alone: the browser and the server share the machine's cores.

    .venv/bin/python -m benchmarks.page_load                 # ~5 min: production builds, against BASELINE
    .venv/bin/python -m benchmarks.page_load --dev --loads 5 # dev mode (as the browser tests)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

if __package__ in (None, ""):  # run as a file: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "a31b36a"  # before each page (and each chat's history row) compiled into a file of its own
ROUTES = ["/", "/approval", "/steps", "/inbox", "/policies", "/insights"]
CHATS = {"/", "/approval", "/steps"}  # pages whose chat must say idle before the load counts as done


def chromium_cpu() -> float:
    """CPU seconds used so far by this benchmark's Chromium (its processes, and those they reaped)."""
    from benchmarks.load_harness import cpu_of, tree

    browser = [proc for proc in tree(os.getpid()) if "chromium" in " ".join(_cmdline(proc))]
    return sum(cpu_of(browser).values())


def _cmdline(proc: psutil.Process) -> list[str]:
    with contextlib.suppress(psutil.Error):
        return proc.cmdline()
    return []


def load_once(browser: Any, url: str, route: str) -> dict[str, float]:
    """One fresh visitor's load of ``route``: script bytes and count, time to ready, Chromium's CPU."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    scripts: list[int] = []

    def received(response: Any) -> None:
        if response.request.resource_type == "script":
            with contextlib.suppress(Exception):  # a body the page dropped (a navigation) is not counted
                scripts.append(len(response.body()))

    page.on("response", received)
    cpu, started = chromium_cpu(), time.perf_counter()
    page.goto(url + route)
    expect(page.locator("#main")).to_be_visible(timeout=120_000)
    if route in CHATS:
        expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "idle", timeout=60_000)
    ready = time.perf_counter() - started
    page.wait_for_load_state("networkidle")
    used = chromium_cpu() - cpu
    context.close()
    return {"kb": sum(scripts) / 1024, "scripts": len(scripts), "ready_ms": ready * 1000, "cpu_s": used}


@contextlib.contextmanager
def dev_server(name: str, cwd: Path, logs: Path) -> Iterator[str]:
    """``reflex run`` in dev mode (Vite) of the tree at ``cwd``; yields the page's URL once it serves."""
    from benchmarks.browser_stream import _free_port, _get, _process

    front, back = _free_port(), _free_port()
    folder = tempfile.TemporaryDirectory(prefix="ic-page-load-")
    env = {**os.environ, "PYTHONPATH": str(cwd), "REFLEX_TELEMETRY_ENABLED": "false",
           "INTERRUPT_CHAT_DB_URL": f"sqlite:///{Path(folder.name) / 'threads.db'}"}
    reflex = str(Path(sys.executable).with_name("reflex"))
    argv = [reflex, "run", "--env", "dev", "--frontend-port", str(front), "--backend-port", str(back),
            "--backend-host", "127.0.0.1"]
    with folder, _process(argv, cwd, env, logs / f"{name}.log") as server:
        url, deadline = f"http://localhost:{front}", time.monotonic() + 900
        while True:
            with contextlib.suppress(OSError):
                if _get(url + "/", 5):
                    break
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start: see {logs / f'{name}.log'}")
            time.sleep(1)
        yield url


@contextlib.contextmanager
def serve(name: str, cwd: Path, dev: bool, logs: Path) -> Iterator[str]:
    """The demo site of the tree at ``cwd``: dev mode, or production (one worker, a fresh database)."""
    if dev:
        with dev_server(name, cwd, logs) as url:
            yield url
        return
    from benchmarks.long_thread import serve as serve_prod

    with serve_prod(name, cwd, "http://127.0.0.1:9/", logs) as url:  # no message is sent: no agent
        yield url


def measure(browser: Any, url: str, loads: int) -> dict[str, dict[str, float]]:
    """Each route's medians over ``loads`` fresh loads, after one unmeasured load (the server's first)."""
    figures = {}
    for route in ROUTES:
        load_once(browser, url, route)
        runs = [load_once(browser, url, route) for _ in range(loads)]
        figures[route] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        print(f"  {route:<10} " + "  ".join(f"{key} {value:,.1f}" for key, value in figures[route].items()), flush=True)
    return figures


def report(results: dict[str, dict[str, dict[str, float]]]) -> None:
    """This tree's medians as ratios of the baseline's, per route and over all routes."""
    if "baseline" not in results:
        return
    mine, base = results["this tree"], results["baseline"]
    print("\nthis tree / baseline (medians; below 1: less)")
    keys = list(next(iter(mine.values())))
    for route in ROUTES:
        print(f"  {route:<10} " + "  ".join(f"{key} {mine[route][key] / base[route][key]:.2f}" for key in keys))
    print("  all routes " + "  ".join(
        f"{key} {sum(m[key] for m in mine.values()) / sum(b[key] for b in base.values()):.2f}" for key in keys))


def main(argv: list[str] | None = None) -> None:
    """Serve each tree in turn and load its routes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=7, help="measured loads per route and tree")
    parser.add_argument("--dev", action="store_true", help="dev mode (Vite), as the browser tests run the site")
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with ('': none)")
    parser.add_argument("--baseline-first", action="store_true", help="measure the baseline before this tree")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from benchmarks.browser_stream import CHROMIUM_ARGS
    from benchmarks.long_thread import checkout

    logs = ROOT / "test-artifacts" / "page_load"
    logs.mkdir(parents=True, exist_ok=True)
    chromium = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
    results: dict[str, dict[str, dict[str, float]]] = {}
    started = time.time()
    with contextlib.ExitStack() as stack:
        trees = [("this tree", ROOT)]
        if args.baseline:
            trees.append(("baseline", stack.enter_context(checkout(args.baseline))))
            if args.baseline_first:
                trees.reverse()
        browser = stack.enter_context(sync_playwright()).chromium.launch(executable_path=chromium,
                                                                         args=CHROMIUM_ARGS)
        for name, cwd in trees:
            with serve(name.replace(" ", "-"), cwd, args.dev, logs) as url:
                print(f"{name} ({'dev' if args.dev else 'prod'}): {url}", flush=True)
                results[name] = measure(browser, url, args.loads)
        browser.close()
    report(results)
    print(f"\nhost: {psutil.cpu_count()} cores; total {time.time() - started:.0f} s; logs in {logs}")


if __name__ == "__main__":
    main()
