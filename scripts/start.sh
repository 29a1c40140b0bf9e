#!/usr/bin/env bash
# Starts the embedded Temporal-compatible server with persistence under .data/.
# (The agent service's gateway and worker join this script as they land.)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
mkdir -p .data
exec bin/temporal-dev server start-dev --port "${TEMPORAL_PORT:-7233}" --db-filename .data/temporal.db --headless "$@"
