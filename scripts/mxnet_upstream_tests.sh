#!/usr/bin/env bash
# Run an MXNet source tree's own Python unit tests against hybridserve's framework and print a
# pass/fail table per file. The tree is yours to supply (e.g. a checkout of apache/mxnet master);
# the project contains none of its tests. Which tests are in scope is decided mechanically by the
# rule in tests/upstream/scope.py: out of scope are tests touching autograd/gradients,
# Trainer/optimizer/kvstore, GPUs, the legacy mx.nd/sparse API, and tests upstream skips.
#
#   scripts/mxnet_upstream_tests.sh PATH_TO_MXNET_SOURCE [test_file.py ...] [--timeout S] [--json OUT]
#
# MXNet's numpy tests compare against SciPy, which gets a venv of its own (.venv-upstream):
# SciPy's bundled OpenBLAS in the main .venv would change what the default suite measures.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 PATH_TO_MXNET_SOURCE [test_file.py ...]" >&2; exit 2; }
if [ ! -x .venv-upstream/bin/python ] || ! .venv-upstream/bin/python -c "import scipy, requests" 2>/dev/null; then
  python3 -m venv .venv-upstream
  .venv-upstream/bin/python -m pip install --quiet --upgrade pip
  .venv-upstream/bin/python -m pip install --quiet -e ".[test,upstream]"
fi
exec .venv-upstream/bin/python tests/upstream/runner.py "$@"
