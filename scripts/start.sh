#!/usr/bin/env bash
# `npm start`: installs what is missing, then starts the whole service on this
# machine (the Temporal dev server with its Web UI, or the embedded engine;
# private Redis, worker, gateway, and the scripted model when no
# OPENAI_API_KEY is set). Data lives under .data/. Each install says what it
# does first: a first start is otherwise a silent minute.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules ]; then
  echo "npm start: first start: installing the npm packages (about a minute)..."
  bash scripts/install-deps.sh
fi
exec node -r ./bin/register-ts.js src/dev/launcher/main.ts "$@"
