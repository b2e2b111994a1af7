"""Replicas agree: each server process converges its registry to the shared store.

Every `store_poll_s` seconds (and once at startup) a replica takes a cheap snapshot — the
manifest (desired state, reload epoch, generation) and the directories (version and config
identities: inode + mtime, so a version deleted and re-created under the same number is seen
as new) — and, when it changed, reconciles each model under that model's management lock:

- gone from the store → unload and forget;
- desired state `unloaded` → unload (files stay);
- config changed, reload requested (epoch), or state back to `loaded` → reload every version
  (the old runners keep serving until the new ones are warm);
- otherwise → load + warm versions that appeared or were replaced, retire those that vanished.

A version is reported READY only after it loaded and warmed; versions only ever appear by
an atomic rename of a validated directory, so no replica serves a half-written model. Failed
versions are retried when their directory changes. Local management operations record what
they applied (`mark_applied`) so the replica that made a change does not redo it.
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Callable

from ..errors import ServiceError
from ..repository.manifest import LOADED, UNLOADED, config_digest
from ..repository.backend import Store
from ..runtime.metrics import Metrics
from ..runtime.registry import Registry

log = logging.getLogger("hybridserve.sync")


@dataclass(frozen=True)
class Target:
    versions: tuple[tuple[str, tuple | None], ...]   # (version, identity), by number
    config: tuple | None                              # identity of config.json
    state: str = LOADED
    epoch: int = 0
    override: str | None = None                       # digest of a load's config override


Snapshot = tuple[int, dict[str, Target]]


class StoreSync:
    def __init__(self, store: Store, registry: Registry, metrics: Metrics,
                 model_lock: Callable[[str], asyncio.Lock]):
        self.store, self.registry, self.metrics = store, registry, metrics
        self.model_lock = model_lock     # the management lock of one model (Core.mgmt_lock)
        self.applied: dict[str, Target] = {}
        self.generation = -1            # manifest generation last applied
        self._fingerprint: object = None

    def snapshot(self, only: str | None = None) -> Snapshot:
        """(manifest generation, {model: Target}) of the whole store or of model `only`;
        blocking (file stats)."""
        store = self.store
        scan = store.scan(only)
        man = store.manifest()
        targets = {}
        for name, (versions, cfg) in scan.items():
            entry = man.models.get(name) if man is not None else None
            override = entry.override if entry is not None else None
            targets[name] = Target(tuple(sorted(versions.items(), key=lambda kv: int(kv[0]))),
                                   cfg, entry.state if entry else LOADED,
                                   entry.epoch if entry else 0,
                                   config_digest(override.encode()) if override else None)
        return (man.generation if man is not None else 0), targets

    async def _fresh(self, name: str) -> Target | None:
        loop = asyncio.get_running_loop()
        _, targets = await loop.run_in_executor(None, self.snapshot, name)
        return targets.get(name)

    async def tick(self, force: bool = False) -> bool:
        """One poll: reconcile if the store changed. Returns whether anything was looked at."""
        loop = asyncio.get_running_loop()
        gen, targets = await loop.run_in_executor(None, self.snapshot)
        fingerprint = (gen, tuple(sorted(targets.items())))
        if not force and fingerprint == self._fingerprint:
            return False
        names = sorted(set(targets) | set(self.registry.models) | set(self.applied))
        await asyncio.gather(*(self._one(n) for n in names))
        self._fingerprint, self.generation = fingerprint, gen
        self.metrics.store_generation.set(gen)
        return True

    async def baseline(self) -> None:
        """Take the store as it is now as applied, loading nothing (LOAD_ON_STARTUP off):
        models are then loaded by a `load`, here or on another replica, or by an upload."""
        loop = asyncio.get_running_loop()
        gen, targets = await loop.run_in_executor(None, self.snapshot)
        self.applied = dict(targets)
        self._fingerprint, self.generation = (gen, tuple(sorted(targets.items()))), gen

    async def _one(self, name: str) -> None:
        async with self.model_lock(name):
            try:
                # looked at again under the lock: a local upload/delete may just have run
                await self.reconcile(name, await self._fresh(name))
            except ServiceError as e:
                log.error("store sync: model %s: %s", name, e.message)
            except Exception:  # noqa: BLE001 - one model must not stop the others converging
                log.exception("store sync: model %s failed", name)

    async def reconcile(self, name: str, t: Target | None) -> None:
        reg = self.registry
        prev = self.applied.get(name)
        if t is None or not t.versions:
            if name in reg.models:
                await reg.forget(name)
                log.info("store sync: %s left the store: unloaded", name)
            self.applied.pop(name, None)
            return
        self.applied[name] = t      # even if loading fails: failed versions retry on change
        if t.state == UNLOADED:
            if any(mv.runner is not None for mv in reg.models.get(name, {}).values()):
                await reg.unload(name)
                log.info("store sync: %s unloaded (store state)", name)
            return
        if name in reg.unloaded and prev == t:
            return                   # unloaded here only (read-only store): until it changes
        if (prev is None or prev.config != t.config or prev.epoch != t.epoch
                or prev.state != t.state or prev.override != t.override):
            await reg.load(name)                      # every version; old ones serve meanwhile
            return
        if name not in reg.models:
            return                   # never loaded here (LOAD_ON_STARTUP off): until asked
        entries = reg.models.get(name, {})
        disk = dict(t.versions)
        for v in [v for v in entries if v not in disk]:
            await reg.forget(name, v)
        # new or replaced versions, and those outside the policy (a deletion may bring them
        # back in; load() loads only what the policy serves)
        new = {v for v, ident in disk.items() if v not in entries or entries[v].ident != ident
               or entries[v].excluded}
        if new:
            await reg.load(name, only=new)

    async def mark_applied(self, name: str, *, config: bool = False, epoch: bool = False,
                           state: bool = False) -> None:
        """After a local change to `name`: the parts it applied here (its config, a reload,
        its state) need not be redone by the next poll. Versions are always compared with
        what the registry holds, so they need no marking."""
        t = await self._fresh(name)
        prev = self.applied.get(name)
        if t is None:
            self.applied.pop(name, None)
        elif prev is None:
            self.applied[name] = t
        else:
            self.applied[name] = Target(t.versions, t.config if config else prev.config,
                                        t.state if state else prev.state,
                                        t.epoch if epoch else prev.epoch,
                                        t.override if config else prev.override)
