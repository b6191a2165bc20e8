"""The README's embedding example is ``examples/embedded_app``'s code, and the embedding guide shows its files.

The README shows the app's main module shortened: its lines are the file's, in order, and a ``# …`` comment
line stands for what is left out. The guide (docs/guides/embedding.md) includes each file whole with
pymdownx.snippets, so it is the file by construction; tests/example_app runs the app in a browser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "embedded_app"
FILES = ("rxconfig.py", "requirements.txt", "embedded_app/embedded_app.py")
MAIN = "embedded_app/embedded_app.py"


def readme_block(name: str) -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(rf"<!-- embedded:{re.escape(name)} -->\n```\w+\n(.*?)```\n", readme, re.S)
    assert block, f"the README's embedding section lacks {name}"
    return block.group(1)


def pieces(block: str) -> list[list[str]]:
    """The runs of lines between ``# …`` lines, without the blank lines at their ends."""
    runs: list[list[str]] = [[]]
    for line in block.splitlines():
        if line.strip().startswith("# …"):
            runs.append([])
        else:
            runs[-1].append(line)
    trimmed = []
    for run in runs:
        while run and not run[0].strip():
            run.pop(0)
        while run and not run[-1].strip():
            run.pop()
        if run:
            trimmed.append(run)
    return trimmed


def excerpt_of(block: str, source: str) -> bool:
    """Whether every run of the block is a run of the source's lines, the runs in the source's order."""
    lines = source.splitlines()
    at = 0
    for run in pieces(block):
        found = next((i for i in range(at, len(lines) - len(run) + 1) if lines[i:i + len(run)] == run), None)
        if found is None:
            return False
        at = found + len(run)
    return True


def test_the_readme_shows_the_example_apps_main_module_line_for_line():
    block = readme_block(MAIN)
    assert excerpt_of(block, (EXAMPLE / MAIN).read_text())
    assert "ic.Chat(" in block and "support.view()" in block  # the example still shows a chat being declared
    compile(block, "README.md", "exec")


def test_an_excerpt_that_changed_a_line_or_the_order_is_refused():
    source = "a = 1\nb = 2\n\nc = 3\n"
    assert excerpt_of("a = 1\n# …\nc = 3\n", source)
    assert not excerpt_of("a = 1\n# …\nc = 4\n", source)  # a line that differs
    assert not excerpt_of("c = 3\n# …\na = 1\n", source)  # out of order
    assert not excerpt_of("a = 1\nc = 3\n", source)  # a gap not marked


@pytest.mark.parametrize("name", FILES)
def test_the_embedding_guide_includes_the_example_apps_file(name: str):
    guide = (ROOT / "docs" / "guides" / "embedding.md").read_text()
    assert f'--8<-- "examples/embedded_app/{name}"' in guide


def test_the_example_app_uses_the_public_api_only():
    source = (EXAMPLE / "embedded_app" / "embedded_app.py").read_text()
    imports = re.findall(r"^(?:from|import) (\S+)", source, re.M)
    assert "interrupt_chat" in imports
    assert all(name in {"os", "reflex", "interrupt_chat"} for name in imports), imports
    assert "interrupt_chat." not in source  # no private module
