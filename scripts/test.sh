#!/usr/bin/env bash
# The project's test command: installs what is missing, type-checks, lints, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || bash scripts/install-deps.sh
# End-to-end and relay tests run a private redis-server.
if ! command -v redis-server >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing redis-server (Debian package) for the tests..."
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    echo "redis-server is required by the tests: install it (apt-get install redis-server)" >&2
    exit 1
  fi
fi
npx tsc --noEmit -p .
npx eslint .
npx jest "$@"
