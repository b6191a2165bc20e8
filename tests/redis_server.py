"""A real Redis server for tests, started in a temporary folder and stopped afterwards.

Debian's ``redis-server`` package (``scripts/setup.sh`` installs it; it is not started as a service).
127.0.0.1 only, a free port, no persistence (``--save ""``, no append-only file): a test server.
Missing binaries fail the test unless the caller checks :func:`redis_server_binary` first and skips.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.unit.agents import free_port, stop_process

MISSING = ("redis-server is missing: run scripts/setup.sh as root, or install Debian's 'redis-server' package")


def redis_server_binary() -> str | None:
    """The ``redis-server`` executable, or None when it is not installed."""
    return shutil.which("redis-server")


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as probe:
            probe.settimeout(0.2)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


@contextmanager
def running_redis() -> Iterator[str]:
    """A Redis server in a temporary folder on a free loopback port; yields its URL, stops it after."""
    binary = redis_server_binary()
    if binary is None:
        pytest.fail(MISSING, pytrace=False)
    folder = Path(tempfile.mkdtemp(prefix="ic-redis-"))
    port, log = free_port(), folder / "redis.log"
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(folder), "--logfile", str(log)]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        if not _wait_for_port(port, process, timeout=30):
            text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            pytest.fail(f"Redis did not start (exit {process.poll()}):\n{text}", pytrace=False)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_process(process)
        shutil.rmtree(folder, ignore_errors=True)
