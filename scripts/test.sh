#!/usr/bin/env bash
# The project's test command: installs what is missing, then type-checks and lints beside
# jest's three projects (jest.config.js): unit tests once, the engine and e2e projects on
# the embedded engine and again on the real Temporal dev server and the official
# time-skipping test server (temporal-cli; there the e2e project keeps the files that
# talk to Temporal in ways an engine can get wrong), all in one jest run.
#   TEST_ENGINES="embedded"      the embedded engine only; "temporal-cli" the real server only.
#   npm test -- <jest args>      the given tests, in each project and engine they belong to
#                                (e.g. --selectProjects unit, or a path).
set -euo pipefail
cd "$(dirname "$0")/.."
# A fresh checkout installs without the packages' build scripts; they run below (npm rebuild)
# while the type-check and lint start: better-sqlite3 compiles from source here (no prebuilt
# binary is reachable), about 70 s of one core, and the checks use the other one meanwhile.
[ -d node_modules ] || bash scripts/install-deps.sh --ignore-scripts
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
need 'command -v bwrap >/dev/null 2>&1' bubblewrap "the agent's computer (its sandbox) and its tests"
need 'command -v rg >/dev/null 2>&1' ripgrep "the agent's computer (its glob and grep tools) and its tests"
need 'command -v chromium >/dev/null 2>&1' chromium "the agent's browser tools and their tests (Debian's Chromium, never a download)"
need 'command -v haproxy >/dev/null 2>&1' haproxy "the cluster pass (the load balancer in front of its gateways)"
# The engines the engine and e2e jest projects run on (jest.config.js); the unit project runs once.
export TEST_ENGINES="${TEST_ENGINES:-embedded temporal-cli}"
for engine in $TEST_ENGINES; do
  case "$engine" in
    embedded | temporal-cli) ;;
    *) echo "TEST_ENGINES: unknown engine '$engine' (embedded, temporal-cli)" >&2; exit 2 ;;
  esac
done
# Type-check, lint and check the formatting (prettier: npm run format writes it) in the background,
# from the start: at a lower priority (nice), they take the core the native build leaves and then
# what jest leaves idle, instead of holding either back. A failed check is printed as soon as it
# ends and fails the run; jest is left to finish (stopping it mid-file would leave the processes
# its e2e stacks started running). Background jobs of a script ignore Ctrl-C: the traps pass
# Ctrl-C and SIGTERM on to the script's process group, jobs included.
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
trap 'trap "" TERM; kill -TERM 0 2>/dev/null; exit 130' INT
trap 'trap "" TERM; kill -TERM 0 2>/dev/null; exit 143' TERM
# The service, then the web console (its own settings: the browser's DOM, JSX).
(nice -n 10 npx tsc --noEmit -p . && nice -n 10 npx tsc -p console/tsconfig.json) >"$out/tsc" 2>&1 & typecheck=$!
nice -n 10 npx eslint . >"$out/eslint" 2>&1 & lint=$!
nice -n 10 npx prettier --check . >"$out/prettier" 2>&1 & format=$!
# A set-up step that failed ends the run before jest, and the checks with it (their output would
# otherwise go on into a removed folder).
set_up_failed() { # <output file> <what failed>
  cat "$out/$1"
  echo "npm test: $2" >&2
  kill "$typecheck" "$lint" "$format" 2>/dev/null || true
  exit 1
}
# The cluster pass (jest.cluster.config.js) runs after the projects, on the production topology of
# scripts/cluster.sh: on a run of the whole suite (no jest arguments), unless CLUSTER_TESTS=0;
# CLUSTER_TESTS=1 adds it to a run with arguments. The official Temporal server it needs is built
# from its Go module (once, into .tools/: a few minutes of a cold Go cache), at a low priority,
# while the projects run.
cluster_pass="${CLUSTER_TESTS:-}"
[ -n "$cluster_pass" ] || { [ "$#" = 0 ] && cluster_pass=1 || cluster_pass=0; }
if [ "$cluster_pass" = 1 ]; then
  nice -n 15 bash scripts/cluster.sh build >"$out/cluster-build" 2>&1 & cluster_build=$!
fi
# The Python tools the tests use, pinned, each in a virtual environment under .tools/ (idempotent:
# quick when installed), one after another (each may need apt), beside the native build below:
# Agentbase's SDK (test/e2e/agentbase-sdk.e2e.test.ts), schemathesis (test/e2e/contract.e2e.test.ts),
# and the real Temporal CLI and test server when temporal-cli is one of the engines.
(
  bash scripts/install-agentbase-sdk.sh >/dev/null
  bash scripts/install-schemathesis.sh >/dev/null
  case " $TEST_ENGINES " in *" temporal-cli "*) bash scripts/install-temporal-cli.sh >/dev/null ;; esac
) >"$out/tools" 2>&1 & tools=$!
# The native builds an install without scripts left (see above), before any test loads them.
if [ ! -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ]; then
  echo "building the packages' native parts (npm rebuild) beside the checks and the Python tools..."
  npm rebuild >"$out/rebuild" 2>&1 || set_up_failed rebuild "npm rebuild failed"
fi
wait "$tools" || set_up_failed tools "installing the Python tools failed"
# The web console the gateways of the tests serve (a second or two, skipped when current).
node -r ./bin/register-ts.js console/build.ts >"$out/console" 2>&1 || set_up_failed console "building the web console failed"
# One jest run for every project on every engine: the workers stay busy to the end.
npx jest "$@" & tests=$!
failed=
check() { # <pid> <name>: prints the check's output; a failure is remembered
  if wait "$1"; then cat "$out/$2"; return; fi
  cat "$out/$2"
  echo "npm test: $2 failed (the tests go on; the run fails at their end)" >&2
  failed=1
}
check "$typecheck" tsc
check "$lint" eslint
check "$format" prettier
status=0
wait "$tests" || status=$?
tests=
if [ "$cluster_pass" = 1 ]; then
  if wait "$cluster_build"; then
    npx jest -c jest.cluster.config.js || status=1
  else
    cat "$out/cluster-build"
    echo "npm test: building the Temporal server for the cluster pass failed" >&2
    status=1
  fi
fi
if [ -n "$failed" ] && [ "$status" = 0 ]; then status=1; fi
exit "$status"
