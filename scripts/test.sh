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
# Installs a Debian package the tests need when its command is missing (as root, with apt).
need() { # <present: a shell test> <package> <why>
  eval "$1" && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing $2 (Debian package) for $3..."
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  else
    echo "$2 is required by $3: install it (apt-get install $2)" >&2
    exit 1
  fi
}
need 'command -v redis-server >/dev/null 2>&1' redis-server 'the end-to-end and relay tests (a private redis-server)'
need 'command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1' postgresql 'the datastore tests (a private PostgreSQL: initdb, pg_ctl)'
need 'command -v tmux >/dev/null 2>&1' tmux 'the CLI tests (agent run and agent tail in a real terminal)'
# Agentbase's Python SDK, pinned, in a virtual environment under .tools/ (test/e2e/agentbase-sdk.test.ts).
bash scripts/install-agentbase-sdk.sh >/dev/null
# schemathesis, pinned, in a virtual environment under .tools/ (test/e2e/contract.test.ts).
bash scripts/install-schemathesis.sh >/dev/null
ENGINES="${TEST_ENGINES:-embedded temporal-cli}"
# With their slashes: jest takes them as patterns, and test/cli alone would also match test/client.
REAL_SUITES=(test/devserver/conformance/ test/workflows/ test/e2e/ test/cli/)
# Files among them that talk to no engine (replay of saved histories, pure functions): the first pass covers them.
NO_ENGINE=(/node_modules/ test/workflows/replay.test.ts test/workflows/callback-end.test.ts test/workflows/tool-registry.test.ts test/cli/replay-options.test.ts)
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
      if [ $# -gt 0 ]; then ENGINE=temporal-cli npx jest "$@"; else ENGINE=temporal-cli npx jest "${REAL_SUITES[@]}" --testPathIgnorePatterns "${NO_ENGINE[@]}"; fi ;;
    *) echo "TEST_ENGINES: unknown engine '$engine' (embedded, temporal-cli)" >&2; exit 2 ;;
  esac
done
