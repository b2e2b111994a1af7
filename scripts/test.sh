#!/usr/bin/env bash
# One command for a newcomer: set everything up and run the default test suite.
# Slow suites have their own commands (see README: interop, load, reliability).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q -m "not slow and not interop" --timeout=300 "$@"
