#!/usr/bin/env bash
# Regenerate the gRPC stubs of service/api/grpc/pb/ from service/api/grpc/proto/*.proto.
# Run after editing a .proto; the generated files are committed (the server needs only the
# runtime: grpcio + protobuf). Idempotent.
#
# The pin: grpcio-tools 1.75.1 emits protobuf 6.31 gencode, which runs on protobuf >= 6.31.1
# and < 7 (pyproject's runtime pin) -- the range tritonclient[grpc] also accepts (it needs
# protobuf < 7; grpcio-tools >= 1.76 emits gencode for protobuf 7). The tool lives in its own
# venv (.venv-grpctools) so it never moves the server's protobuf.
#
# Two edits after protoc, both why-driven:
#  * relative imports (protoc writes `import model_config_pb2`, which only works with the
#    output folder on sys.path);
#  * a private descriptor pool: tritonclient registers its own (larger) `inference.*`
#    messages in protobuf's default pool, and two different files defining one symbol in one
#    pool is an error -- a process that imports both (tests, a user's notebook) must work.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS=.venv-grpctools
PIN="grpcio-tools==1.75.1"
if ! "$TOOLS/bin/python" -c "import grpc_tools" 2>/dev/null; then
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/python" -m pip install --quiet "$PIN"
fi
SRC=service/api/grpc/proto
OUT=service/api/grpc/pb
mkdir -p "$OUT"
"$TOOLS/bin/python" -m grpc_tools.protoc -I "$SRC" --python_out="$OUT" --grpc_python_out="$OUT" \
  "$SRC/model_config.proto" "$SRC/grpc_service.proto"
rm -f "$OUT/model_config_pb2_grpc.py"          # no services in it
sed -i 's/^import model_config_pb2 as /from . import model_config_pb2 as /' "$OUT/grpc_service_pb2.py"
sed -i 's/^import grpc_service_pb2 as /from . import grpc_service_pb2 as /' "$OUT/grpc_service_pb2_grpc.py"
for f in "$OUT/model_config_pb2.py" "$OUT/grpc_service_pb2.py"; do
  sed -i 's/_descriptor_pool\.Default()\.AddSerializedFile(/_pool.POOL.AddSerializedFile(/' "$f"
  sed -i 's/^from google.protobuf import descriptor_pool as _descriptor_pool$/&\nfrom . import _pool/' "$f"
done
grep -q "_pool.POOL" "$OUT/grpc_service_pb2.py" || { echo "gen_grpc.sh: pool edit failed" >&2; exit 1; }
echo "generated $(ls "$OUT"/*_pb2*.py | tr '\n' ' ')"
