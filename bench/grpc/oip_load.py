#!/usr/bin/env python
"""A load client of our own for any Open Inference Protocol server: N concurrent ModelInfer
calls over gRPC (or POST .../infer with Triton's binary tensor extension over HTTP/1.1), for a
fixed duration or a fixed count, closed loop; prints req/s.

    python bench/grpc/oip_load.py --url 127.0.0.1:8001 --model mlp --shape 1,512 \
        [--concurrency 4] [--seconds 5 | --requests 5000] [--http] [--json]

It exists because Triton's perf_analyzer cannot drive MLServer (it calls Triton's ModelConfig
first, which MLServer lacks); the same client loads hybridserve and MLServer alike
(bench/grpc/mlserver_bench.py). Each request is serialized once and sent as bytes (gRPC: a
generic unary call with no serializer; HTTP: one prebuilt request on a keep-alive connection
per concurrent caller), so the client spends little CPU beside the server. The first answer
of each caller is parsed and checked (shape of the output); later ones only for a status.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from service.api.grpc.pb import grpc_service_pb2 as pb        # noqa: E402

METHOD = "/inference.GRPCInferenceService/ModelInfer"


def infer_request(model: str, name: str, x: np.ndarray, datatype: str) -> pb.ModelInferRequest:
    msg = pb.ModelInferRequest(model_name=model)
    msg.inputs.add(name=name, datatype=datatype, shape=x.shape)
    msg.raw_input_contents.append(x.tobytes())
    return msg


def check_grpc(raw: bytes) -> tuple[int, ...]:
    resp = pb.ModelInferResponse.FromString(raw)
    if not resp.outputs or (len(resp.raw_output_contents) != len(resp.outputs)
                            and not resp.outputs[0].HasField("contents")):
        raise RuntimeError(f"unexpected answer: {resp}"[:500])
    return tuple(resp.outputs[0].shape)


def http_request(host: str, model: str, name: str, x: np.ndarray, datatype: str) -> bytes:
    head = json.dumps({"inputs": [{"name": name, "datatype": datatype, "shape": list(x.shape),
                                   "parameters": {"binary_data_size": x.nbytes}}],
                       "parameters": {"binary_data_output": True}}).encode()
    body = head + x.tobytes()
    return (f"POST /v2/models/{model}/infer HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/octet-stream\r\n"
            f"Inference-Header-Content-Length: {len(head)}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def _http_call(reader, writer, request: bytes) -> tuple[bytes, int]:
    """(body, length of its JSON header)"""
    writer.write(request)
    status = await reader.readline()
    length = None
    hlen = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        k, _, v = line.partition(b":")
        k = k.strip().lower()
        if k == b"content-length":
            length = int(v)
        elif k == b"inference-header-content-length":
            hlen = int(v)
    body = await reader.readexactly(length or 0)
    if b" 200 " not in status:
        raise RuntimeError(f"HTTP {status!r}: {body[:300]!r}")
    return body, hlen or len(body)


async def run(url: str, model: str, name: str, x: np.ndarray, datatype: str, conc: int,
              seconds: float | None, requests: int | None, http: bool,
              warmup: int = 20) -> dict:
    """Closed loop; returns {"requests", "seconds", "rps", "errors", "output_shape"}."""
    counts = [0] * conc
    errors: list[str] = []
    budget = [requests if requests is not None else 1 << 62]
    stop_at = [float("inf")]
    shapes: list[tuple] = []

    if http:
        host, port = url.rsplit(":", 1)
        req = http_request(url, model, name, x, datatype)

        async def caller(k: int) -> None:
            reader, writer = await asyncio.open_connection(host, int(port))
            try:
                body, hlen = await _http_call(reader, writer, req)
                shapes.append(tuple(json.loads(body[:hlen])["outputs"][0]["shape"]))
                for _ in range(warmup):
                    await _http_call(reader, writer, req)
                await ready.wait()
                while budget[0] > 0 and time.perf_counter() < stop_at[0]:
                    budget[0] -= 1
                    await _http_call(reader, writer, req)
                    counts[k] += 1
            finally:
                writer.close()
    else:
        import grpc
        raw = infer_request(model, name, x, datatype).SerializeToString()
        channels = [grpc.aio.insecure_channel(
            url, options=[("grpc.max_receive_message_length", -1),
                          ("grpc.use_local_subchannel_pool", 1)]) for _ in range(conc)]

        async def caller(k: int) -> None:
            call = channels[k].unary_unary(METHOD)
            shapes.append(check_grpc(await call(raw)))
            for _ in range(warmup):
                await call(raw)
            await ready.wait()
            while budget[0] > 0 and time.perf_counter() < stop_at[0]:
                budget[0] -= 1
                await call(raw)
                counts[k] += 1

    ready = asyncio.Event()

    async def guarded(k: int) -> None:
        try:
            await caller(k)
        except Exception as e:  # noqa: BLE001 - reported, the others go on
            errors.append(repr(e)[:300])

    tasks = [asyncio.create_task(guarded(k)) for k in range(conc)]
    while len(shapes) + len(errors) < conc:          # every caller connected and warmed
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05 + 0.002 * warmup)
    t0 = time.perf_counter()
    if seconds is not None:
        stop_at[0] = t0 + seconds
    ready.set()
    await asyncio.gather(*tasks)
    took = time.perf_counter() - t0
    if not http:
        for c in channels:
            await c.close()
    n = sum(counts)
    return {"requests": n, "seconds": took, "rps": n / took if took else 0.0,
            "errors": errors, "output_shape": shapes[0] if shapes else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True, help="host:port (gRPC, or HTTP with --http)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", default="data")
    ap.add_argument("--shape", default="1,512")
    ap.add_argument("--datatype", default="FP32")
    ap.add_argument("--concurrency", type=int, default=4)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--seconds", type=float)
    g.add_argument("--requests", type=int)
    ap.add_argument("--http", action="store_true", help="HTTP binary tensors instead of gRPC")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    a = ap.parse_args()
    shape = tuple(int(s) for s in a.shape.split(","))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    seconds = a.seconds if a.seconds is not None or a.requests is not None else 5.0
    r = asyncio.run(run(a.url, a.model, a.input, x, a.datatype, a.concurrency,
                        seconds if a.requests is None else None, a.requests, a.http))
    if a.json:
        print(json.dumps(r))
    else:
        print(f"{a.model} {'http' if a.http else 'grpc'} c={a.concurrency}: {r['requests']} "
              f"requests in {r['seconds']:.2f} s = {r['rps']:.0f} req/s, output "
              f"{r['output_shape']}, errors {len(r['errors'])} {r['errors'][:1]}")
    return 1 if r["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
