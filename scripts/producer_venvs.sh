#!/usr/bin/env bash
# One virtualenv per producer example (examples/<name>/requirements.txt), so producers whose dependencies
# conflict (ag-ui-protocol 0.1 against 1.0, pydantic majors, …) never meet. Each venv is built once and
# cached outside the clone, keyed by its requirements file's hash: a fresh clone reuses it, and a
# changed pin builds a new one. .producers/<name> links to the venv the tests use. A producer with an
# aimock/ folder (an LLM mock run by node) gets its npm packages (npm ci, from its package-lock.json) in the
# same cached folder, linked as examples/<name>/aimock/node_modules.
#   scripts/producer_venvs.sh            every producer
#   scripts/producer_venvs.sh strands    only these
# Set INTERRUPT_CHAT_CACHE to keep the venvs elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${INTERRUPT_CHAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/interrupt_chat}/producers"
mkdir -p "$cache" .producers
uv=$(scripts/uv.sh)   # installs each venv: all of them in about 50 s on a fresh machine, where pip took 280 s
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  # a producer is an example with a server.py (examples/embedded_app is an app, installed by its own test)
  for server in examples/*/server.py; do names+=("$(basename "$(dirname "$server")")"); done
fi
for name in "${names[@]}"; do
  req="examples/$name/requirements.txt"
  [ -f "$req" ] || { echo "no $req" >&2; exit 1; }
  mock="examples/$name/aimock"
  key=$(cat "$req" $( [ -f "$mock/package-lock.json" ] && echo "$mock/package-lock.json" ) | sha256sum | cut -c1-12)
  venv="$cache/$name-$key"
  exec 9>"$venv.lock"
  flock 9   # one builder per venv: scripts/test.sh builds in the background while tests may ask for one
  if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
    echo "producer venv: building $name ($req)"
    rm -rf "$venv"   # a half-built venv (no .complete) is rebuilt from scratch
    python3 -m venv --without-pip "$venv"
    "$uv" pip install -q --compile-bytecode --python "$venv/bin/python" -r "$req"
    if [ -f "$mock/package-lock.json" ]; then
      mkdir -p "$venv/aimock"
      cp "$mock/package.json" "$mock/package-lock.json" "$venv/aimock/"
      (cd "$venv/aimock" && npm ci --silent --no-audit --no-fund)
    fi
    touch "$venv/.complete"
  fi
  ln -sfn "$venv" ".producers/$name"
  [ -f "$mock/package-lock.json" ] && ln -sfn "$venv/aimock/node_modules" "$mock/node_modules"
  exec 9>&-
done
