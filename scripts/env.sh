# Sourced before every reflex command (README, tests, CI): offline-safe bun and quiet Reflex.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt          # npm's TLS needs the system CA bundle here
fi
BUN_MIN=1.4.4
bun_ok() { command -v bun >/dev/null 2>&1 &&
  [ "$(printf '%s\n%s\n' "$BUN_MIN" "$(bun --version 2>/dev/null)" | sort -V | head -n1)" = "$BUN_MIN" ]; }
if ! bun_ok && [ ! -x .tools/node_modules/.bin/bun ] && command -v npm >/dev/null 2>&1; then
  npm install --prefix .tools --no-fund --no-audit --no-save "bun@$BUN_MIN" >/dev/null 2>&1 || true
fi
[ -x .tools/node_modules/.bin/bun ] && export PATH="$PWD/.tools/node_modules/.bin:$PATH"
if bun_ok; then export REFLEX_USE_SYSTEM_BUN=1; fi     # otherwise Reflex downloads bun itself (needs GitHub access)
if command -v npm >/dev/null 2>&1; then export NPM_CONFIG_REGISTRY="${NPM_CONFIG_REGISTRY:-$(npm config get registry)}"; fi
export REFLEX_TELEMETRY_ENABLED=false REFLEX_CHECK_LATEST_VERSION=false
