#!/usr/bin/env bash
# Installs LangGraph's open-source Agent Server (`langgraph dev`, in-memory runtime) into a private
# venv, .tools/langgraph/venv (the repository ignores .tools/), for bench/langgraph-compare.ts, which
# runs the same workload against it and against this service (issue 42). Every version is pinned so
# that two runs of the comparison run the same server; a second run is quick when all is there.
# Usage: bash bench/langgraph/install.sh   (prints the venv's python path last)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.tools/langgraph/venv
# The issue's server, langgraph-api 0.16.7, with the newest CLI and in-memory runtime that install beside it;
# then the packages on the measured path (the model client, the HTTP server), at the versions pip chose for those.
PINS=(
  "langgraph-cli[inmem]==0.4.40"
  "langgraph-api==0.16.7"
  "langgraph-runtime-inmem==0.36.7"
  "langgraph==1.2.22"
  "langchain-openai==1.7.4"
  "langchain-core==1.8.3"
  "openai==3.57.0"
  "langgraph-sdk==0.4.14"
  "langgraph-checkpoint==4.3.2"
  "uvicorn==0.54.0"
  "starlette==1.10.0"
  "sse-starlette==3.7.0"
)
STAMP="$VENV/.pins"
WANT="$(printf '%s\n' "${PINS[@]}")"
if [[ -x "$VENV/bin/langgraph" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "langgraph: present in $VENV ($(head -5 "$STAMP" | tr '\n' ' ')...)" >&2
  echo "$VENV/bin/python"
  exit 0
fi
# langgraph-api needs Python >= 3.11; the newest one here that has venv.
PY=""
for c in python3.12 python3.11 python3.13 python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import sys, venv; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    PY="$(command -v "$c")"
    break
  fi
done
[[ -n "$PY" ]] || { echo "langgraph: no Python >= 3.11 found" >&2; exit 1; }
echo "langgraph: installing into $VENV with $("$PY" --version): ${PINS[*]}" >&2
mkdir -p .tools/langgraph
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2
echo "$WANT" >"$STAMP"
"$VENV/bin/python" -m pip show langgraph-api langgraph-cli langgraph-runtime-inmem langgraph langchain-openai openai 2>/dev/null |
  awk '/^Name:/{n=$2} /^Version:/{print "langgraph:   " n " " $2}' >&2
echo "$VENV/bin/python"
