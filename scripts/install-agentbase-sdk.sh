#!/usr/bin/env bash
# Installs Agentbase's official Python SDK (agentbase-sdk on PyPI, pinned) into
# a virtual environment under .tools/, for the tests that drive this service
# with it (test/e2e/agentbase-sdk.test.ts). Not the system's Python packages:
# the SDK brings its own httpx and pydantic. Idempotent: does nothing when the
# pinned version is there. Prints the environment's python on success.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${AGENTBASE_SDK_VERSION:-0.5.0}"
TOOLS="$PWD/.tools"
DIR="$TOOLS/agentbase-sdk-$VERSION"
LOG="$TOOLS/install.log"

installed() { [ -x "$DIR/bin/python" ] && "$DIR/bin/python" -c 'import agentbase' >/dev/null 2>&1; }

# venv and pip come with python3 on most systems; Debian splits them out.
ensure_venv() {
  command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing python3-venv (Debian package) for the Agentbase SDK tests..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  fi
  command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1
}

# Built beside its final place and moved there only when whole, so an interrupted
# install never leaves a half-made environment that looks installed.
install() {
  local tmp="$DIR.partial"
  rm -rf "$tmp"
  {
    python3 -m venv "$tmp" &&
      "$tmp/bin/python" -m pip install --disable-pip-version-check --quiet "agentbase-sdk==$VERSION"
  } >>"$LOG" 2>&1 || return 1
  rm -rf "$DIR" && mv "$tmp" "$DIR"
}

mkdir -p "$TOOLS"
if ! installed; then
  if ! ensure_venv || ! install || ! installed; then
    echo "cannot install agentbase-sdk $VERSION: needs python3 with venv and pip (apt-get install python3-venv) and the Python package index; details in $LOG" >&2
    exit 1
  fi
fi
echo "$DIR/bin/python"
