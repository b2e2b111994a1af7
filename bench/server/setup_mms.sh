#!/usr/bin/env bash
# The MXNet Model Server reference for bench/server/run.py: a venv next to the MXNet ones with
# MXNet 1.9.1, multi-model-server 1.1.11 (MXNet Model Server's PyPI name since 1.1),
# model-archiver and py-spy. Idempotent. MMS also needs Java 11+ (`java -version`).
#   bash bench/server/setup_mms.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${HYBRIDSERVE_MMS_VENV:-.mxnet-venvs/mms-1.1.11}"
if [ -x "$venv/bin/model-archiver" ] && "$venv/bin/python" -c "import mms, mxnet" 2>/dev/null; then
  echo "setup_mms: $venv ready"; exit 0
fi
py="$(command -v python3.11 || command -v python3)"
"$py" -m venv "$venv"
"$venv/bin/pip" install -q "mxnet==1.9.1" "numpy==1.23.5" "multi-model-server==1.1.11" \
  "model-archiver" "py-spy"
command -v java >/dev/null || echo "setup_mms: no java on PATH: MMS will not start" >&2
echo "setup_mms: $venv ready"
