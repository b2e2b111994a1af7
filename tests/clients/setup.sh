#!/usr/bin/env bash
# The test clients whose dependencies conflict with the server's pins live in their own venv,
# .venv-clients (tests/service/api/test_grpc_kserve.py drives it through a subprocess and
# skips, saying why, when it is absent). Today: KServe's SDK (its InferenceGRPCClient), which
# pins its own protobuf/grpcio/fastapi ranges. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv-clients
PIN="kserve==0.15.2"
if ! "$VENV/bin/python" -c "import kserve" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet "$PIN" numpy
fi
echo "test clients ready: $(pwd)/$VENV ($("$VENV/bin/python" -c 'import kserve, google.protobuf as p, grpc; print("kserve", kserve.__version__ if hasattr(kserve, "__version__") else "?", "protobuf", p.__version__, "grpcio", grpc.__version__)'))"
