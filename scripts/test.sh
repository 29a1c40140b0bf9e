#!/usr/bin/env bash
# The project's test command: installs what is missing, type-checks, lints, runs
# every test on the embedded engine, then the suites that talk to Temporal
# (conformance, workflows, end-to-end, CLI) again on the real Temporal dev server
# and the official time-skipping test server (ENGINE=temporal-cli).
#   TEST_ENGINES="embedded"      only the first pass; "temporal-cli" only the second.
#   npm test -- <jest args>      the given tests, on each engine of TEST_ENGINES.
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
# The datastore tests start a private PostgreSQL (initdb, pg_ctl) from Debian's packages.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing postgresql (Debian package) for the datastore tests..."
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "PostgreSQL is required by the datastore tests: install it (apt-get install postgresql)" >&2
    exit 1
  fi
fi
# The CLI tests (test/client) drive `agent run` and `agent tail` in a real terminal: tmux.
if ! command -v tmux >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing tmux (Debian package) for the CLI tests..."
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
  else
    echo "tmux is required by the CLI tests: install it (apt-get install tmux)" >&2
    exit 1
  fi
fi
ENGINES="${TEST_ENGINES:-embedded temporal-cli}"
REAL_SUITES=(test/devserver/conformance test/workflows test/e2e test/cli)
# Type-check and lint at once (two cores; each is mostly one).
npx tsc --noEmit -p . & typecheck=$!
npx eslint . & lint=$!
wait "$typecheck"
wait "$lint"
for engine in $ENGINES; do
  case "$engine" in
    embedded) ENGINE=embedded npx jest "$@" ;;
    temporal-cli)
      bash scripts/install-temporal-cli.sh >/dev/null
      echo "--- the same suites on the real Temporal dev server (ENGINE=temporal-cli) ---"
      if [ $# -gt 0 ]; then ENGINE=temporal-cli npx jest "$@"; else ENGINE=temporal-cli npx jest "${REAL_SUITES[@]}"; fi ;;
    *) echo "TEST_ENGINES: unknown engine '$engine' (embedded, temporal-cli)" >&2; exit 2 ;;
  esac
done
