"""The Open Inference Protocol's gRPC API (`inference.GRPCInferenceService`) with the Triton
extensions tritonclient.grpc calls: a thin adapter over the same core as HTTP.

proto/   the .proto files (wire facts from the published specifications)
pb/      stubs generated from them by scripts/gen_grpc.sh (committed)
codec    protobuf tensors <-> NumPy
status   exceptions -> gRPC status codes, the bearer token from call metadata
servicer the RPCs
server   the grpc.aio server the app's lifespan starts and drains
"""
