#!/usr/bin/env bash
# One command for a newcomer: set everything up and run the default test suite (CI runs this).
# System packages the suite uses (nginx, wrk, Chromium) are installed when running as root
# with apt-get; elsewhere the tests that need them skip. HYBRIDSERVE_SKIP_SYSTEM_DEPS=1 skips.
# Slow suites have their own commands (README: interop, cluster, reliability, benchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${HYBRIDSERVE_SKIP_SYSTEM_DEPS:-0}" != 1 ]; then
  bash scripts/install_system_deps.sh || echo "system packages not installed; dependent tests skip"
fi
bash scripts/setup.sh
# test clients that pin their own protobuf (KServe's SDK) in .venv-clients; without it their
# tests skip and say why
bash tests/clients/setup.sh || echo "test clients not installed; their tests skip"
exec .venv/bin/python -m pytest -q -m "not slow and not interop" --timeout=600 "$@"
