"""Long threads in Chromium: a turn's bytes, and a 1,000-message thread's open time, against the code before (issue 27).

Both apps (this tree, and the baseline commit checked out in a git worktree: the code before the
history went as deltas, decision 22) are built and served with ``reflex run --env prod`` on
loopback ports, on a fresh SQLite thread database each, against one paced agent
(``_markdown_agent.py``, its own process). In one page per app:

- **turns**: ``--turns`` turns in a row on one thread, each an unpaced answer of ``--deltas``
  deltas (4 characters each: about 4 KB). For the turns in ``--report`` it prints the websocket
  bytes the page received during the turn (CDP ``Network.webSocketFrameReceived``) and their ratio
  to the answer's bytes; the first token (the answer's first characters in the DOM, a
  MutationObserver, minus when the agent wrote the first delta); the page's main thread over the
  turn (CDP ``TaskDuration``); and the JS heap after a garbage collection (``JSHeapUsedSize``);
- **heap**: ``--heap`` short turns (``--heap-deltas`` deltas each) in a row on one thread of a page
  of its own; the JS heap after a garbage collection at each of them (after 50 and 500 turns: the
  target is within 2×);
- **open**: a thread of ``--backlog`` turns (a ``MESSAGES_SNAPSHOT`` of markdown answers with code
  blocks and tool calls: over 1,000 messages) ending with a pending approval, then reloaded. It
  prints the time from the navigation to the card and the newest answer drawn, the page's DOM
  nodes and the messages drawn; then the same time for a switch back to it from a new thread.

Then each figure of this tree as a ratio of the baseline's. Targets (issue 27): bytes within 3×
the answer at every turn, the last reported turn within 1.5× the first; the thread open in 1 s.

Run it alone (no browser suite at the same time; about 25 min, most of it the baseline's build and
the 500 short turns of each app):

    .venv/bin/python -m benchmarks.long_thread
    .venv/bin/python -m benchmarks.long_thread --turns 40 --report 1,10,40 --backlog 200 --heap 10,50  # a quick look
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.browser_stream import CHROMIUM_ARGS, ROOT, _get, _task_duration, agent, reflex_prod

BASELINE = "4c6f4fd"  # the last commit whose history var was a whole list (decision 6, before 22)

OBSERVER = """() => {
  const answers = () => document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  const last = () => { const all = answers(); return all[all.length - 1]; };
  window.__prev = last() ? last().dataset.messageId : "";
  window.__marks = {};
  if (window.__observer) return;
  const stamp = () => performance.timeOrigin + performance.now();
  window.__observer = new MutationObserver(() => {
    const answer = last();
    if (!answer || answer.dataset.messageId === window.__prev) return;
    const text = answer.textContent;
    if (!window.__marks.begin && text.includes("Zq7x")) window.__marks.begin = stamp();
    if (!window.__marks.end && text.includes("Qz9w")) window.__marks.end = stamp();
  });
  window.__observer.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


USABLE = """(newest) => document.querySelector('[data-testid="interrupt-card"]') &&
  Array.from(document.querySelectorAll('[data-testid="message"]')).some(m => m.textContent.includes(newest))"""


@dataclass
class Turn:
    number: int
    answer_bytes: int
    ws_bytes: int
    first_ms: float
    main_thread_ms: float
    heap_mb: float


@dataclass
class Result:
    app: str
    turns: list[Turn] = field(default_factory=list)
    open_ms: float = 0.0
    switch_ms: float = 0.0
    dom_nodes: int = 0
    drawn: int = 0
    heap_mb: dict[int, float] = field(default_factory=dict)  # turn -> JS heap after that many short turns


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """The baseline commit in a git worktree of its own (removed afterwards)."""
    where = Path(tempfile.mkdtemp(prefix="ic-baseline-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(where), rev], cwd=ROOT, check=True,
                   capture_output=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, capture_output=True)
        shutil.rmtree(where, ignore_errors=True)


@contextlib.contextmanager
def serve(name: str, cwd: Path, agent_url: str, logs: Path) -> Iterator[str]:
    """``reflex run --env prod`` of the tree at ``cwd``, on a fresh SQLite database; yields the page's URL."""
    database = Path(tempfile.mkdtemp(prefix=f"ic-{name}-")) / "threads.db"
    env = {"INTERRUPT_CHAT_AGENT_URL": agent_url, "INTERRUPT_CHAT_DB_URL": f"sqlite:///{database}"}
    try:
        with reflex_prod(name, cwd, env, logs, wait=900) as (url, _):
            yield url
    finally:
        shutil.rmtree(database.parent, ignore_errors=True)


def _heap_mb(cdp: Any) -> float:
    cdp.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return float(metrics["JSHeapUsedSize"]) / 1e6


def _send(page: Any, text: str) -> None:
    from playwright.sync_api import expect

    box = page.get_by_test_id("chat-input")
    expect(box).to_be_enabled(timeout=60_000)
    box.fill(text)
    box.press("Enter")


def _idle(page: Any, status: str = "idle") -> None:
    from playwright.sync_api import expect

    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", status, timeout=120_000)


def _chat_page(browser: Any) -> tuple[Any, Any]:
    """A page of its own and its CDP session (performance metrics on)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    return page, cdp


def _open(page: Any, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(url + "/")
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
    page.wait_for_timeout(1500)  # hydrated and idle


def _answered(page: Any, text: str) -> None:
    """Send ``text`` and wait until its answer's end mark is drawn and the run is idle (marks in ``window.__marks``)."""
    page.evaluate(OBSERVER)
    _send(page, text)
    page.wait_for_function("() => window.__marks.end", timeout=600_000, polling=100)
    _idle(page)


def turns(browser: Any, url: str, agent_url: str, result: Result, count: int, report: set[int]) -> None:
    """``count`` unpaced answers in a row on one thread; the reported ones measured."""
    page, cdp = _chat_page(browser)
    cdp.send("Network.enable")
    frames: list[int] = []
    cdp.on("Network.webSocketFrameReceived",
           lambda event: frames.append(len(event["response"]["payloadData"].encode())))
    _open(page, url)
    for number in range(1, count + 1):
        measured = number in report
        busy = _task_duration(cdp) if measured else 0.0
        frames.clear()
        _answered(page, "rate:0")
        page.wait_for_timeout(500 if measured else 100)  # the run's end (status, settling) is part of the turn
        if measured:
            busy = _task_duration(cdp) - busy
            marks = page.evaluate("() => window.__marks")
            sent = json.loads(_get(agent_url + "sent"))
            result.turns.append(Turn(number, sent["bytes"], sum(frames), marks["begin"] - sent["first_sent"] * 1000,
                                     busy * 1000, _heap_mb(cdp)))
            print(f"  {result.app} turn {number}: {result.turns[-1]}", flush=True)
    page.close()


def heap_turns(browser: Any, url: str, result: Result, marks: set[int], deltas: int) -> None:
    """``max(marks)`` short answers in a row on one thread: the JS heap after each turn in ``marks``."""
    page, cdp = _chat_page(browser)
    _open(page, url)
    for number in range(1, max(marks) + 1):
        _answered(page, f"rate:0 deltas:{deltas} turn {number}")
        if number in marks:
            page.wait_for_timeout(500)
            result.heap_mb[number] = _heap_mb(cdp)
            print(f"  {result.app} heap after {number} short turns: {result.heap_mb[number]:.1f} MB", flush=True)
    page.close()


def opening(browser: Any, url: str, result: Result, backlog: int) -> None:
    """A thread of ``backlog`` turns and a pending approval, reloaded: how long until it is usable."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url + "/")
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
    _send(page, f"backlog:{backlog}")
    expect(page.get_by_test_id("message").filter(has_text="That is the backlog.")).to_be_visible(timeout=300_000)
    _idle(page)
    _send(page, "ask")
    _idle(page, "interrupted")
    page.wait_for_timeout(1000)
    page.reload()
    newest = f"Step {backlog - 1}"
    page.wait_for_function(USABLE, arg=newest, timeout=120_000, polling="raf")
    result.open_ms = page.evaluate("() => performance.now()")  # from the navigation's start
    page.wait_for_timeout(1000)
    result.dom_nodes = page.evaluate("() => document.getElementsByTagName('*').length")
    result.drawn = page.get_by_test_id("message").count()
    page.get_by_test_id("thread-new").click()  # then back to it from the thread list
    expect(page.get_by_test_id("interrupt-card")).to_have_count(0, timeout=60_000)
    began = page.evaluate("() => performance.now()")
    page.locator('[data-testid="thread-item"][data-pending="true"]').first.click()
    page.wait_for_function(USABLE, arg=newest, timeout=120_000, polling="raf")
    result.switch_ms = page.evaluate("() => performance.now()") - began
    print(f"  {result.app} open: {result.open_ms:.0f} ms, {result.dom_nodes} DOM nodes, {result.drawn} messages drawn;"
          f" switched to in {result.switch_ms:.0f} ms", flush=True)
    page.close()


def report_table(results: list[Result]) -> None:
    print(f"\n{'app':>9} {'turn':>5} {'answer B':>9} {'ws bytes':>9} {'÷ answer':>9} {'first ms':>9} "
          f"{'main ms':>8} {'heap MB':>8}")
    for result in results:
        for t in result.turns:
            print(f"{result.app:>9} {t.number:>5} {t.answer_bytes:>9,} {t.ws_bytes:>9,}"
                  f" {t.ws_bytes / t.answer_bytes:>8.1f}x {t.first_ms:>9.0f} {t.main_thread_ms:>8.0f}"
                  f" {t.heap_mb:>8.1f}")
    print(f"\n{'app':>9} {'open ms':>8} {'switch ms':>10} {'DOM nodes':>10} {'messages drawn':>15}")
    for result in results:
        print(f"{result.app:>9} {result.open_ms:>8.0f} {result.switch_ms:>10.0f} {result.dom_nodes:>10,}"
              f" {result.drawn:>15}")
    if results[0].heap_mb:
        marks = sorted(results[0].heap_mb)
        print(f"\n{'app':>9} " + " ".join(f"{'heap MB @' + str(n):>13}" for n in marks))
        for result in results:
            print(f"{result.app:>9} " + " ".join(f"{result.heap_mb.get(n, 0):>13.1f}" for n in marks))
    ours = next(r for r in results if r.app == "this tree")
    base = next((r for r in results if r.app == "baseline"), None)
    first, last = ours.turns[0], ours.turns[-1]
    middle = ours.turns[-2] if len(ours.turns) > 1 else first
    worst = max(t.ws_bytes / t.answer_bytes for t in ours.turns)
    print(f"\nthis tree: bytes per turn at most {worst:.1f}x the answer (target 3x); turn {last.number} is "
          f"{last.ws_bytes / first.ws_bytes:.2f}x turn {first.number} (target 1.5x); heap turn {last.number} / "
          f"turn {middle.number}: {last.heap_mb / middle.heap_mb:.2f}x (target 2x); open {ours.open_ms:.0f} ms,"
          f" a switch {ours.switch_ms:.0f} ms (target 1,000)")
    if ours.heap_mb:
        low, high = min(ours.heap_mb), max(ours.heap_mb)
        print(f"this tree: heap after {high} short turns / after {low}: {ours.heap_mb[high] / ours.heap_mb[low]:.2f}x"
              f" (target 2x)" + (f"; the baseline's {base.heap_mb[high] / base.heap_mb[low]:.2f}x, and ours is "
                                 f"{ours.heap_mb[high] / base.heap_mb[high]:.2f}x the baseline's at turn {high}"
                                 if base is not None and base.heap_mb else ""))
    if base is not None:
        for t, b in zip(ours.turns, base.turns, strict=False):
            print(f"  turn {t.number}: bytes {t.ws_bytes / b.ws_bytes:.3f}x the baseline's, first token "
                  f"{t.first_ms / b.first_ms:.2f}x, main thread {t.main_thread_ms / b.main_thread_ms:.2f}x, heap "
                  f"{t.heap_mb / b.heap_mb:.2f}x")
        print(f"  open: {ours.open_ms / base.open_ms:.2f}x the baseline's time (a switch: "
              f"{ours.switch_ms / base.switch_ms:.2f}x), {ours.dom_nodes / base.dom_nodes:.2f}x its DOM nodes,"
              f" {ours.drawn} messages drawn against {base.drawn}")


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--report", default="1,40,200", help="the turns measured, comma-separated")
    parser.add_argument("--backlog", type=int, default=500, help="turns of the thread that is opened")
    parser.add_argument("--heap", default="50,500", help="after how many short turns the heap is read ('': none)")
    parser.add_argument("--heap-deltas", type=int, default=40, help="deltas per short turn (4 characters each)")
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with ('' : none)")
    args = parser.parse_args(argv)
    report = {int(n) for n in args.report.split(",")}
    heap_marks = {int(n) for n in args.heap.split(",") if n}
    logs = ROOT / "test-artifacts" / "long_thread"
    logs.mkdir(parents=True, exist_ok=True)
    chromium = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
    results: list[Result] = []
    with contextlib.ExitStack() as stack:
        agent_url = stack.enter_context(agent(args.deltas, logs))
        trees = [("this tree", ROOT)]
        if args.baseline:
            trees.append(("baseline", stack.enter_context(checkout(args.baseline))))
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for name, cwd in trees:
            result = Result(name)
            with serve(name.replace(" ", "-"), cwd, agent_url, logs) as url:
                turns(browser, url, agent_url, result, args.turns, report)
                opening(browser, url, result, args.backlog)
                if heap_marks:
                    heap_turns(browser, url, result, heap_marks, args.heap_deltas)
            results.append(result)
        browser.close()
    report_table(results)


if __name__ == "__main__":
    main()
