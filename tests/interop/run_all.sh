#!/usr/bin/env bash
# run_all.sh [--subset]  (= `make interop`): every real-MXNet cross-check, non-zero exit on any
# mismatch. Not part of the default test run.
#
#   1. set up the MXNet 1.9.1 and 2.0.0b1 venvs if missing (setup_mxnet_venv.sh)
#   2. MXNet 1.9.1 exports the model zoo (random weights, randomised BatchNorm statistics)
#      into artifacts/interop/zoo-1.9.1/; hybridserve runs each export and compares (check_zoo.py)
#   3. hybridserve exports each zoo model (and the 2.0.0b1 fixtures) in 1.x format; MXNet 1.9.1
#      loads and runs them; parameter counts / output shapes vs MXNet's zoo (check_export_1x.py)
#   4. hybridserve's 2.x exports load in MXNet 2.0.0b1 with the same outputs (check_export_2x.py)
#   5. GluonCV 0.10.5 beside MXNet 1.9.1 (setup_gluoncv.sh); every GluonCV fixture and the
#      detection-operator references (tests/gluon/test_gluoncv_models.py, large nets included);
#      hybridserve's 1.x / 2.x exports of each GluonCV fixture run in MXNet 1.9.1 / 2.0.0b1
#      with GluonCV's outputs (check_gluoncv_export.py)
#
# --subset limits steps 2-3 to resnet18_v1 resnet50_v2 vgg11_bn alexnet densenet121
# squeezenet1.1 mobilenet1.0 mobilenetv2_1.0 inceptionv3. The whole zoo takes a while on 2 cores.
# PYTHON overrides hybridserve's interpreter (default .venv/bin/python, else python3).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
MX1="$(bash tests/interop/setup_mxnet_venv.sh 1.9.1 | tail -n 1)" || { echo "MXNet 1.9.1 venv setup failed" >&2; exit 2; }
bash tests/interop/setup_mxnet_venv.sh 2.0.0b1 >/dev/null || { echo "MXNet 2.0.0b1 venv setup failed" >&2; exit 2; }

MODELS=()
ZOO_ARGS=()
if [ "${1:-}" = "--subset" ]; then
  MODELS=(resnet18_v1 resnet50_v2 vgg11_bn alexnet densenet121 squeezenet1.1 mobilenet1.0 mobilenetv2_1.0 inceptionv3)
  ZOO_ARGS=(--models "${MODELS[@]}")
fi

status=0
step() {
  echo "== $*"
  "$@" || { echo "!! FAILED: $*"; status=1; }
}
step "$MX1" tests/interop/export_zoo_mx.py "${ZOO_ARGS[@]}"
step "$PY" tests/interop/check_zoo.py "${ZOO_ARGS[@]}"
step "$PY" tests/interop/check_export_1x.py --fixtures "${ZOO_ARGS[@]}"
step "$PY" tests/interop/check_export_2x.py
# 4b. bfloat16 (contrib.amp): MXNet 1.9.1 loads our bf16 exports, graphs equal its own conversion
step "$PY" tests/interop/check_amp_export.py
# 5. GluonCV families and the contrib detection operators: every committed fixture, the large
#    networks included (regenerate with gen_gluoncv.py / gen_contrib_refs.py in the GluonCV venv)
step bash tests/interop/setup_gluoncv.sh
step "$PY" -m pytest -q -m "interop or not interop" tests/gluon/test_gluoncv_models.py \
  tests/ops/test_contrib_refs.py tests/service/api/test_detector_http.py
step "$PY" tests/interop/check_gluoncv_export.py
if [ "$status" = 0 ]; then echo "interop: all checks passed"; else echo "interop: FAILURES (see above)"; fi
exit "$status"
