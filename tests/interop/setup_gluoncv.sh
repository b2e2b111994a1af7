#!/usr/bin/env bash
# setup_gluoncv.sh  -- add GluonCV 0.10.5.post0 to the MXNet 1.9.1 reference venv (idempotent).
#
# What worked (same image as setup_mxnet_venv.sh): `pip install gluoncv==0.10.5.post0 --no-deps`
# (its declared requirements would pull a newer numpy and opencv), then the modules it imports at
# `from gluoncv import model_zoo`: tqdm portalocker scipy Pillow yacs autocfg pyyaml, with
# numpy==1.23.5 on the same pip line so none of them upgrades numpy. pandas/opencv are not
# needed for the model zoo. GluonCV reports __version__ '0.11.0' for this release; the check
# below reads the distribution version. Weights cannot be downloaded: fixtures use
# pretrained=False, pretrained_base=False.
# Last line printed on success: the venv's python path.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="$(bash "$HERE/setup_mxnet_venv.sh" 1.9.1 | tail -n 1)"

check() {
  "$PY" - <<'PYEOF' >/dev/null 2>&1
import importlib.metadata as md, warnings
warnings.simplefilter("ignore")
assert md.version("gluoncv") == "0.10.5.post0" and md.version("numpy") == "1.23.5"
from gluoncv import model_zoo  # noqa: F401
PYEOF
}

if ! check; then
  echo "[setup_gluoncv] installing gluoncv==0.10.5.post0 into $(dirname "$(dirname "$PY")")" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps "gluoncv==0.10.5.post0" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check "numpy==1.23.5" tqdm portalocker \
    scipy Pillow yacs autocfg pyyaml >&2
  check || { echo "[setup_gluoncv] import gluoncv still fails" >&2; exit 1; }
fi
echo "$PY"
