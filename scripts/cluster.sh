#!/usr/bin/env bash
# The production topology on this machine: PostgreSQL, the official Temporal server (built once
# from its Go module into .tools/), Redis, two workers, two gateways and HAProxy in front of them.
#   scripts/cluster.sh up [--workers N] [--gateways N]   prints GATEWAY_URL=... and TEMPORAL_ADDRESS=...
#   scripts/cluster.sh down | status
# docs/operations.md, "Beyond one machine", says more.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || bash scripts/install-deps.sh
exec node -r ./bin/register-ts.js src/dev/cluster/main.ts "$@"
