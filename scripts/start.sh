#!/usr/bin/env bash
# `npm start`: installs what is missing, then starts the whole service on this
# machine (embedded Temporal engine, private Redis, worker, gateway, and the
# scripted model when no OPENAI_API_KEY is set). Data lives under .data/.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || bash scripts/install-deps.sh
exec node -r tsx/cjs src/launcher/main.ts "$@"
