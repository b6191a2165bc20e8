"""Shared fixtures for the protocol-core tests.

``loopback``: one uvicorn server on 127.0.0.1 (ephemeral port) for the whole session, started in
a thread. Tests mount their own ASGI app on a fresh path with ``loopback.mount(app)`` and get the
full URL back; the app then runs in the server's thread and event loop (use ``threading.Event``
to observe it from the test).

``postgres_url``: a real PostgreSQL server for the whole session (Debian's ``postgresql`` package,
``/usr/lib/postgresql/*/bin``; ``scripts/setup.sh`` installs it), initialised in a temporary folder
and listening on 127.0.0.1 at a free port; its URL (``postgresql+psycopg://app@127.0.0.1:PORT/postgres``,
trust authentication) is the value. Started on first use only; stopped at the end. Missing binaries
fail the tests that use it (they are not skipped).
"""

from __future__ import annotations

import glob
import itertools
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.unit.agents import free_port, serve_in_thread


class Loopback:
    def __init__(self) -> None:
        self.base_url = ""
        self._apps: dict[str, Any] = {}
        self._ids = itertools.count(1)

    def mount(self, app: Any) -> str:
        path = f"/agent-{next(self._ids)}"
        self._apps[path] = app
        return self.base_url + path

    async def __call__(self, scope, receive, send) -> None:
        app = self._apps.get(scope.get("path", ""))
        if app is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"no such test agent"})
            return
        await app(scope, receive, send)


@pytest.fixture(scope="session")
def loopback():
    router = Loopback()
    with serve_in_thread(router) as base_url:
        router.base_url = base_url
        yield router


def _postgres_bindir() -> Path | None:
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found = [d for d in found if (d / "pg_ctl").exists()]
    return max(found, key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0) if found else None


def _as_postgres(command: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a shell command as the ``postgres`` user when we are root (initdb refuses root), else as ourselves."""
    argv = ["su", "postgres", "-s", "/bin/bash", "-c", command] if os.geteuid() == 0 else ["bash", "-c", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="session")
def postgres_url():
    bindir = _postgres_bindir()
    if bindir is None:
        pytest.fail("PostgreSQL server binaries are missing (no /usr/lib/postgresql/*/bin/initdb): run "
                    "scripts/setup.sh as root, or install Debian's 'postgresql' package", pytrace=False)
    folder = Path(tempfile.mkdtemp(prefix="ic-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", free_port()
    q = shlex.quote
    server_options = (f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                      f"-c synchronous_commit=off -c full_page_writes=off")
    start = (f"{q(str(bindir / 'initdb'))} -D {q(str(data))} -A trust -U app -N >{q(str(folder / 'initdb.log'))} 2>&1"
             f" && {q(str(bindir / 'pg_ctl'))} -D {q(str(data))} -o {q(server_options)} -l {q(str(folder / 'log'))}"
             f" -w -t 30 start")
    stop = f"{q(str(bindir / 'pg_ctl'))} -D {q(str(data))} -m fast -w stop"
    try:
        started = _as_postgres(start, timeout=90)
        if started.returncode != 0:
            logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in (folder / "initdb.log", folder / "log")
                             if p.exists())
            pytest.fail(f"PostgreSQL did not start (exit {started.returncode}):\n{started.stdout}{started.stderr}\n"
                        f"{logs}", pytrace=False)
        yield f"postgresql+psycopg://app@127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            _as_postgres(stop, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _thread_database_off_unless_asked(monkeypatch):
    """Chats keep their threads in memory in the unit tests (no file in the checkout); a test that
    wants the database sets ``INTERRUPT_CHAT_DB_URL`` itself."""
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", "off")
