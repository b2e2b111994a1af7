#!/usr/bin/env bash
# Set up hybridserve in a project-local virtualenv (.venv): runtime + test dependencies
# (the `test` extra, and `reliability`: schemathesis, whose fast run is part of the default
# suite, ~6 s; without it that test skips).
# Idempotent: re-running only installs what changed. Needs python3 (3.10+) with venv.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv || { echo "python3 -m venv failed: install python3-venv (apt-get install python3-venv)" >&2; exit 1; }
fi
stamp=.venv/.hybridserve-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[test,reliability]"
  touch "$stamp"
fi
echo "hybridserve environment ready: $(pwd)/.venv"
