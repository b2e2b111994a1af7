#!/usr/bin/env bash
# Set up hybridserve in a project-local virtualenv (.venv): runtime + test dependencies at the
# versions pinned in requirements.lock + requirements-test.lock (hash-checked; regenerate them
# with scripts/lock.sh), then hybridserve itself in editable mode. The dev extras are those of
# scripts/dev_extras.sh (`test`, and `reliability`: schemathesis, whose fast run is part of the
# default suite). Should pyproject.toml require something the locks lack (a dependency added
# without rerunning scripts/lock.sh), it says so and installs with the locks as constraints
# instead; tests/test_lock.py fails until the locks are regenerated.
# Idempotent: re-running only installs what changed. Needs python3 (3.10+) with venv.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/dev_extras.sh
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv || { echo "python3 -m venv failed: install python3-venv (apt-get install python3-venv)" >&2; exit 1; }
fi
stamp=.venv/.hybridserve-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ] \
   || [ requirements.lock -nt "$stamp" ] || [ requirements-test.lock -nt "$stamp" ]; then
  pip=(.venv/bin/python -m pip install --quiet)
  "${pip[@]}" --upgrade pip
  if .venv/bin/python scripts/lockfile.py check "$HYBRIDSERVE_DEV_EXTRAS"; then
    "${pip[@]}" --require-hashes -r requirements.lock -r requirements-test.lock
    # everything it needs is pinned above: hybridserve alone, nothing re-resolved
    "${pip[@]}" --no-deps -e .
  else
    echo "setup: WARNING: the locks are out of date (above); installing with them as constraints" >&2
    cons=$(mktemp)
    .venv/bin/python scripts/lockfile.py pins requirements.lock requirements-test.lock > "$cons"
    "${pip[@]}" -c "$cons" -e ".[$HYBRIDSERVE_DEV_EXTRAS]"
    rm -f "$cons"
  fi
  touch "$stamp"
fi
echo "hybridserve environment ready: $(pwd)/.venv"
