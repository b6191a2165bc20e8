#!/usr/bin/env bash
# Prints the path of uv at the version requirements.txt pins, installed once into the cache outside the clone
# (pip, in a venv of its own). scripts/setup.sh and scripts/producer_venvs.sh install the venvs with it: on a
# fresh machine pip took 99 s for .venv and 280 s (250 s of CPU) for the producers' venvs, uv about 20 and 50 s.
# They compile the bytecode as they install, as pip does: this machine sets PYTHONDONTWRITEBYTECODE, so a module
# with no .pyc is compiled again by every process that imports it. Both scripts start at once in scripts/test.sh,
# so the install holds a lock.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^uv==\([^ ]*\).*/\1/p' requirements.txt)
[ -n "$version" ] || { echo "requirements.txt pins no uv (uv==…)" >&2; exit 1; }
cache="${INTERRUPT_CHAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/interrupt_chat}"
home="$cache/uv-$version"
mkdir -p "$cache"
exec 9>"$home.lock"
flock 9
if [ ! -x "$home/bin/uv" ]; then
  rm -rf "$home"
  python3 -m venv "$home"
  # (this machine's pip.conf names local indexes that may be absent: drop pip's warnings about them)
  "$home/bin/pip" install -q --disable-pip-version-check "uv==$version" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; } >&2
fi
echo "$home/bin/uv"
