"""The transport-free core: store + registry + metrics + the inference path.

Routers translate HTTP into calls here; the CLI and tests can use it without a server.
"""
from __future__ import annotations

import asyncio
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Awaitable, Callable

import numpy as np

from framework.base import MXNetError

from ..errors import BadRequest, ServiceError, Timeout, Unavailable
from ..protocol.codec import InferInput, InferRequest, OutputTensor, classify, encode_response
from ..protocol.datatypes import v2_datatype
from ..repository.backend import open_store, recover
from ..repository.blobs import StoreUnavailable
from ..runtime.inspection import inspect_model
from ..runtime.metrics import Metrics
from ..runtime.registry import ModelVersion, Registry
from ..runtime.runner import Runner
from ..runtime.threads import AppliedPolicy
from ..runtime.threads import apply as apply_thread_policy
from ..settings import Settings
from .sync import StoreSync

log = logging.getLogger("hybridserve.core")
_timeout = getattr(asyncio, "timeout", None)


def _timed(fn, arrays):
    t = time.perf_counter_ns()
    out = fn(arrays)
    return out, time.perf_counter_ns() - t


class Core:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.store = open_store(settings.model_store, read_only=settings.store_read_only,
                                stale_s=settings.staging_stale_s,
                                max_config_bytes=settings.max_config_bytes,
                                endpoint_url=settings.s3_endpoint_url,
                                cache_dir=settings.store_cache_dir,
                                cache_bytes=int(settings.store_cache_bytes))
        self.metrics = Metrics()
        self.infer_pool = ThreadPoolExecutor(max(1, settings.inference_threads),
                                             thread_name_prefix="hybridserve-infer")
        self.registry = Registry(self.store, settings, self.metrics, self.infer_pool)
        self.sync = StoreSync(self.store, self.registry, self.metrics, self.mgmt_lock)
        self._mgmt_locks: dict[str, asyncio.Lock] = {}
        self._threads: AppliedPolicy | None = None
        self._poller: asyncio.Task | None = None
        self.store_error: str | None = None      # why the store cannot be read now (readiness)
        self._old_switch: float | None = None
        # run before every store poll (and the startup load): e.g. importing dropped .mar files
        self.before_poll: list[Callable[[Core], Awaitable[None]]] = []

    def mgmt_lock(self, name: str) -> asyncio.Lock:
        return self._mgmt_locks.setdefault(name, asyncio.Lock())

    async def start(self) -> None:
        if self.settings.gil_switch_interval_s > 0:
            self._old_switch = sys.getswitchinterval()
            sys.setswitchinterval(self.settings.gil_switch_interval_s)
        self._threads = apply_thread_policy(self.settings)
        loop = asyncio.get_running_loop()
        if self.store.read_only:
            log.warning("model store %s is read-only: serving it; uploads, deletes and config "
                        "changes will be refused", self.store.location)
        try:
            await self._first_sync()
        except StoreUnavailable as e:
            # an object store down at start: not ready, retried with backoff by the poller
            self._store_failed(e)
        if self.settings.poll_seconds() > 0 or self.store_error is not None:
            self._poller = loop.create_task(self._poll())

    async def _first_sync(self) -> None:
        loop = asyncio.get_running_loop()
        if not self.store.read_only:
            await loop.run_in_executor(None, recover, self.store)
        await self._before_poll()
        if self.settings.load_on_startup:
            await self.sync.tick(force=True)
        else:
            await self.sync.baseline()
        self.registry.initial_load_done = True

    def _store_failed(self, e: StoreUnavailable) -> None:
        if self.store_error != e.message:
            log.error("%s", e.message)
        self.store_error = e.message

    async def _poll(self) -> None:
        failures = 0
        while True:
            # an unreachable store is retried with backoff (poll interval, doubling, ≤ 30 s)
            base = self.settings.poll_seconds() or 1.0
            await asyncio.sleep(min(30.0, base * 2 ** min(failures, 8)) if failures else base)
            try:
                if not self.registry.initial_load_done:
                    await self._first_sync()
                else:
                    await self._before_poll()
                    await self.sync.tick()
                if self.store_error is not None:
                    log.info("model store %s is reachable again", self.store.location)
                self.store_error, failures = None, 0
                if self.settings.poll_seconds() <= 0:
                    return               # polling off: the startup load was all it had to do
            except StoreUnavailable as e:
                self._store_failed(e)
                failures += 1
            except Exception:  # noqa: BLE001 - polling must survive anything
                log.exception("store poll failed")

    async def _before_poll(self) -> None:
        for hook in self.before_poll:
            await hook(self)

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
        await self.registry.close()
        self.infer_pool.shutdown(wait=True)
        if self._threads is not None:
            self._threads.restore()
        if self._old_switch is not None:
            sys.setswitchinterval(self._old_switch)

    # -- inference -----------------------------------------------------------------------------
    async def infer(self, name: str, version: str | None,
                    req: InferRequest) -> tuple[bytes, dict[str, str], str]:
        t0 = time.perf_counter_ns()
        mv = self.registry.get(name, version)
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
            tensors = []
            for k, oname, binary, cls in selected:
                arr = outs[k]
                if cls:
                    arr = classify(arr, cls, runner.transforms.labels.get(runner.outputs[k].name))
                tensors.append(OutputTensor(oname, v2_datatype(arr.dtype), arr, binary))
            resp = encode_response(name, mv.version, req.id, tensors)
            t3 = time.perf_counter_ns()
            # as Triton: compute_input = decoding the request into input tensors (the body's
            # parse, images included), compute_output = encoding the response
            stats.request_done(True, t3 - t0 + req.decode_ns, queue_ns,
                               t1 - t0 + req.decode_ns, t3 - t2, batch or 1)
            latency.observe((t3 - t0) / 1e9)
            return resp
        except Exception as e:
            err = self._client_error(e)
            stats.request_done(False, time.perf_counter_ns() - t0)
            self.metrics.failed(name, mv.version, err.status if err is not None else 500)
            if err is not None and err is not e:
                raise err from None
            raise

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
    def _client_error(e: Exception) -> ServiceError | None:
        """Framework errors during a run are caused by the request's data: 400, not 500."""
        if isinstance(e, ServiceError):
            return e
        if isinstance(e, MXNetError):
            return BadRequest(f"inference failed: {e}"[:2000])
        if isinstance(e, MemoryError):
            return Unavailable("inference failed: not enough memory for this request now")
        return None

    def _select_outputs(self, runner: Runner, req: InferRequest) -> list[tuple]:
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

    async def _execute(self, mv: ModelVersion, arrays: list[np.ndarray], n: int):
        runner = mv.runner
        fl = runner.flops_per_item
        if fl is not None and fl * n <= self.settings.inline_max_flops:
            return _timed(runner.run, arrays)       # cheaper than a thread hop
        return await self._bounded(self._submit(mv, _timed, runner.run, arrays))

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
        cf = self.infer_pool.submit(fn, *args)

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
        mv: ModelVersion = self.registry.get(name, version)
        arrays, _ = mv.runner.validate(await self._prepare(mv, req.inputs))
        s = self.settings
        try:
            return await self._bounded(self._submit(
                mv, inspect_model, mv.runner, arrays, req.parameters,
                s.inspect_max_records, s.inspect_max_values))
        except Exception as e:
            err = self._client_error(e)
            if err is not None and err is not e:
                raise err from None
            raise
