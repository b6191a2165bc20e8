#!/usr/bin/env bash
# Set up (idempotent) and run the demo site on http://localhost:3000 (backend :8000).
# INTERRUPT_CHAT_AGENT_URL=<AG-UI endpoint> points it at another agent; unset, it uses the
# scripted demo agent served by the same backend under /demo-agent/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh
exec .venv/bin/reflex run "$@"
