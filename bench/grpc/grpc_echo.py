#!/usr/bin/env python
"""The floor under hybridserve's gRPC: a bare `grpc.aio` server (uvloop, as `serve` runs) whose
ModelInfer answers a fixed, pre-serialized MLP response without reading the request. What it
costs per call is grpcio's own machinery; bench/grpc/cpu_per_request.py --floor measures it.

    python bench/grpc/grpc_echo.py PORT
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import grpc
import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from service.api.grpc.pb import grpc_service_pb2 as pb        # noqa: E402

_resp = pb.ModelInferResponse(model_name="mlp", model_version="1")
_resp.outputs.add(name="output", datatype="FP32", shape=[1, 2])
_resp.raw_output_contents.append(bytes(8))
ANSWER = _resp.SerializeToString()


async def model_infer(raw: bytes, context) -> bytes:
    return ANSWER


async def main(port: int) -> None:
    server = grpc.aio.server(options=[("grpc.enable_channelz", 0)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "inference.GRPCInferenceService",
        {"ModelInfer": grpc.unary_unary_rpc_method_handler(model_infer)}),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1])))
