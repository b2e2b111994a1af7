"""`Core`: one serving node without a transport — the store, the registry of loaded models, the
store sync and the data plane (dataplane.py), started and stopped together. The API, the gRPC
server and the tests hold one; `core.infer` is the data plane's `infer`.
"""
from __future__ import annotations

import asyncio
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Awaitable, Callable

from ..repository.backend import open_store, recover
from ..repository.blobs import StoreUnavailable
from ..runtime.metrics import Metrics
from ..runtime.registry import Registry
from ..runtime.threads import AppliedPolicy
from ..runtime.threads import apply as apply_thread_policy
from ..settings import Settings
from .dataplane import DataPlane
from .sync import StoreSync

log = logging.getLogger("hybridserve.server")


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
        self.registry = Registry(self.store, settings, self.metrics, self.infer_pool,
                                 outstanding=lambda: self.data.held)
        self.data = DataPlane(settings, self.metrics, self.infer_pool, self.registry.get)
        self.infer = self.data.infer
        self.inspect = self.data.inspect
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
