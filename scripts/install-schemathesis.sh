#!/usr/bin/env bash
# Installs schemathesis (PyPI, pinned) into a virtual environment under .tools/,
# for the contract test (test/e2e/contract.test.ts): property-based requests
# generated from openapi/openapi.json, every answer checked against it. Not the
# system's Python packages: schemathesis brings its own hypothesis, requests and
# jsonschema. Idempotent: does nothing when the pinned version is there. Prints
# the environment's python on success (run it as `python -m schemathesis.cli`).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${SCHEMATHESIS_VERSION:-4.32.5}"
TOOLS="$PWD/.tools"
DIR="$TOOLS/schemathesis-$VERSION"
LOG="$TOOLS/install.log"

installed() { [ -x "$DIR/bin/python" ] && "$DIR/bin/python" -c 'import schemathesis.cli' >/dev/null 2>&1; }

# venv and pip come with python3 on most systems; Debian splits them out.
ensure_venv() {
  command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing python3-venv (Debian package) for the contract test..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  fi
  command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1
}

# Built beside its final place and moved there only when whole, so an interrupted
# install never leaves a half-made environment that looks installed. (The move
# leaves the venv's console scripts naming the partial path's interpreter, so
# the test runs `python -m schemathesis.cli`, never bin/schemathesis.)
install() {
  local tmp="$DIR.partial"
  rm -rf "$tmp"
  {
    python3 -m venv "$tmp" &&
      "$tmp/bin/python" -m pip install --disable-pip-version-check --quiet "schemathesis==$VERSION"
  } >>"$LOG" 2>&1 || return 1
  rm -rf "$DIR" && mv "$tmp" "$DIR"
}

mkdir -p "$TOOLS"
if ! installed; then
  if ! ensure_venv || ! install || ! installed; then
    echo "cannot install schemathesis $VERSION: needs python3 with venv and pip (apt-get install python3-venv) and the Python package index; details in $LOG" >&2
    exit 1
  fi
fi
echo "$DIR/bin/python"
