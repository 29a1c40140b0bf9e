#!/usr/bin/env bash
# Installs a pinned Python package from PyPI into a virtual environment of its
# own under .tools/ (<name>-<version>), for tests that drive the service with
# it: not the system's Python packages, since each tool brings its own
# dependencies. Idempotent: does nothing when the pinned version is there.
# Prints the environment's python on success.
#   install-python-tool.sh <package> <version> <module it must import> <what it is for>
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGE="$1" VERSION="$2" MODULE="$3" PURPOSE="$4"
TOOLS="$PWD/.tools"
DIR="$TOOLS/$PACKAGE-$VERSION"
LOG="$TOOLS/install.log"

installed() { [ -x "$DIR/bin/python" ] && "$DIR/bin/python" -c "import $MODULE" >/dev/null 2>&1; }

# venv and pip come with python3 on most systems; Debian splits them out.
ensure_venv() {
  command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing python3-venv (Debian package) for $PURPOSE..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  fi
  command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1
}

# Built beside its final place and moved there only when whole, so an interrupted
# install never leaves a half-made environment that looks installed. (The move
# leaves the venv's console scripts naming the partial path's interpreter: run
# a tool as `python -m <module>`, never from bin/.)
#
# Cheaper where it can be (a test run installs three tools before its tests start): the system's
# pip, when it can install into another environment (--python, pip 22.3+), fills a venv made
# without a pip of its own (making one costs ~2 s of CPU), and nothing is byte-compiled ahead
# (--no-compile: Python compiles what a tool imports when it first runs, a fraction of it).
install() {
  local tmp="$DIR.partial" pip_args=(install --disable-pip-version-check --quiet --no-compile "$PACKAGE==$VERSION")
  rm -rf "$tmp"
  {
    if python3 -m pip --python "$(command -v python3)" --version >/dev/null 2>&1; then
      python3 -m venv --without-pip "$tmp" && python3 -m pip --python "$tmp/bin/python" "${pip_args[@]}"
    else
      python3 -m venv "$tmp" && "$tmp/bin/python" -m pip "${pip_args[@]}"
    fi
  } >>"$LOG" 2>&1 || return 1
  rm -rf "$DIR" && mv "$tmp" "$DIR"
}

mkdir -p "$TOOLS"
if ! installed; then
  if ! ensure_venv || ! install || ! installed; then
    echo "cannot install $PACKAGE $VERSION: needs python3 with venv and pip (apt-get install python3-venv) and the Python package index; details in $LOG" >&2
    exit 1
  fi
fi
echo "$DIR/bin/python"
