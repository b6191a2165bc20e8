"""The README's embedding section is ``examples/embedded_app``'s code, file for file (issue 22)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "embedded_app"
FILES = ("rxconfig.py", "requirements.txt", "embedded_app/embedded_app.py")


@pytest.mark.parametrize("name", FILES)
def test_the_readme_shows_the_example_apps_file_as_it_is(name: str):
    readme = (ROOT / "README.md").read_text()
    block = re.search(rf"<!-- embedded:{re.escape(name)} -->\n```\w+\n(.*?)```\n", readme, re.S)
    assert block, f"the README's embedding section lacks {name}"
    assert block.group(1) == (EXAMPLE / name).read_text()


def test_the_example_app_uses_the_public_api_only():
    source = (EXAMPLE / "embedded_app" / "embedded_app.py").read_text()
    imports = re.findall(r"^(?:from|import) (\S+)", source, re.M)
    assert "interrupt_chat" in imports
    assert all(name in {"os", "reflex", "interrupt_chat"} for name in imports), imports
    assert "interrupt_chat." not in source  # no private module
