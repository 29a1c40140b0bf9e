#!/usr/bin/env bash
# Installs Agentbase's official Python SDK (agentbase-sdk on PyPI, pinned) under
# .tools/, for the tests that drive this service with it (test/e2e/agentbase-sdk.e2e.test.ts).
# Prints the environment's python on success.
set -euo pipefail
exec bash "$(dirname "$0")/install-python-tool.sh" agentbase-sdk "${AGENTBASE_SDK_VERSION:-0.5.0}" agentbase 'the Agentbase SDK tests'
