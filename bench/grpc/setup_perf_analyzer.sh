#!/usr/bin/env bash
# Triton's perf_analyzer for bench/grpc/grpc_bench.py, in its own venv (.venv-perf).
# The `perf-analyzer` PyPI package is a placeholder; the binary ships inside the
# tritonclient[all]==2.41.0 wheel. It links libb64 (Debian: libb64-0d) and, even on CPU, the
# CUDA runtime, taken from the nvidia-cuda-runtime-cu12 wheel (bench/grpc/perf_analyzer.sh
# puts it on LD_LIBRARY_PATH). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv-perf
if ! ldconfig -p | grep -q libb64.so.0d; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq libb64-0d >/dev/null || { apt-get update -qq && apt-get install -y -qq libb64-0d >/dev/null; }
  else
    echo "setup_perf_analyzer: install Debian's libb64-0d (needs root)" >&2; exit 1
  fi
fi
if [ ! -x "$VENV/bin/perf_analyzer" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet "tritonclient[all]==2.41.0" "nvidia-cuda-runtime-cu12"
fi
bash bench/grpc/perf_analyzer.sh --version >/dev/null 2>&1 || true
echo "perf_analyzer ready: bench/grpc/perf_analyzer.sh"
