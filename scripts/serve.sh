#!/usr/bin/env bash
# One command for a newcomer: set everything up and start the server on the shipped model store.
#   ./scripts/serve.sh [--port 8000] [--host 127.0.0.1] [--model-store model_store]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m service --model-store model_store --host 127.0.0.1 --port 8000 "$@"
