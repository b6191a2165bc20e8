"""The wheel a user installs is the library: no demo site, no demo agent, no demo-only CSS.

Builds the wheel from this checkout (hatchling from the test venv, ``--no-build-isolation``: no
network), installs it with ``--no-deps --no-index`` into a fresh venv in a temporary directory,
and reads the installed files and metadata of the ``interrupt_chat`` distribution there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]

_REPORT = """
import importlib.metadata as md, json
dist = md.distribution("interrupt_chat")
print(json.dumps({
    "files": sorted(str(f) for f in dist.files or ()),
    "license_expression": dist.metadata.get("License-Expression"),
    "license_files": dist.metadata.get_all("License-File") or [],
    "requires": dist.requires or [],
}))
"""


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("wheel")
    before = {p.name for p in REPO.iterdir()}
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp / "dist", REPO,
         cwd=tmp)
    # The build leaves nothing in the checkout (no build/, no *.egg-info).
    after = {p.name for p in REPO.iterdir()}
    assert not {n for n in after - before if n == "build" or n.endswith(".egg-info")}
    assert not list((REPO / "interrupt_chat").glob("*.egg-info"))
    wheels = list((tmp / "dist").glob("interrupt_chat-*.whl"))
    assert len(wheels) == 1, wheels
    _run(sys.executable, "-m", "venv", tmp / "venv", cwd=tmp)
    py = tmp / "venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    _run(py, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile", "-q", wheels[0], cwd=tmp)
    # -I: isolated (no cwd/PYTHONPATH on sys.path, no user site), so only the fresh venv is seen.
    report = json.loads(_run(py, "-I", "-c", _REPORT, cwd=tmp).stdout)
    print("wheel:", wheels[0].name)
    print("installed files:\n  " + "\n  ".join(report["files"]))
    return report


def test_wheel_leaves_out_the_demo(installed: dict) -> None:
    files = installed["files"]
    assert "interrupt_chat/interrupt_chat.py" not in files
    assert not [f for f in files if f.startswith("interrupt_chat/demo/agent/")]
    assert not [f for f in files if f.endswith("demo.css")]
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]  # pip runs with --no-compile
    assert not [f for f in files if f.startswith(("assets/", "tests/", "examples/", "benchmarks/", "rxconfig"))]


def test_wheel_ships_the_library(installed: dict) -> None:
    files = set(installed["files"])
    for path in ("interrupt_chat/__init__.py", "interrupt_chat/py.typed",
                 "interrupt_chat/components/interrupt_chat.css", "interrupt_chat/agui/__init__.py",
                 "interrupt_chat/assembly/state.py"):
        assert path in files, path


def test_wheel_metadata(installed: dict) -> None:
    assert installed["license_expression"] == "MIT"
    assert installed["license_files"] == ["LICENSE"]
    assert any(f.endswith(".dist-info/licenses/LICENSE") for f in installed["files"])
    runtime = {req.name.lower() for req in map(Requirement, installed["requires"]) if req.marker is None}
    assert "reflex" in runtime and "starlette" not in runtime
