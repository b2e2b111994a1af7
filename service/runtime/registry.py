"""Loaded models: name → version → runner (+ batcher, stats), with their states.

Loads run in a dedicated thread pool, so loading (parsing, compiling, warming) one model never
blocks the event loop or inference on other models; a reload keeps the old version serving
until the new one is ready, and a failed reload leaves it in place.
"""
from __future__ import annotations

import asyncio
import logging
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Callable

from ..errors import (BadRequest, InsufficientStorage, NotFound, ServiceError, Unavailable,
                      VersionUnavailable)
from ..repository.config import ModelConfig, VersionPolicy
from ..repository.backend import Store
from ..repository.store import ModelFiles, check_name
from ..settings import Settings
from . import memory
from .batching import Batcher
from .metrics import Metrics
from .runner import Runner
from .stats import ModelStats
from .threads import ort_options
from .warmup import warm_runner

log = logging.getLogger("hybridserve.registry")


class State(str, Enum):
    LOADING = "LOADING"
    READY = "READY"
    UNLOADING = "UNLOADING"
    UNAVAILABLE = "UNAVAILABLE"
    FAILED = "FAILED"


@dataclass
class ModelVersion:
    name: str
    version: str
    state: State = State.UNAVAILABLE
    reason: str = ""
    runner: Runner | None = None
    batcher: Batcher | None = None
    stats: ModelStats | None = None
    loaded_at: float = field(default_factory=time.time)
    ident: tuple | None = None          # the version directory's identity when loaded
    inflight: int = 0                   # unbatched requests admitted and not yet finished
    excluded: bool = False              # on disk, outside the version policy: not served
    load_memory: int = 0                # bytes its runner held when loaded (measured)

    @property
    def memory(self) -> int:
        """Bytes its runner holds: measured at load, plus the onnxruntime sessions built
        since for new input shapes (bounded by the shape cache)."""
        r = self.runner
        return self.load_memory + (r.specialized_bytes() if r is not None else 0)


def load_limits(s: Settings) -> dict:
    """Runner.load's keyword limits from the settings."""
    return dict(max_nodes=s.max_graph_nodes, max_params_bytes=s.max_params_bytes,
                max_symbol_bytes=s.max_symbol_bytes, max_json_depth=s.max_json_depth,
                max_tensor_elements=s.max_tensor_elements,
                max_activation_bytes=s.max_activation_bytes,
                default_max_batch_size=s.default_max_batch_size, optimize=s.optimize_graphs,
                buffer_sets=max(1, s.inference_threads), engine=s.engine, ort=ort_options(s))


class Registry:
    def __init__(self, store: Store, settings: Settings, metrics: Metrics,
                 infer_pool: ThreadPoolExecutor, outstanding: Callable[[], int] | None = None):
        """`outstanding()`: the inference requests the server holds now (every model), for
        the batchers' closed-loop rule (Batcher's `outstanding`)."""
        self.store, self.settings, self.metrics = store, settings, metrics
        self.infer_pool = infer_pool
        self.load_pool = ThreadPoolExecutor(max(1, settings.load_threads),
                                            thread_name_prefix="hybridserve-load")
        self.models: dict[str, dict[str, ModelVersion]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.unloaded: set[str] = set()     # explicitly unloaded here
        self.notes: dict[str, str] = {}     # model → why something for it was refused (index)
        self.initial_load_done = False      # server readiness: the startup load finished
        self.outstanding = outstanding
        self.budget = (int(settings.memory_budget) if settings.memory_budget is not None
                       else memory.default_budget(settings.memory_budget_fraction))
        # every runner loaded and still alive (serving, retired with requests in flight, or
        # validated and not yet installed) → the bytes measured at its load
        self._costs: weakref.WeakKeyDictionary[Runner, int] = weakref.WeakKeyDictionary()
        metrics.memory_budget.set_function(lambda: self.budget)
        metrics.memory_held.set_function(self.memory_held)

    def memory_held(self) -> int:
        return sum(cost + r.specialized_bytes() for r, cost in list(self._costs.items()))

    def _check_budget(self, name: str, version: str, cost: int, what: str) -> None:
        held = self.memory_held()
        if self.budget and held + cost > self.budget:
            raise InsufficientStorage(
                f"cannot load model '{name}' version {version}: it {what} {memory.mib(cost)} "
                f"and the loaded model versions hold {memory.mib(held)}, over the memory budget "
                f"of {memory.mib(self.budget)} (HYBRIDSERVE_MEMORY_BUDGET); unload or delete a "
                "version, or raise the budget")

    def lock(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())

    # -- lookups (hot path) --------------------------------------------------------------------
    def get(self, name: str, version: str | None = None) -> ModelVersion:
        """The version that serves a request. A model that is gone (deleted here or by another
        replica) is 404; one that exists but cannot serve now (not loaded, loading, failed,
        unloading) is 503 with the reason: never 400, which tells clients not to retry."""
        entries = self.models.get(name)
        if not entries:
            if self._on_disk(name):
                why = "unloaded" if name in self.unloaded else "not loaded"
                raise Unavailable(f"model '{name}' is not available ({why})")
            raise NotFound(f"Model with name '{name}' does not exist.")
        if version is None:
            ready = [mv for mv in entries.values() if mv.state is State.READY]
            if ready:
                return max(ready, key=lambda mv: int(mv.version))
            mv = max(entries.values(), key=lambda mv: int(mv.version))
        else:
            mv = entries.get(version)
            if mv is None:
                if version in self._versions_on_disk(name):     # not picked up here yet
                    raise Unavailable(f"model '{name}' version {version} is not loaded yet")
                raise NotFound(f"model '{name}' has no version '{version}'")
        if mv.state is not State.READY:
            self._not_ready(mv)
        return mv

    def _not_ready(self, mv: ModelVersion) -> None:
        """Raise why a known version cannot serve (the cold path of `get`)."""
        name = mv.name
        if mv.excluded:       # Triton's words and status for a version it does not serve
            raise VersionUnavailable(f"Request for unknown model: '{name}' version "
                                     f"{mv.version} is not at ready state ({mv.reason})")
        if not self._on_disk(name):          # being deleted (here or by another replica)
            raise NotFound(f"Model with name '{name}' does not exist.")
        why = f": {mv.reason}" if mv.reason else ""
        if mv.state is State.LOADING:
            raise Unavailable(f"model '{name}' version {mv.version} is still loading")
        raise Unavailable(f"model '{name}' version {mv.version} is not available "
                          f"({mv.state.value}{why})"[:2000])

    def _on_disk(self, name: str) -> bool:
        try:
            return self.store.exists(name)
        except ServiceError:
            return False

    def _versions_on_disk(self, name: str) -> list[str]:
        try:
            return self.store.versions(name)
        except (ServiceError, OSError):
            return []

    def ready_versions(self, name: str) -> list[str]:
        return sorted((v for v, mv in self.models.get(name, {}).items()
                       if mv.state is State.READY), key=int)

    def all_ready(self) -> bool:
        """Server readiness: the startup load finished. A model that failed does not make the
        whole server unready (it would never recover), nor does a model loading later (an
        upload being converged on every replica must not take them all out of a balancer);
        each model's own ready endpoint reports it."""
        return self.initial_load_done

    # -- lifecycle -----------------------------------------------------------------------------
    async def load(self, name: str, config: ModelConfig | None = None,
                   only: set[str] | None = None, plain: bool = False) -> list[ModelVersion]:
        """(Re)load the versions of a model that its version policy serves (all of them, or
        `only` those), then unload the ones it does not and retire versions gone from disk.
        Without `config`: the store's effective config, or with `plain` config.json alone
        (a plain load ends a load's override, also for a model without config.json).
        Raises if none of them becomes ready."""
        check_name(name)
        self.unloaded.discard(name)
        async with self.lock(name):
            versions = self.store.versions(name)
            if not versions:
                raise NotFound(f"model '{name}' has no versions in the model store")
            entries = self.models.setdefault(name, {})
            try:
                cfg = (config if config is not None else self.store.read_config(name)
                       if plain else self.store.effective_config(name))
            except ServiceError as e:
                for v in versions if only is None else [v for v in versions if v in only]:
                    entries[v] = ModelVersion(name, v, State.FAILED, e.message)
                raise
            policy = cfg.version_policy if cfg is not None else VersionPolicy()
            served = policy.select(versions)
            if not served:
                raise BadRequest(f"the version policy of model '{name}' ({policy.describe()}) "
                                 f"selects none of its versions {versions}"[:2000])
            todo = served if only is None else [v for v in served if v in only]
            results = await asyncio.gather(*(self._load_version(name, v, cfg) for v in todo))
            await self._apply_policy(name, versions, served, policy)
            self.metrics.loaded.set(self._count_ready())
            errors = [r for r in results if isinstance(r, ServiceError)]
            if errors and len(errors) == len(results):
                raise errors[0]
            return [entries[v] for v in todo]

    async def _apply_policy(self, name: str, versions: list[str], served: list[str],
                            policy: VersionPolicy) -> None:
        """After the served versions were loaded: unload the versions outside the policy —
        only once one the policy serves is READY, so a model never stops answering because
        its new version failed — and retire versions gone from disk."""
        entries = self.models[name]
        for v in [v for v in entries if v not in versions]:
            await self._retire(entries.pop(v))
        if not any(entries.get(v) is not None and entries[v].state is State.READY
                   for v in served):
            return
        reason = f"not in the version policy ({policy.describe()})"
        for v in versions:
            if v in served:
                continue
            mv = entries.get(v)
            if mv is not None and mv.runner is not None:
                await self._retire(mv)
            entries[v] = ModelVersion(name, v, State.UNAVAILABLE, reason, excluded=True)

    async def load_runner(self, name: str, version: str, files: ModelFiles,
                          cfg: ModelConfig | None) -> Runner:
        """Load and warm one version in the load pool, with the server's limits, measuring
        what it holds; refused (507) when that would take the loaded versions over the
        memory budget — before loading when its parameters alone would. Any other failure
        is the model's, never the server's: a ServiceError (400 for a model that does not
        load)."""
        if files.params is not None:
            self._check_budget(name, version, Path(files.params).stat().st_size, "needs at least")
        loop = asyncio.get_running_loop()
        try:
            limits = load_limits(self.settings)
            runner, cost = await loop.run_in_executor(self.load_pool, lambda: memory.measured(
                lambda: Runner.load(name, version, files, cfg, **limits),
                warm=lambda: warm_runner(limits)))
        except ServiceError:
            raise
        except MemoryError:
            raise InsufficientStorage(f"cannot load model '{name}' version {version}: not "
                                      "enough memory") from None
        except Exception as e:  # noqa: BLE001 - framework errors and model bugs alike
            log.warning("loading %s/%s failed", name, version, exc_info=True)
            raise BadRequest(f"cannot load model: {type(e).__name__}: {e}"[:2000]) from None
        try:
            self._check_budget(name, version, cost, "holds")
        except InsufficientStorage:
            del runner
            await loop.run_in_executor(self.load_pool, memory.trim)
            raise
        self._costs[runner] = cost
        return runner

    async def _load_version(self, name: str, version: str, cfg: ModelConfig | None):
        entries = self.models[name]
        old = entries.get(version)
        if old is None or old.state is not State.READY:
            entries[version] = ModelVersion(name, version, State.LOADING)
        ident = None
        try:
            ident = self.store.version_ident(name, version)
            # an object store downloads the files (its read cache): off the event loop
            files = await asyncio.get_running_loop().run_in_executor(
                self.load_pool, self.store.files, name, version)
            runner = await self.load_runner(name, version, files, cfg)
        except ServiceError as e:
            return self._load_failed(name, version, old, e, ident)
        mv = await self._serve(name, version, runner, ident)
        log.info("loaded %s/%s in %.3fs (warm=%s)", name, version, runner.load_seconds, runner.warm)
        return mv

    async def install(self, name: str, version: str, runner: Runner,
                      ident: tuple | None = None) -> ModelVersion:
        """Serve a runner that was already loaded and validated (e.g. by an upload)."""
        async with self.lock(name):
            self.unloaded.discard(name)
            runner.version = version
            mv = await self._serve(name, version, runner, ident)
            versions = self.store.versions(name)
            policy = runner.config.version_policy
            await self._apply_policy(name, versions, policy.select(versions), policy)
            self.metrics.loaded.set(self._count_ready())
            return mv

    async def _serve(self, name: str, version: str, runner: Runner,
                     ident: tuple | None) -> ModelVersion:
        """Put a loaded runner in service as `version`; the runner it replaces (if any) is
        retired once the new one is in place."""
        entries = self.models.setdefault(name, {})
        old = entries.get(version)
        mv = ModelVersion(name, version, State.READY, runner=runner,
                          stats=ModelStats(name, version), ident=ident,
                          load_memory=self._costs.get(runner, 0))
        self.metrics.model_memory.labels(name, version).set_function(lambda: mv.memory)
        self.metrics.set_engine(name, version, runner.engine.name, runner.engine.precision)
        mv.batcher = self._make_batcher(mv)
        entries[version] = mv
        self.metrics.load_time.labels(name).observe(runner.load_seconds)
        if old is not None and old.runner is not None:
            await self._retire(old)
        return mv

    def _load_failed(self, name: str, version: str, old: ModelVersion | None, e: ServiceError,
                     ident: tuple | None = None):
        self.metrics.load_failures.labels(name).inc()
        log.error("loading %s/%s failed: %s", name, version, e.message)
        if old is None or old.state is not State.READY:
            self.models[name][version] = ModelVersion(name, version, State.FAILED, e.message,
                                                      ident=ident)
        return e

    def _make_batcher(self, mv: ModelVersion) -> Batcher | None:
        r = mv.runner
        db = r.config.dynamic_batching
        if db is None or r.max_batch_size <= 0:
            return None
        stats, metrics, name, version = mv.stats, self.metrics, mv.name, mv.version

        def on_execution(size: int, ns: int, requests: int) -> None:
            stats.execution(size, ns, requests)
            # looked up each time: a reload of the same version forgets the old version's
            # series after the new batcher exists, and a series held here would be orphaned
            metrics.model(name, version)[3].observe(size)

        limit = self.settings.inline_max_flops
        b = Batcher(r.run, self.infer_pool, r.max_batch_size, db.max_queue_delay_microseconds,
                    db.preferred_batch_size, db.max_queue_size or self.settings.default_max_queue_size,
                    self.settings.inference_threads, on_execution,
                    inline=lambda n: r.flops_per_item is not None and r.flops_per_item * n <= limit,
                    outstanding=self.outstanding)
        b.start()
        return b

    async def _retire(self, mv: ModelVersion) -> None:
        """Stop serving a version and give its memory back: every reference the registry
        holds (runner, batcher and its callbacks, stats, metric series) is dropped, then the
        allocator is trimmed."""
        mv.state = State.UNLOADING
        if mv.batcher is not None:
            await mv.batcher.stop()
        mv.runner = mv.batcher = mv.stats = None
        mv.load_memory = 0
        mv.state = State.UNAVAILABLE
        self.metrics.forget(mv.name, mv.version)
        await asyncio.get_running_loop().run_in_executor(self.load_pool, memory.trim)

    async def unload(self, name: str) -> None:
        check_name(name)
        async with self.lock(name):
            entries = self.models.get(name)
            if entries is None:
                if not self._on_disk(name):
                    raise NotFound(f"Model with name '{name}' does not exist.")
                return
            self.unloaded.add(name)
            for mv in entries.values():
                if mv.runner is not None:
                    await self._retire(mv)
                mv.state, mv.reason, mv.excluded = State.UNAVAILABLE, "unloaded", False
            self.metrics.loaded.set(self._count_ready())

    async def forget(self, name: str, version: str | None = None) -> None:
        """Unload and drop registry entries (before deleting files)."""
        if version is None:
            self.notes.pop(name, None)
        entries = self.models.get(name, {})
        for v in [version] if version is not None else list(entries):
            mv = entries.pop(v, None)
            if mv is not None and mv.runner is not None:
                await self._retire(mv)
        if version is None or not entries:
            self.models.pop(name, None)
        self.metrics.loaded.set(self._count_ready())

    def _count_ready(self) -> int:
        return sum(mv.state is State.READY for e in self.models.values() for mv in e.values())

    def stats_docs(self, name: str | None = None, version: str | None = None) -> list[dict]:
        """Triton statistics documents: every model (no name), every version of one, or one."""
        if version is not None:
            return [self.get(name, version).stats.doc()]
        if name is None:
            entries = [e for _, e in sorted(self.models.items())]
        else:
            if not self.models.get(name):
                self.get(name)                     # raises the right 404/503
                raise NotFound(f"model '{name}' has no statistics")
            entries = [self.models[name]]
        return [mv.stats.doc() for e in entries
                for _, mv in sorted(e.items(), key=lambda kv: int(kv[0])) if mv.stats is not None]

    def index(self, ready_only: bool = False) -> list[dict]:
        rows = []
        names = sorted(set(self.store.models()) | set(self.models))
        for name in names:
            entries = self.models.get(name, {})
            try:
                versions = sorted(set(self.store.versions(name)) | set(entries), key=int)
            except ServiceError:
                versions = sorted(entries, key=int)
            for v in versions:
                mv = entries.get(v)
                state = mv.state.value if mv else State.UNAVAILABLE.value
                reason = (mv.reason if mv else "not loaded") or self.notes.get(name, "")
                if ready_only and state != "READY":
                    continue
                row = {"name": name, "version": v, "state": state, "reason": reason}
                if mv is not None and mv.runner is not None:
                    row["memory_bytes"] = mv.memory
                rows.append(row)
        return rows

    async def close(self) -> None:
        for entries in self.models.values():
            for mv in entries.values():
                if mv.batcher is not None:
                    await mv.batcher.stop(timeout=self.settings.graceful_timeout_s)
        self.load_pool.shutdown(wait=False, cancel_futures=True)
