"""Producer browser tests: the unmodified demo site against real AG-UI producers, each served from
its own virtualenv (tests/producers.py), all in one browser session; their outcomes make the matrix
in ``examples/README.md`` (matrix.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.producers import producer_server

from . import matrix

_OUTCOMES: dict[tuple[str, str], list[str]] = {}  # (producer, feature) → the outcome of each test
_SELECTED: list[pytest.Item] = []
_UNSUPPORTED: dict[str, dict[str, str]] = {}
_HERE = __name__.rpartition(".")[0]


def _features(item: pytest.Item) -> list[tuple[str, str]]:
    """``(producer, feature)`` for each ``hitl`` mark of a producer test (a test may show several)."""
    module = getattr(item, "module", None)
    if module is None or not module.__name__.startswith(_HERE):
        return []
    return [(module.PRODUCER, marker.args[0]) for marker in item.iter_markers("hitl")]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _features(item):
            _SELECTED.append(item)
            _UNSUPPORTED.setdefault(item.module.PRODUCER, getattr(item.module, "UNSUPPORTED", {}))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" and report.passed:
        return
    for key in _features(item):
        _OUTCOMES.setdefault(key, []).append("passed" if report.passed else "skipped" if report.skipped else "failed")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the results; redraw the README's matrix only after a run of every producer's tests."""
    if not _SELECTED:
        return
    results: dict[str, dict] = {name: {"features": {}, "unsupported": why} for name, why in _UNSUPPORTED.items()}
    for (producer, feature), outcomes in _OUTCOMES.items():
        final = "failed" if "failed" in outcomes else "skipped" if "skipped" in outcomes else "passed"
        results[producer]["features"][feature] = final
    matrix.RESULTS.parent.mkdir(exist_ok=True)
    matrix.RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    unfiltered = not session.config.option.keyword and not session.config.option.markexpr
    every_producer = set(results) >= set(matrix.PRODUCERS)
    if unfiltered and every_producer and all(k in _OUTCOMES for i in _SELECTED for k in _features(i)):
        matrix.update_readme(results)


@pytest.fixture(scope="module")
def producer_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The module's producer (``PRODUCER``), started from its venv for the module's tests."""
    with producer_server(request.module.PRODUCER) as url:
        yield url


@pytest.fixture
def producer(agent_url, producer_url: str) -> str:
    """New chat sessions talk to the module's producer (at its root); the producer's base URL."""
    agent_url(producer_url + "/")
    return producer_url
