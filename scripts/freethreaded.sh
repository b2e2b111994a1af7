#!/usr/bin/env bash
# A free-threaded CPython (3.13t, no GIL) beside the project, for the framework and its
# benchmarks: .freethreaded/python (the interpreter) and .venv-ft (numpy, threadpoolctl, the
# framework's test tools). Debian 12 ships no free-threaded build and the python.org / GitHub
# downloads are not reachable from the build machines, so the source is Debian's own upstream
# tarball of CPython 3.13 (pinned, checksum-verified), built with --disable-gil (~5 min on
# 2 cores). Idempotent: an existing build is kept.
#
#   bash scripts/freethreaded.sh
#   .venv-ft/bin/python bench/zoo_bench.py --models resnet18_v1 ...      # benchmarks on 3.13t
#   .venv-ft/bin/python -m pytest -q -m "not slow and not interop" tests/ops tests/compiler \
#       tests/gluon tests/symbol tests/io                                  # the framework's tests
#
# The server stays on the regular interpreter: orjson (one of its dependencies) publishes no
# free-threaded wheels.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION=3.13.5
SHA256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
URL="http://deb.debian.org/debian/pool/main/p/python3.13/python3.13_${VERSION}.orig.tar.xz"
PREFIX="$ROOT/.freethreaded/python"
PY="$PREFIX/bin/python3.13t"

if [ ! -x "$PY" ]; then
    # build tools and the headers of the stdlib modules pip and the tests need (ssl, zlib, ...)
    need=()
    for pkg in gcc make libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
    done
    if [ ${#need[@]} -gt 0 ]; then
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
        else
            echo "freethreaded.sh: install ${need[*]} first" >&2; exit 1
        fi
    fi
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    echo "downloading CPython $VERSION source (Debian's upstream tarball)"
    curl -fsSL --retry 3 -o "$work/src.tar.xz" "$URL"
    echo "$SHA256  $work/src.tar.xz" | sha256sum -c --quiet
    tar -C "$work" -xf "$work/src.tar.xz"
    cd "$work/Python-$VERSION"
    echo "building CPython $VERSION with --disable-gil into $PREFIX (a few minutes)"
    ./configure --disable-gil --prefix="$PREFIX" --with-ensurepip=install >"$work/configure.log" 2>&1 \
        || { tail -20 "$work/configure.log"; exit 1; }
    make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -30 "$work/make.log"; exit 1; }
    make install >"$work/install.log" 2>&1 || { tail -20 "$work/install.log"; exit 1; }
    cd "$ROOT"
fi
"$PY" -c 'import sys; assert not sys._is_gil_enabled(), "GIL is enabled"'

if [ ! -x "$ROOT/.venv-ft/bin/python" ]; then
    "$PY" -m venv "$ROOT/.venv-ft"
fi
# only binary wheels: an sdist build of NumPy would silently come without an optimised BLAS
"$ROOT/.venv-ft/bin/python" -m pip install -q --only-binary :all: \
    "numpy>=2.1" threadpoolctl pytest pytest-timeout hypothesis
"$ROOT/.venv-ft/bin/python" - <<'EOF'
import sys
import numpy as np
from threadpoolctl import threadpool_info
blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
assert blas, "NumPy has no BLAS"
print(f"free-threaded Python {sys.version.split()[0]} (GIL enabled: {sys._is_gil_enabled()}), "
      f"NumPy {np.__version__}, {blas[0]['internal_api']} {blas[0]['version']}: .venv-ft ready")
EOF
