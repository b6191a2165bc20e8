"""The producer-by-feature matrix in ``examples/README.md``, generated from the producer browser tests.

Each test in this folder carries ``@pytest.mark.hitl("<feature>")`` and its module names its
``PRODUCER`` (and ``UNSUPPORTED``: feature → why the producer has no such flow). After a session that
ran every producer test, ``conftest.py`` writes ``test-artifacts/producer-matrix.json`` and rewrites the
table between the markers below; ``python -m tests.e2e.producers.matrix`` redraws it from that file.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "examples" / "README.md"
RESULTS = ROOT / "test-artifacts" / "producer-matrix.json"
START, END = "<!-- producer-matrix:start -->", "<!-- producer-matrix:end -->"

PRODUCERS = {  # the matrix's rows: folder name → (display name, the package whose pin the row shows)
    "langgraph": ("LangGraph", "ag-ui-langgraph"),
    "pydantic_ai": ("pydantic-ai", "pydantic-ai-slim"),
    "strands": ("Strands Agents", "ag-ui-strands"),
    "adk": ("Google ADK", "ag-ui-adk"),
    "microsoft": ("Microsoft Agent Framework", "agent-framework-ag-ui"),
    "agno": ("Agno", "agno"),
}
FEATURES = {  # the columns: marker name → heading
    "approve": "approve",
    "reject": "reject",
    "cancel": "cancel",
    "edit": "approve with edits",
    "form": "form (`input_required`)",
    "several": "several at once",
    "legacy": "legacy `on_interrupt`",
    "frontend_tool": "frontend tool",
    "frontend_tool_declined": "frontend tool declined",
    "allow_thread": "allow in this thread",
    "allow_always": "always allow",
    "bulk": "bulk approve",
}
CELLS = {"passed": "✅", "failed": "❌", "skipped": "skipped"}


def pin(producer: str, package: str) -> str:
    """``package==version`` as the producer's requirements file pins it."""
    text = (ROOT / "examples" / producer / "requirements.txt").read_text()
    spelling = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]", package))  # PEP 503: - _ . alike
    found = re.search(rf"^{spelling}(\[[^\]]*\])?==(\S+)", text, re.MULTILINE | re.IGNORECASE)
    return f"{package} {found.group(2)}" if found else package


def render(results: dict) -> str:
    """The Markdown table and its notes.

    Args:
        results: per producer, ``{"features": {feature: outcome}, "unsupported": {feature: why}}``.
    """
    lines = ["| producer | " + " | ".join(FEATURES.values()) + " |",
             "|---|" + "---|" * len(FEATURES)]
    notes: list[str] = []
    for producer, (title, package) in PRODUCERS.items():
        row = results.get(producer, {})
        outcomes, unsupported = row.get("features", {}), row.get("unsupported", {})
        cells = []
        for feature in FEATURES:
            if feature in outcomes:
                cells.append(CELLS.get(outcomes[feature], outcomes[feature]))
            elif feature in unsupported:
                notes.append(f"{len(notes) + 1}. {title}, {FEATURES[feature]}: {unsupported[feature]}")
                cells.append(f"— ({len(notes)})")
            else:
                cells.append("not run")
        lines.append(f"| {title} (`{pin(producer, package)}`) | " + " | ".join(cells) + " |")
    legend = ("✅ the browser flow passed in the run that wrote this table; ❌ it failed; — the producer has no such "
              "flow (numbered notes below).")
    return "\n".join([*lines, "", legend, "", *notes])


def update_readme(results: dict) -> None:
    """Replace the table between the markers in ``examples/README.md``."""
    text = README.read_text()
    start, end = text.index(START) + len(START), text.index(END)
    README.write_text(text[:start] + "\n" + render(results) + "\n" + text[end:])


if __name__ == "__main__":
    update_readme(json.loads(Path(sys.argv[1] if len(sys.argv) > 1 else RESULTS).read_text()))
