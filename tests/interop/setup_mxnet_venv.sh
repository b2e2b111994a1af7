#!/usr/bin/env bash
# setup_mxnet_venv.sh VERSION  -- create (idempotently) a venv with a REAL MXNet
# for reference/interop checks.  VERSION is 1.9.1 or 2.0.0b1.
#
# Venv: ${HYBRIDSERVE_MXNET_VENV_DIR:-$REPO/.mxnet-venvs}/mxnet-VERSION
# Last line printed on success: the venv's python path.
#
# What worked (Debian 12 bookworm, CPython 3.11.7, x86_64, CPU only):
#   * Both versions are on PyPI under the plain name `mxnet`:
#       - mxnet==1.9.1   -> mxnet-1.9.1-py3-none-manylinux2014_x86_64.whl
#       - mxnet==2.0.0b1 -> mxnet-2.0.0b1-py3-none-manylinux2014_x86_64.whl
#     (`pip index versions mxnet` lists only final releases; the 2.0.0b1 beta
#      is installable when pinned exactly.)  Wheels are py3-none so py3.11 is fine.
#     NB: 2.0.0b1 reports mxnet.__version__ == '2.0.0beta1', so the checks
#     below compare the installed distribution version (importlib.metadata).
#   * numpy==1.23.5 has a cp311 wheel.  Both mxnet versions also pull
#     requests and graphviz (<0.9 for 1.9.1).
#   * Both versions log "Using Pooled (Naive) StorageManager for CPU" to stderr
#     on first allocation; harmless.
#   * libmxnet.so needs libgfortran.so.5 / libquadmath.so.0 (OpenBLAS built with
#     gfortran) and libgomp.so.1.  On this image libquadmath0 and libgomp1 were
#     already present; only `apt-get install libgfortran5` was needed (for
#     1.9.1 and 2.0.0b1 alike).  The script installs libgfortran5 libquadmath0
#     libgomp1 only when `import mxnet` fails and ldconfig lacks one of them.
#   * No env vars are required to import/run.  (Benchmark env: see
#     bench/mxnet_side/mlp_bench_mx.py.)
set -euo pipefail

VERSION="${1:-}"
case "$VERSION" in
  1.9.1|2.0.0b1) ;;
  *) echo "usage: $0 {1.9.1|2.0.0b1}" >&2; exit 2 ;;
esac

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV_ROOT="${HYBRIDSERVE_MXNET_VENV_DIR:-$REPO/.mxnet-venvs}"
VENV="$VENV_ROOT/mxnet-$VERSION"
PY="$VENV/bin/python"
PYTHON_BIN="${PYTHON:-python3}"

log() { echo "[setup_mxnet_venv $VERSION] $*" >&2; }

check_import() {  # check_import [-v]: -v shows the failure
  local out=/dev/null
  [ "${1:-}" = "-v" ] && out=/dev/stderr
  "$PY" - "$VERSION" <<'EOF' >"$out" 2>&1
import sys, warnings, importlib.metadata as md
warnings.simplefilter("ignore")
assert md.version("mxnet") == sys.argv[1], md.version("mxnet")
assert md.version("numpy") == "1.23.5", md.version("numpy")
import mxnet
mxnet.nd.ones((2, 2)).asnumpy()
EOF
}

# Fast path: already set up.
if [ -x "$PY" ] && check_import; then
  log "already set up"
  echo "$PY"
  exit 0
fi

mkdir -p "$VENV_ROOT"
if [ ! -x "$PY" ]; then
  log "creating venv at $VENV with $($PYTHON_BIN --version 2>&1)"
  "$PYTHON_BIN" -m venv "$VENV"
fi

if ! "$PY" -c "import importlib.metadata as md; assert md.version('numpy')=='1.23.5' and md.version('mxnet')=='$VERSION'" >/dev/null 2>&1; then
  log "pip install numpy==1.23.5 mxnet==$VERSION"
  "$PY" -m pip install --quiet --disable-pip-version-check "numpy==1.23.5" "mxnet==$VERSION" >&2
fi

if ! check_import; then
  # Usually missing shared libs of libmxnet.so.
  missing=()
  for lib in libgfortran.so.5 libquadmath.so.0 libgomp.so.1; do
    ldconfig -p | grep -q "$lib" || missing+=("$lib")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "missing system libs: ${missing[*]} -> apt-get install"
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >&2 || true
    $SUDO apt-get install -y -qq libgfortran5 libquadmath0 libgomp1 >&2
  fi
fi

if ! check_import; then
  log "import mxnet still fails:"
  check_import -v || true
  exit 1
fi

log "ok: $("$PY" -c 'import warnings; warnings.simplefilter("ignore"); import mxnet, numpy; print("mxnet", mxnet.__version__, "numpy", numpy.__version__)' 2>/dev/null)"
echo "$PY"
