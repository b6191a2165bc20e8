"""Browser tests of the dojo pages against a dojo feature server, unmodified. The demo site is started with
``INTERRUPT_CHAT_DOJO_URL`` pointing at it, as a user would point it at their own server; the other pages
still talk to the demo agent. Each test's outcome is this server's column of the dojo matrix (matrix.py).

``DOJO_SERVER`` picks the server (one per pytest process: the pages read the URL when the app is imported),
and only its module runs (``test_<server>.py``):

- ``server_starter`` (default): the AG-UI repository's server-starter-all-features example
  (``examples/server_starter``), served in this process on 127.0.0.1.
- ``langgraph``: the AG-UI repository's LangGraph dojo agents (``examples/langgraph_dojo``) from their own
  venv, their model replaced by the dojo's own LLM mock, ``@copilotkit/aimock`` with the dojo's recorded
  fixtures, run by node.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import *  # noqa: F403 - the browser fixtures (harness, chat, demo agent)
from tests.e2e.conftest import Chat
from tests.producers import LOGS, producer_python, producer_server
from tests.unit.agents import free_port, serve_server_starter, stop_process

from .matrix import SERVERS, Recorder

ROOT = Path(__file__).resolve().parents[2]
AIMOCK = ROOT / "examples" / "langgraph_dojo" / "aimock"
SERVER = os.environ.get("DOJO_SERVER", "server_starter")

__all__ = ["SERVER", "Chat"]


def pytest_configure(config: pytest.Config) -> None:  # replaces the demo column's recorder of tests/e2e
    if SERVER not in SERVERS:
        raise pytest.UsageError(f"DOJO_SERVER={SERVER!r}: one of {', '.join(s for s in SERVERS if s != 'demo')}")
    config.pluginmanager.register(Recorder(SERVER), "dojo-matrix")


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Only the chosen server's module."""
    if collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        return collection_path.stem != f"test_{SERVER}"
    return None


@contextmanager
def _aimock() -> Iterator[str]:
    """The dojo's aimock set-up (``aimock/aimock-standalone.ts``) on a free loopback port; yields its ``/v1`` URL."""
    producer_python("langgraph_dojo")  # builds (or waits for) the venv and the mock's npm packages
    port = free_port()
    LOGS.mkdir(exist_ok=True)
    log = (LOGS / "aimock.log").open("wb")
    env = {**os.environ, "AIMOCK_PORT": str(port)}
    process = subprocess.Popen(["node_modules/.bin/tsx", "aimock-standalone.ts"], cwd=AIMOCK, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"aimock exited ({process.returncode}); see {log.name}")
            try:
                httpx.get(url + "/v1/models", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"aimock did not answer in 60 s; see {log.name}") from None
                time.sleep(0.1)
        yield url + "/v1"
    finally:
        stop_process(process)
        log.close()


@pytest.fixture(scope="session")
def dojo_base() -> Iterator[str]:
    """The chosen dojo server's base URL (each feature at ``<base>/<feature>``)."""
    if SERVER == "langgraph":
        with _aimock() as llm, producer_server("langgraph_dojo", "--llm", llm) as url:
            yield url + "/agent"
        return
    with serve_server_starter() as url:
        yield url
