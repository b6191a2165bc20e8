"""Real AG-UI producers, each run from its own virtualenv (scripts/producer_venvs.sh builds them).

``examples/<name>/server.py`` is started as a subprocess with ``.producers/<name>/bin/python`` on a
free loopback port and waited for on ``GET /health``; its output goes to
``test-artifacts/producer-<name>.log`` so a failing flow can be read afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.unit.agents import free_port, stop_process

ROOT = Path(__file__).resolve().parents[1]
VENVS = ROOT / ".producers"
LOGS = ROOT / "test-artifacts"


def producer_python(name: str) -> Path:
    """The interpreter of ``name``'s venv for its current requirements: built on demand, a quick no-op
    when the cache has it, and a wait when scripts/test.sh is building it in the background."""
    subprocess.run([str(ROOT / "scripts" / "producer_venvs.sh"), name], check=True, stdout=subprocess.DEVNULL)
    return VENVS / name / "bin" / "python"


@contextmanager
def producer_server(name: str, *args: str, timeout: float = 120.0) -> Iterator[str]:
    """Run ``examples/<name>/server.py`` from its venv; yields its base URL (``http://127.0.0.1:<port>``)."""
    python, port = producer_python(name), free_port()
    LOGS.mkdir(exist_ok=True)
    log = (LOGS / f"producer-{name}.log").open("wb")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    process = subprocess.Popen([str(python), str(ROOT / "examples" / name / "server.py"), "--port", str(port), *args],
                               cwd=ROOT / "examples" / name, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the {name} producer exited ({process.returncode}); see {log.name}")
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {name} producer did not answer /health in {timeout:.0f} s; see {log.name}")
            time.sleep(0.1)
        yield url
    finally:
        stop_process(process)
        log.close()


if __name__ == "__main__":  # python -m tests.producers <name>: run one by hand
    with producer_server(sys.argv[1]) as base:
        print(base, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
