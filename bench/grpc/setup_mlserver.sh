#!/usr/bin/env bash
# MLServer 1.7.1, the reference for bench/grpc/mlserver_bench.py, in its own venv
# (.venv-mlserver, gitignored) with real MXNet 1.9.1 (numpy 1.23.5, which MXNet 1.9.1 needs)
# so bench/grpc/mlserver_runtime serves the MLP export with MXNet itself. Idempotent.
#   bash bench/grpc/setup_mlserver.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${HYBRIDSERVE_MLSERVER_VENV:-.venv-mlserver}"
if [ -x "$venv/bin/mlserver" ] && "$venv/bin/python" -c "import mlserver, mxnet, uvloop
assert tuple(map(int, uvloop.__version__.split('.')[:2])) < (0, 22)" 2>/dev/null; then
  echo "setup_mlserver: $venv ready"; exit 0
fi
py="$(command -v python3.11 || command -v python3)"
"$py" -m venv "$venv"
# uvloop < 0.22: from 0.22 its get_event_loop() raises outside a running loop, and
# MLServer 1.7.1's parallel inference worker calls it at start (the worker dies, no model loads)
"$venv/bin/pip" install -q "mlserver==1.7.1" "mxnet==1.9.1" "numpy==1.23.5" "uvloop<0.22"
"$venv/bin/python" -c "import mlserver, mxnet, numpy; print('mlserver', mlserver.__version__, 'mxnet', mxnet.__version__, 'numpy', numpy.__version__)"
echo "setup_mlserver: $venv ready"
