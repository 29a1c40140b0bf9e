#!/usr/bin/env bash
# The project's test command: installs what is missing, type-checks, lints, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
npx tsc --noEmit -p .
npx eslint .
npx jest "$@"
