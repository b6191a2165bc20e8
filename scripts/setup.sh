#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: Debian Chromium, PostgreSQL and Redis, a venv with the pinned deps, bun.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is missing: install Debian's 'chromium' package (or set CHROMIUM_PATH)" >&2
  fi
fi
# The thread database's tests start a real PostgreSQL server (tests/unit/conftest.py: postgres_url).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "PostgreSQL is missing: install Debian's 'postgresql' package (the thread database tests need it)" >&2
  fi
fi
# The scale-out browser tests (tests/scale/) start a real Redis server: Reflex's state manager with several workers.
if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    echo "redis-server is missing: install Debian's 'redis-server' package (the scale-out tests need it)" >&2
  fi
fi
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
# The app, its tests, and the LLM-free producers the interop tests run against.
stamp=.venv/.requirements-installed
wanted=(requirements.txt requirements-examples.txt examples/langgraph/requirements.txt examples/pydantic_ai/requirements.txt)
if [ ! -f "$stamp" ] || ! cat "${wanted[@]}" | cmp -s - "$stamp"; then
  "$(scripts/uv.sh)" pip install -q --compile-bytecode --python .venv/bin/python -r requirements.txt -r requirements-examples.txt
  cat "${wanted[@]}" > "$stamp"
fi
. scripts/env.sh
# The accessibility browser tests (tests/e2e/test_axe.py) inject axe-core, pinned, from the npm registry.
AXE_VERSION=4.14.1
if ! grep -qs "\"version\": \"$AXE_VERSION\"" .tools/axe/node_modules/axe-core/package.json; then
  npm install --prefix .tools/axe --no-fund --no-audit --no-save "axe-core@$AXE_VERSION" >/dev/null
fi
# The producers' venvs (examples/*/requirements.txt) are not needed by the demo: scripts/test.sh builds them
# (scripts/producer_venvs.sh, cached outside the clone), and tests/producers.py builds one on demand.
