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

from ..repository.recovery import recover
from ..repository.store import ModelStore
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
        self.store = ModelStore(settings.resolved_store(), read_only=settings.store_read_only,
                                stale_s=settings.staging_stale_s,
                                max_config_bytes=settings.max_config_bytes)
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
                        "changes will be refused", self.store.root)
        else:
            await loop.run_in_executor(None, recover, self.store)
        await self._before_poll()
        if self.settings.load_on_startup:
            await self.sync.tick(force=True)
        else:
            await self.sync.baseline()
        self.registry.initial_load_done = True
        if self.settings.poll_seconds() > 0:
            self._poller = loop.create_task(self._poll())

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.settings.poll_seconds())
            try:
                await self._before_poll()
                await self.sync.tick()
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
