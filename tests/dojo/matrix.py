"""The dojo matrix in ``examples/README.md``: each §5.4 page against each dojo server, from the browser tests.

A test that runs a page's flow carries ``@pytest.mark.dojo("<page>")``. The browser suite that drives the
demo agent (``tests/e2e``) records the ``demo`` column; ``tests/dojo`` points the pages at a dojo server
(``INTERRUPT_CHAT_DOJO_URL``) and records that server's column. Each session merges its column into
``test-artifacts/dojo-matrix.json`` and, when it ran unfiltered, redraws the table between the markers;
``python -m tests.dojo.matrix`` redraws it from that file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stages import elsewhere

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "examples" / "README.md"
RESULTS = ROOT / "test-artifacts" / "dojo-matrix.json"
START, END = "<!-- dojo-matrix:start -->", "<!-- dojo-matrix:end -->"

PAGES = {  # the rows: the demo's page → the dojo feature (the path on a dojo server)
    "/": "agentic_chat",
    "/steps": "human_in_the_loop",
    "/progress": "agentic_generative_ui",
    "/tool-ui": "backend_tool_rendering",
    "/haiku": "tool_based_generative_ui",
    "/shared-state": "shared_state",
    "/document": "predictive_state_updates",
    "/reasoning": "agentic_chat_reasoning",
    "/subgraphs": "subgraphs",
}
SERVERS = {  # the columns: name → heading, and the pages not run against the server (why)
    "demo": ("demo agent", {}),
    "server_starter": ("AG-UI server-starter-all-features (Python, ag-ui `821b8c2`)", {
        "/reasoning": "the example has no `agentic_chat_reasoning` path",
        "/subgraphs": "the example has no `subgraphs` path",
    }),
    "langgraph": ("AG-UI LangGraph dojo agents (Python, ag-ui `821b8c2`; LLM: aimock 1.37.4, the dojo's fixtures)", {
        "/reasoning": ("not run: the agent reasons through OpenAI's Responses API (`o4-mini`), which the dojo mocks "
                       "with its own patch to aimock 1.37.4, not vendored here"),
    }),
}
CELLS = {"passed": "✅", "failed": "❌", "skipped": "skipped"}


class Recorder:
    """A pytest plugin: the outcome of each ``dojo``-marked test, as ``server``'s column."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.outcomes: dict[str, list[str]] = {}
        self.selected: set[str] = set()

    @staticmethod
    def pages(item: pytest.Item) -> list[str]:
        return [marker.args[0] for marker in item.iter_markers("dojo")]

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            if not elsewhere(item):
                self.selected.update(self.pages(item))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
        outcome = yield
        report = outcome.get_result()
        if (report.when != "call" and report.passed) or elsewhere(item):  # the other stage records that one
            return
        for page in self.pages(item):
            self.outcomes.setdefault(page, []).append(
                "passed" if report.passed else "skipped" if report.skipped else "failed")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.outcomes:
            return
        column = {page: "failed" if "failed" in seen else "skipped" if "skipped" in seen else "passed"
                  for page, seen in self.outcomes.items()}
        results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        results[self.server] = {**results.get(self.server, {}), **column}  # a page can be run in the other stage
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        unfiltered = not session.config.option.keyword and not session.config.option.markexpr
        if unfiltered and self.selected <= set(self.outcomes):
            update_readme(results)


def render(results: dict[str, dict[str, str]]) -> str:
    """The Markdown table (a row per page, a column per server) and its notes."""
    lines = ["| page | dojo feature | " + " | ".join(title for title, _ in SERVERS.values()) + " |",
             "|---|---|" + "---|" * len(SERVERS)]
    notes: list[str] = []
    for page, feature in PAGES.items():
        cells = []
        for server, (title, missing) in SERVERS.items():
            outcome = results.get(server, {}).get(page)
            if outcome:
                cells.append(CELLS.get(outcome, outcome))
            elif page in missing:
                notes.append(f"{len(notes) + 1}. {title}, `{page}`: {missing[page]}.")
                cells.append(f"— ({len(notes)})")
            else:
                cells.append("not run")
        lines.append(f"| `{page}` | `{feature}` | " + " | ".join(cells) + " |")
    legend = ("✅ the page's browser flow passed against that server in the run that wrote this table; ❌ it failed; "
              "— not run against that server (why in the numbered notes below).")
    return "\n".join([*lines, "", legend, "", *notes])


def update_readme(results: dict[str, dict[str, str]]) -> None:
    """Replace the table between the markers in ``examples/README.md``."""
    text = README.read_text()
    start, end = text.index(START) + len(START), text.index(END)
    README.write_text(text[:start] + "\n" + render(results) + "\n" + text[end:])


if __name__ == "__main__":
    update_readme(json.loads(Path(sys.argv[1] if len(sys.argv) > 1 else RESULTS).read_text()))
