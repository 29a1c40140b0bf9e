#!/usr/bin/env bash
# Installs the locked npm dependencies. `npm install` (not `npm ci`) on purpose:
# the registry mirror our machines use has no builds of optional
# other-platform packages (e.g. @swc/core-darwin-*), so npm leaves them out of
# package-lock.json and `npm ci` then refuses the lock as "out of sync".
# With the lock present, `npm install` installs exactly the locked versions.
# Arguments go to npm: scripts/test.sh passes --ignore-scripts and builds the packages' native
# parts (npm rebuild) beside the type-check and lint.
set -euo pipefail
cd "$(dirname "$0")/.."
npm install --no-audit --no-fund --no-save "$@"
