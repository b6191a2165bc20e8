"""A real PostgreSQL server for tests, started in a temporary folder and stopped afterwards.

Debian's ``postgresql`` package (``/usr/lib/postgresql/*/bin``; ``scripts/setup.sh`` installs it). The
server refuses to run as root, so as root it runs as the ``postgres`` user. Trust authentication,
127.0.0.1 only, durability off (a test server). Missing binaries fail the test (never skip).
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.unit.agents import free_port


def _postgres_bindir() -> Path | None:
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found = [d for d in found if (d / "pg_ctl").exists()]
    return max(found, key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0) if found else None


def _as_postgres(command: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a shell command as the ``postgres`` user when we are root (initdb refuses root), else as ourselves."""
    argv = ["su", "postgres", "-s", "/bin/bash", "-c", command] if os.geteuid() == 0 else ["bash", "-c", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


@contextmanager
def running_postgres() -> Iterator[str]:
    """A PostgreSQL server in a temporary folder on a free loopback port; yields its URL, stops it after."""
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
