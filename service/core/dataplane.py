"""The data plane: the one transport-free `infer` every entry point calls.

A transport — the REST fast path (api/fastpath.py: infer requests answered before routing),
the routed `/infer`, raw bodies (api/raw.py), the CLI (cli/offline.py) and gRPC — does three
things and nothing else:

1. decode its wire format into an `InferRequest` (service/protocol/types.py: inputs as NumPy
   arrays, BYTES as object arrays of `bytes`; requested outputs; parameters), putting the time
   that took in `req.decode_ns`. Checks of the wire itself (auth, body size) are its own.
2. `await infer(name, version, req, encode)` — `version` None: the highest ready version.
   `encode(InferResponse) -> T` turns the typed response into the transport's answer; it runs
   inside `infer`, so its time is the request's compute_output and its failure a failed
   request. Without `encode`, `infer` returns the `InferResponse`.
3. answer an error: `infer` raises only `ServiceError` subclasses (service/errors.py; each
   carries `status` for HTTP, `grpc_code` for gRPC, `message` and `headers`, e.g.
   Retry-After). Anything a transport raises itself becomes one through
   `errors.to_service_error`.

`infer` does the rest, the same for every caller: the model lookup, the count of requests held
(the batcher's closed-loop rule reads it: a batch waits for company only while requests are
held that are not yet queued), image preprocessing, validation against the model's signature,
output selection, the dynamic batcher or one execution (inline when it is cheaper than a thread
hop, else on the inference pool with a bounded queue), the timeout, classification, statistics
and metrics.
"""
from __future__ import annotations

import asyncio
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar, overload

import numpy as np

from ..errors import BadRequest, Timeout, Unavailable, to_service_error
from ..protocol.classification import classify
from ..protocol.datatypes import v2_datatype
from ..protocol.types import InferInput, InferRequest, InferResponse, OutputTensor
from ..runtime.batching import timed
from ..runtime.inspection import inspect_model
from ..runtime.metrics import Metrics
from ..runtime.registry import ModelVersion, State
from ..runtime.runner import Runner
from ..runtime.stats import ModelStats
from ..settings import Settings

T = TypeVar("T")
Lookup = Callable[[str, "str | None"], ModelVersion]
_timeout = getattr(asyncio, "timeout", None)


class DataPlane:
    """`lookup(name, version)` finds the model version to serve (Registry.get); `pool` runs
    what is too heavy for the event loop."""

    def __init__(self, settings: Settings, metrics: Metrics, pool: Executor, lookup: Lookup):
        self.settings, self.metrics, self.pool, self.lookup = settings, metrics, pool, lookup
        self.held = 0               # infer requests inside `infer` now, every model

    @overload
    async def infer(self, name: str, version: str | None, req: InferRequest) -> InferResponse: ...

    @overload
    async def infer(self, name: str, version: str | None, req: InferRequest,
                    encode: Callable[[InferResponse], T]) -> T: ...

    async def infer(self, name, version, req, encode=None):
        self.held += 1              # (in this frame: no extra coroutine per request)
        t0 = time.perf_counter_ns()
        try:
            mv = self.lookup(name, version)
            runner, stats = mv.runner, mv.stats
            requests, latency, queue_hist, batch_hist = self.metrics.model(name, mv.version)
            requests.inc()
            try:
                arrays, batch = runner.validate(await self._prepare(mv, req.inputs))
                selected = self._select_outputs(runner, req)
                t1 = time.perf_counter_ns()
                queue_ns = 0
                if mv.batcher is not None and batch:
                    outs, queue_ns, _ = await self._bounded(mv.batcher.submit(arrays, batch))
                    queue_hist.observe(queue_ns / 1e9)
                else:
                    outs, infer_ns = await self._execute(mv, arrays, batch or 1)
                    stats.execution(batch or 1, infer_ns)
                    batch_hist.observe(batch or 1)
                t2 = time.perf_counter_ns()
                resp = InferResponse(name, mv.version, req.id,
                                     self._outputs(runner, outs, selected))
                out = resp if encode is None else encode(resp)
                t3 = time.perf_counter_ns()
                # as Triton: compute_input = decoding the request into input tensors (the
                # wire's parse, images included), compute_output = the outputs and their
                # encoding
                stats.request_done(True, t3 - t0 + req.decode_ns, queue_ns,
                                   t1 - t0 + req.decode_ns, t3 - t2, batch or 1)
                latency.observe((t3 - t0) / 1e9)
                return out
            except Exception as e:  # noqa: BLE001 - each failure: counted, raised as a ServiceError
                err = to_service_error(e, "inference failed", f"infer {name}/{mv.version}")
                stats.request_done(False, time.perf_counter_ns() - t0)
                self.metrics.failed(name, mv.version, err.status)
                if err is e:
                    raise
                raise err from None
        finally:
            self.held -= 1

    async def _prepare(self, mv: ModelVersion, inputs: list[InferInput]) -> list[InferInput]:
        """Decode encoded images of inputs that declare preprocessing (on the inference pool:
        decoding is the request's heaviest work after the forward)."""
        tf = mv.runner.transforms
        if not tf.images or not any(i.datatype == "BYTES" and i.name in tf.images
                                    for i in inputs):
            return inputs
        return await self._bounded(self._submit(mv, tf.apply, inputs,
                                                self.settings.max_image_pixels))

    @staticmethod
    def _select_outputs(runner: Runner, req: InferRequest) -> list[tuple]:
        """(output index, name, binary, top-K) of each output to answer."""
        if req.outputs is None:
            return [(k, s.name, req.binary_output, 0) for k, s in enumerate(runner.outputs)]
        sel = []
        for ro in req.outputs:
            k = runner.output_index.get(ro.name)
            if k is None:
                raise BadRequest(f"unexpected inference output '{ro.name}' for model "
                                 f"'{runner.name}'; outputs are {list(runner.output_index)}")
            sel.append((k, ro.name, req.binary_output if ro.binary is None else ro.binary,
                        ro.classification))
        return sel

    @staticmethod
    def _outputs(runner: Runner, outs: list[np.ndarray], selected: list[tuple]
                 ) -> list[OutputTensor]:
        tensors = []
        for k, oname, binary, cls in selected:
            arr = outs[k]
            if cls:
                arr = classify(arr, cls, runner.transforms.labels.get(runner.outputs[k].name))
            tensors.append(OutputTensor(oname, v2_datatype(arr.dtype), arr, binary))
        return tensors

    async def _execute(self, mv: ModelVersion, arrays: list[np.ndarray], n: int):
        runner = mv.runner
        fl = runner.flops_per_item
        if fl is not None and fl * n <= self.settings.inline_max_flops:
            return timed(runner.run, arrays)       # cheaper than a thread hop
        return await self._bounded(self._submit(mv, timed, runner.run, arrays))

    def _submit(self, mv: ModelVersion, fn, *args) -> asyncio.Future:
        """Run `fn` in the inference pool, admitting at most the model's queue length (plus
        one per thread) at once: beyond it 503 + Retry-After instead of an unbounded queue.
        A request that timed out still counts until its thread is done with it."""
        db = mv.runner.config.dynamic_batching
        limit = ((db.max_queue_size if db and db.max_queue_size else None)
                 or self.settings.default_max_queue_size) + self.settings.inference_threads
        if mv.inflight >= limit:
            raise Unavailable(f"model '{mv.name}' has {mv.inflight} requests queued or running "
                              f"(limit {limit}); retry later")
        mv.inflight += 1
        loop = asyncio.get_running_loop()
        cf = self.pool.submit(fn, *args)

        def done() -> None:
            mv.inflight -= 1

        def on_done(_f) -> None:
            try:
                loop.call_soon_threadsafe(done)
            except RuntimeError:            # loop closed: shutting down
                pass
        cf.add_done_callback(on_done)
        return asyncio.wrap_future(cf)

    async def _bounded(self, aw):
        t = self.settings.inference_timeout_s
        if not t:
            return await aw
        try:
            if _timeout is not None:       # 3.11+: a timer handle, no extra task per request
                async with _timeout(t):
                    return await aw
            return await asyncio.wait_for(aw, t)
        except (asyncio.TimeoutError, TimeoutError):
            raise Timeout(f"inference did not finish within {t} s") from None

    # -- inspection ----------------------------------------------------------------------------
    async def inspect(self, name: str, version: str | None, req: InferRequest) -> dict:
        """Per-op tensor records of one request (op hooks on the traced graph)."""
        mv = self.lookup(name, version)
        arrays, _ = mv.runner.validate(await self._prepare(mv, req.inputs))
        s = self.settings
        return await self._bounded(self._submit(
            mv, inspect_model, mv.runner, arrays, req.parameters,
            s.inspect_max_records, s.inspect_max_values, s.inspect_max_response_bytes))


@contextmanager
def serving(runner: Runner, settings: Settings | None = None) -> Iterator[DataPlane]:
    """A data plane over one loaded runner, without a store or a server (the CLI): the same
    checks, execution and errors as the server, no deadline, no batcher (one request)."""
    s = (settings or Settings()).model_copy(update={"inference_timeout_s": 0})
    mv = ModelVersion(runner.name, runner.version, State.READY, runner=runner,
                      stats=ModelStats(runner.name, runner.version))

    def lookup(name: str, version: str | None) -> ModelVersion:
        return mv

    pool = ThreadPoolExecutor(1, thread_name_prefix="hybridserve-infer")
    try:
        yield DataPlane(s, Metrics(), pool, lookup)
    finally:
        pool.shutdown(wait=True)
