"""The data plane without a transport: `core.infer` called directly (as the CLI and gRPC do)
gets the same typed response, batching policy, statistics and errors as a REST request."""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import numpy as np
import pytest

from serverproc import copy_store
from service.core import Core
from service.errors import BadRequest, NotFound
from service.protocol.codec import encode_response
from service.protocol.types import InferInput, InferRequest, InferResponse, RequestedOutput
from service.settings import Settings


def _store(tmp_path: Path, delay_us: int) -> Path:
    store = copy_store(tmp_path / "store", ("mlp",))
    cfg = json.loads((store / "mlp" / "config.json").read_text())
    cfg["dynamic_batching"] = {"max_queue_delay_microseconds": delay_us,
                               "preferred_batch_size": [8]}
    (store / "mlp" / "config.json").write_text(json.dumps(cfg))
    return store


def _request(x: np.ndarray, rid: str | None = None, **kw) -> InferRequest:
    return InferRequest(rid, [InferInput("data", "FP32", x.shape, x)], **kw)


def _serve(tmp_path: Path, delay_us: int, body) -> None:
    """Run `body(core)` (a coroutine function) on a started core over a copy of the mlp."""
    async def go():
        core = Core(Settings(model_store=_store(tmp_path, delay_us), inference_threads=2,
                             store_poll_s=0, log_level="warning"))
        await core.start()
        try:
            await body(core)
        finally:
            await core.stop()
    asyncio.run(go())


def _slow(core: Core, seconds: float, seen: list[int] | None = None) -> None:
    """The mlp's batcher runs on a thread and takes `seconds` per execution, recording how
    many requests its closed-loop rule sees held by the server."""
    batcher = core.registry.get("mlp").batcher
    run = batcher._run

    def slow(arrays):
        time.sleep(seconds)
        if seen is not None:
            seen.append(batcher._outstanding())
        return run(arrays)
    batcher._run, batcher._inline = slow, (lambda n: False)


def test_direct_callers_count_for_the_batching_policy(tmp_path):
    """Requests held by `infer` itself are what the batcher's closed-loop rule counts: four
    concurrent direct calls are seen as four, whoever the caller is."""
    seen: list[int] = []

    async def body(core: Core):
        _slow(core, 0.05, seen)
        x = np.ones((1, 512), np.float32)
        outs = await asyncio.gather(*(core.infer("mlp", None, _request(x)) for _ in range(4)))
        assert all(o.outputs[0].array.shape == (1, 2) for o in outs)
        assert core.data.held == 0

    _serve(tmp_path, 300_000, body)
    assert seen and max(seen) == 4, seen


def test_closed_loop_direct_callers_are_not_kept_waiting(tmp_path):
    """As over HTTP (tests/service/runtime/test_batching.py): two callers that each await their
    answer before sending again never make a batch gather for the whole max delay."""
    async def client(core: Core):
        for _ in range(6):
            await core.infer("mlp", None, _request(np.zeros((1, 512), np.float32)))

    async def body(core: Core):
        _slow(core, 0.05)
        await asyncio.gather(client(core), client(core))
        st = core.registry.get("mlp").stats.doc()["inference_stats"]
        assert st["success"]["count"] == 12
        assert st["queue"]["ns"] / st["queue"]["count"] < 100e6, st["queue"]   # ≪ 300 ms

    _serve(tmp_path, 300_000, body)


def test_typed_response_and_transport_encoding(tmp_path):
    async def body(core: Core):
        x = np.random.default_rng(0).standard_normal((3, 512)).astype(np.float32)
        resp = await core.infer("mlp", None, _request(x, "r1"))
        assert isinstance(resp, InferResponse)
        assert (resp.model_name, resp.model_version, resp.id) == ("mlp", "1", "r1")
        (out,) = resp.outputs
        assert (out.name, out.datatype, out.array.shape, out.binary) == ("output", "FP32",
                                                                          (3, 2), False)
        top = await core.infer("mlp", None, _request(x, outputs=[RequestedOutput(
            "output", binary=True, classification=1)]))
        (cls,) = top.outputs
        assert cls.datatype == "BYTES" and cls.binary and cls.array.shape == (3, 1)
        best = out.array.argmax(axis=1)
        assert [int(v.split(b":")[1]) for v in cls.array[:, 0]] == best.tolist()
        # a transport's encoder runs inside infer: its answer is what infer returns
        body_, headers, media = await core.infer("mlp", None, _request(x), encode_response)
        assert media == "application/json" and json.loads(body_)["outputs"][0]["shape"] == [3, 2]
        st = core.registry.get("mlp").stats.doc()["inference_stats"]
        assert st["success"]["count"] == 3 and st["compute_output"]["ns"] > 0

    _serve(tmp_path, 1000, body)


def test_errors_are_service_errors_and_counted(tmp_path):
    async def body(core: Core):
        with pytest.raises(NotFound):
            await core.infer("nope", None, _request(np.zeros((1, 512), np.float32)))
        with pytest.raises(BadRequest, match="unexpected shape"):
            await core.infer("mlp", None, _request(np.zeros((1, 7), np.float32)))
        with pytest.raises(BadRequest, match="unexpected inference output 'y'"):
            await core.infer("mlp", None, _request(np.zeros((1, 512), np.float32),
                                                   outputs=[RequestedOutput("y")]))
        assert core.data.held == 0
        st = core.registry.get("mlp").stats.doc()["inference_stats"]
        assert st["fail"]["count"] == 2
        failures = [ln for ln in core.metrics.render().decode().splitlines()
                    if ln.startswith("hybridserve_") and 'model="mlp"' in ln and '"400"' in ln]
        assert failures and float(failures[0].split()[-1]) == 2, failures

    _serve(tmp_path, 1000, body)
