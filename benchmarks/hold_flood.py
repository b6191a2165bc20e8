"""A page flooding decision events under made-up tabs: how long the other chats' streams stop (decision 0037).

A tab's token is the browser's to choose. Each tab opens at most one hold a second, and a hold
stops every other chat's stream on the worker for up to ``MAX_HOLD``. This runs the gate alone
(``interrupt_chat/workers/lane.py``, no app): one stream's steps (``lane.blocked()``, then a 1 ms
step) beside a flooder that calls ``lane.arrive`` every 50 ms, as ``ic.tune_events`` does for every
decision event it reads, cycling through N made-up tokens. It prints the share of the time the
stream was stopped, for the baseline's ``lane.py`` (read with ``git show``) and this tree's, and
their ratio.

    .venv/bin/python -m benchmarks.hold_flood                 # ~40 s, against b8514e8
    .venv/bin/python -m benchmarks.hold_flood --baseline HEAD --tokens 1 4 20 100
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
LANE = "interrupt_chat/workers/lane.py"
BASELINE = "b8514e8"  # before made-up tabs shared one hold per UNPROVEN_GAP


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _stopped_share(lane: ModuleType, tokens: int, seconds: float) -> float:
    """The share of ``seconds`` that a stream spent waiting at ``lane.blocked()`` beside the flood."""
    stopped = 0.0
    end = time.monotonic() + seconds

    async def stream() -> None:
        nonlocal stopped
        while time.monotonic() < end:
            wait = lane.blocked()
            if wait is None:
                await asyncio.sleep(0.001)
                continue
            began = time.monotonic()
            await wait
            stopped += time.monotonic() - began

    async def flood() -> None:
        sent = 0
        while time.monotonic() < end:
            lane.arrive(f"made-up-{sent % tokens}")
            sent += 1
            await asyncio.sleep(0.05)

    # The stream in a context of its own: the flooder's holds are not its (a person's code never waits).
    await asyncio.gather(asyncio.get_running_loop().create_task(stream(), context=contextvars.Context()), flood())
    return stopped / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit whose lane.py is the baseline")
    parser.add_argument("--tokens", type=int, nargs="+", default=[1, 4, 20], help="made-up tabs in the flood")
    parser.add_argument("--seconds", type=float, default=6.0, help="each flood's length")
    args = parser.parse_args()
    old = subprocess.run(["git", "show", f"{args.baseline}:{LANE}"], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "lane_baseline.py").write_text(old)
        trees = {args.baseline: Path(folder) / "lane_baseline.py", "this tree": ROOT / LANE}
        print(f"| made-up tabs | {args.baseline}: streams stopped | this tree | ratio |")
        print("|---|---|---|---|")
        for tokens in args.tokens:
            shares = [asyncio.run(_stopped_share(_load(path, f"lane_{n}"), tokens, args.seconds))
                      for n, path in enumerate(trees.values())]
            ratio = shares[1] / shares[0] if shares[0] else float("nan")
            print(f"| {tokens} | {shares[0]:.0%} | {shares[1]:.0%} | {ratio:.2f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
