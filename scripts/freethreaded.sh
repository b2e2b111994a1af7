#!/usr/bin/env bash
# A free-threaded CPython (3.14t, no GIL) beside the project, for the framework and its
# benchmarks: .freethreaded/python (the interpreter) and .venv-ft (NumPy, threadpoolctl, the
# framework's test tools). Debian 12 ships no free-threaded build and the python.org / GitHub
# downloads are not reachable from the build machines, so the source is Debian's own upstream
# tarball of CPython 3.14 (checksum-verified), built with --disable-gil (~4 min on 2 cores).
# 3.14, not 3.13: 3.13t's cProfile hangs with a second thread running (CPython gh-125165; seen
# here too), and 3.14t has the specialising interpreter. Idempotent: an existing build is kept.
#
#   bash scripts/freethreaded.sh
#   .venv-ft/bin/python bench/zoo_bench.py --models resnet18_v1 ...      # benchmarks without the GIL
#   .venv/bin/python -m pytest -m slow tests/ops/test_freethreaded.py     # kernels + compiler there
#
# The server stays on the regular interpreter: orjson, uvicorn[standard] and tritonclient[http]
# resolve to no free-threaded wheels.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
POOL=http://deb.debian.org/debian/pool/main/p/python3.14
# Debian keeps only the versions its suites use in the pool: try the newest first. Checksums as
# Debian's Sources indexes list them (3.14.4-3.14.7 also checked by download, 2026-11-30).
CANDIDATES="3.14.10:de414a57119abef52784d8993e341d53aed635fc2b05c2607d9f98a2c5b72032
3.14.9:e02d9ac21cebda6e46435369744a92c65cc7cd8669697694122cf97ffacd1e53
3.14.8:c2215904f02b175596dc49351585104f4bc20341e1c47378b26a2c274360ce73
3.14.7:3b48dac8fb59f62eaa67ac83c1eb12bda1b7a08406dd286e252c11a66be27f81
3.14.6:143b1dddefaec3bd2e21e3b839b34a2b7fb9842272883c576420d605e9f30c63
3.14.5:7e32597b99e5d9a39abed35de4693fa169df3e5850d4c334337ffd6a19a36db6
3.14.4:d923c51303e38e249136fc1bdf3568d56ecb03214efdef48516176d3d7faaef8"
PREFIX="$ROOT/.freethreaded/python"
PY="$PREFIX/bin/python3.14t"

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
    VERSION=
    for c in $CANDIDATES; do
        v="${c%%:*}"
        if curl -fsSL --retry 2 -o "$work/src.tar.xz" "$POOL/python3.14_${v}.orig.tar.xz" 2>/dev/null \
                && echo "${c#*:}  $work/src.tar.xz" | sha256sum -c --quiet; then
            VERSION="$v"
            break
        fi
    done
    [ -n "$VERSION" ] || { echo "freethreaded.sh: no known CPython 3.14 tarball in $POOL" >&2; exit 1; }
    echo "downloaded CPython $VERSION source (Debian's upstream tarball, checksum verified)"
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

if ! "$ROOT/.venv-ft/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 14)' 2>/dev/null; then
    rm -rf "$ROOT/.venv-ft"            # missing, or made by another interpreter
    "$PY" -m venv "$ROOT/.venv-ft"
fi
# only binary wheels: an sdist build of NumPy would silently come without an optimised BLAS.
# The same NumPy as .venv when there is one, so that both interpreters run the same kernels.
NUMPY="numpy>=2.3"
if [ -x "$ROOT/.venv/bin/python" ]; then
    NUMPY="numpy==$("$ROOT/.venv/bin/python" -c 'import numpy; print(numpy.__version__)')"
fi
"$ROOT/.venv-ft/bin/python" -m pip install -q --only-binary :all: \
    "$NUMPY" threadpoolctl pytest pytest-timeout hypothesis
"$ROOT/.venv-ft/bin/python" - <<'EOF'
import sys
import numpy as np
from threadpoolctl import threadpool_info
blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
assert blas, "NumPy has no BLAS"
print(f"free-threaded Python {sys.version.split()[0]} (GIL enabled: {sys._is_gil_enabled()}), "
      f"NumPy {np.__version__}, {blas[0]['internal_api']} {blas[0]['version']}: .venv-ft ready")
EOF
