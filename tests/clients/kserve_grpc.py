"""Run by tests/service/api/test_grpc_kserve.py in .venv-clients (KServe's SDK pins its own
protobuf): drives a hybridserve gRPC port with KServe's InferenceGRPCClient and prints one JSON
document of what it got back. Usage: kserve_grpc.py HOST:PORT INPUT.npy"""
from __future__ import annotations

import asyncio
import json
import sys

import grpc
import numpy as np
from kserve import InferenceGRPCClient, InferInput, InferRequest


async def main(url: str, path: str) -> dict:
    x = np.load(path)
    out: dict = {}
    async with InferenceGRPCClient(url, timeout=30, retries=2) as c:
        out["live"] = await c.is_server_live()
        out["ready"] = await c.is_server_ready()
        out["model_ready"] = await c.is_model_ready("mlp")
        for binary in (True, False):        # raw_input_contents, then typed contents
            i = InferInput("data", list(x.shape), "FP32")
            i.set_data_from_numpy(x, binary_data=binary)
            resp = await c.infer(InferRequest("mlp", [i], request_id=f"k{binary}"))
            (o,) = resp.outputs
            out[f"output_{'raw' if binary else 'typed'}"] = o.as_numpy().tolist()
            out[f"id_{'raw' if binary else 'typed'}"] = resp.id
        try:
            await c.infer(InferRequest("nope", [i]))
        except grpc.RpcError as e:
            out["error"] = [e.code().name, e.details()]
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
