#!/usr/bin/env bash
# Installs schemathesis (PyPI, pinned) under .tools/, for the contract test
# (test/e2e/contract.e2e.test.ts): property-based requests generated from the
# service's OpenAPI document, every answer checked against it. Prints the
# environment's python on success (run it as `python -m schemathesis.cli`).
set -euo pipefail
exec bash "$(dirname "$0")/install-python-tool.sh" schemathesis "${SCHEMATHESIS_VERSION:-4.32.5}" schemathesis.cli 'the contract test'
