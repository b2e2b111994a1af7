#!/usr/bin/env bash
# Run .venv-perf's perf_analyzer with the CUDA runtime library it links on the library path
# (bench/grpc/setup_perf_analyzer.sh installs both). Arguments go to perf_analyzer.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/.venv-perf"
CUDART="$("$VENV/bin/python" -c 'import nvidia.cuda_runtime, os; print(os.path.join(list(nvidia.cuda_runtime.__path__)[0], "lib"))')"
export LD_LIBRARY_PATH="$CUDART${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$VENV/bin/perf_analyzer" "$@"
