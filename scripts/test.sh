#!/usr/bin/env bash
# Every test: set-up (idempotent), the core's no-Reflex contract, lint and types, unit tests, browser tests
# (the scale-out ones in tests/scale run the app with `reflex run --env prod`, two workers and Redis).
# Unit and browser tests run as separate pytest processes (AppHarness reloads the app module).
set -euo pipefail
cd "$(dirname "$0")/.."
# The producers' venvs (cached: usually a no-op) build beside set-up, lint, types and the unit tests; a
# test that needs one before it is ready waits on the script's per-venv lock (tests/producers.py).
mkdir -p test-artifacts
scripts/producer_venvs.sh > test-artifacts/producer-venvs.log 2>&1 &
venvs=$!
trap 'kill $venvs 2>/dev/null || true' EXIT   # a failed step does not leave the build running (it resumes next time)
scripts/setup.sh
. scripts/env.sh
py=.venv/bin/python
$py -c "import sys, interrupt_chat.agui; assert 'reflex' not in sys.modules, 'interrupt_chat.agui imports reflex'"
echo "contract: interrupt_chat.agui imports without reflex"
$py -m ruff check --quiet .    # configured in pyproject.toml ([tool.ruff])
echo "lint: ruff OK"
$py -m mypy --no-error-summary # configured in pyproject.toml ([tool.mypy]): the whole package
echo "types: mypy OK"
# The docs site (mkdocs.yml): a broken link or anchor, a missing included file or a docstring the API reference
# cannot render fails it. Not --quiet: that hides the warnings --strict counts. The log is shown on failure.
NO_MKDOCS_2_WARNING=1 $py -m mkdocs build --strict --site-dir test-artifacts/site > test-artifacts/mkdocs.log 2>&1 ||
  { cat test-artifacts/mkdocs.log; echo "docs: mkdocs build --strict failed" >&2; exit 1; }
echo "docs: mkdocs OK"
.venv/bin/lint-imports --no-cache > test-artifacts/import-linter.log || { cat test-artifacts/import-linter.log; exit 1; }  # [tool.importlinter]
echo "layers: import-linter OK"
# examples/embedded_app (the wheel in a fresh venv, its own folder, ports and browser) runs beside the unit tests,
# which leave part of a core idle; it ends before the browser suites start. Its output is shown then.
$py -m pytest -q -p no:cacheprovider tests/example_app "$@" > test-artifacts/example-app.log 2>&1 &
example=$!
trap 'kill $venvs 2>/dev/null || true; kill -INT $example 2>/dev/null || true' EXIT  # INT: it stops its app
# Three processes on the two cores, each taking whole test files (pytest-xdist): the unit tests wait on loopback
# servers and threads more than they compute (two processes kept one core busy), and the file is their unit of
# shared state
$py -m pytest -q -p no:cacheprovider -n 3 --dist loadfile tests/unit "$@"
wait $venvs || { cat test-artifacts/producer-venvs.log; echo "building the producer venvs failed" >&2; exit 1; }
wait $example || { cat test-artifacts/example-app.log; echo "examples/embedded_app's test failed" >&2; exit 1; }
tail -n 1 test-artifacts/example-app.log    # examples/embedded_app: the wheel in a fresh venv
$py -m pytest -q -p no:cacheprovider tests/scale "$@"                  # scale-out: 2 workers on Redis (reflex run)
$py -m pytest -q -p no:cacheprovider tests/e2e "$@"                    # dev server (vite), the producers too
$py -m pytest -q -p no:cacheprovider tests/dojo "$@"                   # the dojo pages against the AG-UI server-starter
DOJO_SERVER=langgraph $py -m pytest -q -p no:cacheprovider tests/dojo "$@"  # … and the LangGraph dojo agents on aimock
RX_HARNESS=prod $py -m pytest -q -p no:cacheprovider tests/e2e --ignore=tests/e2e/producers "$@"  # production build
