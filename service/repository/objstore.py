"""A model store in an object store (`s3://BUCKET/PREFIX`), written over `Blobs` (blobs.py).

Same layout as a directory store, as keys: `<model>/config.json`, `<model>/<version>/<files>`,
files beside the versions (labels, calibration), and `.manifest.json`. A bucket filled by hand
(`aws s3 sync model_store s3://...`) is served as the directory would be. A version's identity
is its objects' names and ETags, so a replaced version is seen as new.

Object stores have no rename and no lock, so replicas agree through the manifest alone: every
change is a conditional write of it (`If-Match` its ETag; `If-None-Match: *` for the first),
retried from a fresh read when another replica wrote first — generations never fork. A write
first *claims* its version in the manifest's `pending` (hidden from every replica), then
uploads the objects, then removes the claim and records the version in one more conditional
write: a replica never serves a half-written version, and one killed mid-way leaves only a
claim, which `recover` (at startup, on any replica) clears with its objects once its owner is
gone or it is older than `stale_s`. Deletes claim the same way, then remove the objects.

Reads go through the local read cache (cache.py); listings are reused for `_TTL_S`.
"""
from __future__ import annotations

import logging
import os
import random
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from contextlib import contextmanager
from typing import BinaryIO, Callable, Iterator

from ..errors import BadRequest, Conflict, Forbidden, NotFound
from . import faults
from .blobs import Blob, Blobs, PreconditionFailed, StoreDenied, StoreUnavailable
from .cache import ReadCache
from .config import ModelConfig
from .configs import ConfigReading
from .drops import RECORD, Record, parse_record, record_bytes
from .manifest import (KEEP, LOADED, MANIFEST, Manifest, config_digest, next_manifest,
                       parse_manifest)
from .owner import owner_gone, owner_prefix
from .store import CONFIG, ModelFiles, _VERSION_RE, check_name, check_version, find_files

log = logging.getLogger("hybridserve.objstore")
_TTL_S = 1.0                   # a listing is reused this long by reads outside a poll
_MAX_TRIES = 40                # conditional manifest writes lost to other replicas in a row


@dataclass
class ModelKeys:
    versions: dict[str, dict[str, Blob]] = field(default_factory=dict)  # v → file → blob
    files: dict[str, Blob] = field(default_factory=dict)    # beside the versions (config too)


def tree(blobs: list[Blob]) -> dict[str, ModelKeys]:
    """Models as the keys lay them out; keys that fit no model/version are ignored."""
    out: dict[str, ModelKeys] = {}
    for b in blobs:
        parts = b.key.split("/")
        if len(parts) not in (2, 3) or parts[0].startswith(".") or not parts[-1]:
            continue
        try:
            check_name(parts[0])
        except BadRequest:
            continue
        mk = out.setdefault(parts[0], ModelKeys())
        if len(parts) == 2:
            mk.files[parts[1]] = b
        elif _VERSION_RE.match(parts[1]) and not parts[2].startswith("."):
            mk.versions.setdefault(parts[1], {})[parts[2]] = b
    return out


def _ident(files: dict[str, Blob]) -> tuple:
    return tuple(sorted((n, b.etag) for n, b in files.items()))


class ObjectStore(ConfigReading):
    def __init__(self, blobs: Blobs, cache: ReadCache, read_only: bool | None = None,
                 stale_s: float = 3600.0, max_config_bytes: int = 1 << 20):
        self.blobs, self.cache = blobs, cache
        self.location = blobs.location
        self.read_only = bool(read_only)
        self.stale_s, self.max_config_bytes = stale_s, max_config_bytes
        self._lock = threading.Lock()
        self._keys: tuple[float, dict[str, ModelKeys]] | None = None
        self._man: tuple[float, Manifest | None, str | None] | None = None
        self._configs: dict[str, tuple[str, bytes]] = {}      # key → (etag, bytes)
        self._drops: dict[str, list] = {}     # `<file>.mar` at the root → [etag, size]

    def require_writable(self) -> None:
        if self.read_only:
            raise Forbidden(f"the model store is read-only: uploads, deletes and config "
                            f"changes are refused (store {self.location})")

    # -- what the store holds ------------------------------------------------------------------
    def _listing(self, fresh: bool = False) -> dict[str, ModelKeys]:
        cached = self._keys
        if not fresh and cached is not None and time.monotonic() - cached[0] < _TTL_S:
            return cached[1]
        try:
            blobs = self.blobs.list()
        except StoreUnavailable:
            if fresh or cached is None:
                raise
            return cached[1]         # reads between polls use the last listing
        keys = tree(blobs)
        self._drops = {b.key: [b.etag, b.size] for b in blobs
                       if "/" not in b.key and b.key.endswith(".mar") and b.key[0] != "."}
        self._keys = (time.monotonic(), keys)
        return keys

    def _manifest(self, fresh: bool = False) -> tuple[Manifest | None, str | None]:
        cached = self._man
        if not fresh and cached is not None and time.monotonic() - cached[0] < _TTL_S:
            return cached[1], cached[2]
        got = self.blobs.get(MANIFEST)
        man, etag = (None, None) if got is None else (parse_manifest(got[0], MANIFEST), got[1])
        self._man = (time.monotonic(), man, etag)
        return man, etag

    def _invalidate(self) -> None:
        self._keys = self._man = None

    def _visible(self, keys: dict[str, ModelKeys], man: Manifest | None) -> dict[str, ModelKeys]:
        """Without what a write in progress claims (pending in the manifest)."""
        pending = man.pending if man is not None else {}
        if not pending:
            return keys
        out = {}
        for name, mk in keys.items():
            if f"{name}/*" in pending:
                continue
            vs = {v: f for v, f in mk.versions.items() if f"{name}/{v}" not in pending}
            out[name] = ModelKeys(vs, mk.files)
        return out

    def _model(self, name: str) -> ModelKeys | None:
        return self._visible(self._listing(), self.manifest()).get(check_name(name))

    def models(self) -> list[str]:
        return sorted(self._visible(self._listing(), self.manifest()))

    def exists(self, name: str) -> bool:
        return self._model(name) is not None

    def versions(self, name: str) -> list[str]:
        mk = self._model(name)
        return sorted(mk.versions, key=int) if mk is not None else []

    def version_ident(self, name: str, version: str) -> tuple | None:
        mk = self._model(name)
        files = mk.versions.get(check_version(version)) if mk is not None else None
        return _ident(files) if files else None

    def config_bytes(self, name: str) -> bytes | None:
        mk = self._model(name)
        b = mk.files.get(CONFIG) if mk is not None else None
        if b is None:
            return None
        if b.size > self.max_config_bytes:
            raise BadRequest(f"config of model '{name}' is over {self.max_config_bytes} bytes")
        hit = self._configs.get(b.key)
        if hit is not None and hit[0] == b.etag:
            return hit[1]
        got = self.blobs.get(b.key)
        if got is None:
            return None
        self._configs[b.key] = (got[1], got[0])
        return got[0]

    def files(self, name: str, version: str) -> ModelFiles:
        """The version's files, from the read cache (downloaded once per content)."""
        mk = self._model(name)
        vblobs = mk.versions.get(check_version(version)) if mk is not None else None
        if not vblobs:
            raise NotFound(f"model '{name}' has no version {version} in the store")
        extra = {n: b for n, b in mk.files.items() if n != CONFIG and not n.startswith(".")}
        return find_files(self.cache.fetch(self.blobs, name, version, vblobs, extra))

    def scan(self, only: str | None = None) -> dict[str, tuple[dict[str, tuple], tuple | None]]:
        """A fresh listing (raises StoreUnavailable: a poll must not take an unreachable store
        for an empty one)."""
        # one model: list its keys only (sync looks at each model again under its lock)
        listed = self._listing(fresh=True) if only is None else tree(self.blobs.list(only + "/"))
        keys = self._visible(listed, self._manifest(fresh=True)[0])
        out = {}
        for name, mk in keys.items():
            if only is not None and name != only:
                continue
            cfg = mk.files.get(CONFIG)
            out[name] = ({v: _ident(f) for v, f in mk.versions.items()},
                         (cfg.etag,) if cfg is not None else None)
        return out

    def manifest(self) -> Manifest | None:
        return self._manifest()[0]

    # -- the manifest: conditional writes ------------------------------------------------------
    def _update(self, change: Callable[[Manifest | None], Manifest | None]) -> Manifest | None:
        """Read the manifest, apply `change` (None: nothing to write), write it back only if
        nobody wrote in between; retried from a fresh read when someone did."""
        def read() -> tuple[Manifest | None, str | None]:
            self._invalidate()
            return self._manifest(fresh=True)
        new = self._conditional(MANIFEST, read, change, lambda m: m.to_bytes(),
                                "manifest.written")
        self._invalidate()
        return new

    def _conditional(self, key: str, read: Callable[[], tuple[object, str | None]],
                     change: Callable, encode: Callable[[object], bytes],
                     point: str | None = None):
        """The read-change-write loop of one object that replicas update: written only if
        its ETag is still the one read (absent: only if still absent); retried from a fresh
        read, with jitter, when another replica wrote first."""
        for attempt in range(_MAX_TRIES):
            current, etag = read()
            new = change(current)
            if new is None:
                return current
            try:
                self.blobs.put(key, encode(new), if_match=etag, if_absent=etag is None)
            except PreconditionFailed:
                time.sleep(random.uniform(0.01, 0.05) * min(attempt + 1, 10))
                continue
            if point:
                faults.point(point)
            return new
        raise StoreUnavailable(f"model store {self.location}: {key} kept changing under "
                               f"{_MAX_TRIES} attempts to update it")

    def _found(self) -> dict[str, tuple[tuple[str, ...], str | None]]:
        out = {}
        for m, mk in self._listing(fresh=True).items():
            try:
                digest = config_digest(self.config_bytes(m)) if CONFIG in mk.files else None
            except BadRequest:
                digest = "unreadable"
            out[m] = (tuple(sorted(mk.versions, key=int)), digest)
        return out

    def publish(self, name: str | None = None, state: str | None = None, bump: bool = False,
                if_changed: bool = False, override: object = KEEP,
                release: str | None = None) -> Manifest | None:
        """Rewrite the manifest from what the bucket holds (see ModelStore.publish); `release`
        drops that pending claim in the same write."""
        def change(man: Manifest | None) -> Manifest | None:
            new = next_manifest(man, self._found(), name, state, bump, override)
            if release is not None:
                new.pending.pop(release, None)
            if (if_changed and man is not None and man.models == new.models
                    and man.pending == new.pending):
                return None
            return new
        return self._update(change)

    def _claim(self, pick: Callable[[Manifest, dict[str, ModelKeys]], str]) -> str:
        """Record the key `pick` chooses from the store as it is ("<model>/<version>" or
        "<model>/*") as pending — hidden from every replica — in one conditional write."""
        chosen: list[str] = []

        def change(man: Manifest | None) -> Manifest:
            man = man or Manifest()
            key = pick(man, self._visible(self._listing(fresh=True), man))
            model = key.split("/")[0]
            if key in man.pending or f"{model}/*" in man.pending:
                raise Conflict(f"model '{model}' is being written by another request; retry")
            chosen[:] = [key]
            pending = dict(man.pending)
            pending[key] = {"owner": owner_prefix(), "since": time.time()}
            return Manifest(man.generation + 1, man.models, pending)
        self._update(change)
        return chosen[0]

    # -- writing (blocking: run these in a worker thread) --------------------------------------
    def new_staging(self) -> Path:
        self.require_writable()
        d = self.cache.root / "staging" / f"{owner_prefix()}{os.urandom(6).hex()}"
        d.mkdir(parents=True)
        return d

    def discard(self, staged: Path) -> None:
        shutil.rmtree(staged, ignore_errors=True)

    def commit_version(self, name: str, staged: Path, version: str | None = None,
                       config: ModelConfig | None = None, replace: bool = False) -> str:
        """Claim the version (numbered: the next free one unless given), upload the staged
        files, then record it and drop the claim in one manifest write."""
        self.require_writable()
        check_name(name)

        def pick(man: Manifest, keys: dict[str, ModelKeys]) -> str:
            mk = keys.get(name, ModelKeys())
            if version is not None:
                v = check_version(version)
                if v in mk.versions and not replace:
                    raise Conflict(f"model '{name}' already has version {v}")
                return f"{name}/{v}"
            entry = man.models.get(name)
            taken = set(mk.versions) | set(entry.versions if entry else ()) | {
                k.split("/", 1)[1] for k in man.pending if k.startswith(name + "/")}
            return f"{name}/{max((int(x) for x in taken if x.isdigit()), default=0) + 1}"

        with self._lock:
            key = self._claim(pick)
            v = key.split("/", 1)[1]
            try:
                old = set(self._listing(fresh=True).get(name, ModelKeys()).versions.get(v, {}))
                new = sorted(p.name for p in staged.iterdir() if p.is_file())
                for fname in new:
                    self.blobs.put(f"{key}/{fname}", staged / fname)
                faults.point("commit.uploaded")
                if old - set(new):
                    self.blobs.delete([f"{key}/{f}" for f in old - set(new)])
                if config is not None:
                    self.blobs.put(f"{name}/{CONFIG}", config.to_json_bytes())
            except BaseException:
                self._abandon(key, replaced=replace)
                raise
            # a new config.json is a persistent change: it ends a load's override
            self.publish(name, LOADED, override=None if config is not None else KEEP,
                         release=key)
        return v

    def _abandon(self, key: str, replaced: bool) -> None:
        """Best effort after a failed write: remove what it uploaded (not a replaced
        version's objects: they are broken either way and `recover` removes them) and its
        claim."""
        try:
            if not replaced:
                self.blobs.delete([b.key for b in self.blobs.list(key + "/")])
            self._update(lambda m: None if m is None or key not in m.pending else
                         Manifest(m.generation + 1, m.models,
                                  {k: x for k, x in m.pending.items() if k != key}))
        except StoreUnavailable as e:
            log.warning("could not clean up the interrupted write %s (recovery will): %s",
                        key, e.message)

    def write_config(self, name: str, config: ModelConfig) -> None:
        self.require_writable()
        self.blobs.put(f"{check_name(name)}/{CONFIG}", config.to_json_bytes())
        self.publish(name, LOADED, bump=True, override=None)

    def set_override(self, name: str, config: ModelConfig) -> None:
        self.require_writable()
        self.publish(name, LOADED, bump=True, override=config.to_json_bytes().decode())

    def set_state(self, name: str, state: str, bump: bool = False,
                  override: object = KEEP) -> None:
        self.require_writable()
        self.publish(name, state, bump=bump, override=override)

    def delete_version(self, name: str, version: str) -> None:
        self.require_writable()
        if version not in self.versions(name):
            raise NotFound(f"model '{name}' has no version {version}")
        last = self.versions(name) == [version]
        self._delete(name, f"{name}/*" if last else f"{name}/{version}",
                     f"{name}/" if last else f"{name}/{version}/")

    def delete_model(self, name: str) -> None:
        self.require_writable()
        if not self.exists(name):
            raise NotFound(f"model '{name}' is not in the store")
        self._delete(name, f"{name}/*", f"{name}/")

    def _delete(self, name: str, key: str, prefix: str) -> None:
        with self._lock:
            self._claim(lambda man, keys: key)
            faults.point("delete.claimed")
            self.blobs.delete([b.key for b in self.blobs.list(prefix)])
            self.publish(release=key)

    def recover(self) -> list[str]:
        """Clear the claims (and their objects) of writes whose owner is gone or that are
        older than `stale_s`, and the cache's own debris; then make the manifest agree."""
        if self.read_only:
            return []
        self.cache.clear_debris(self.stale_s)
        shutil.rmtree(self.cache.root / "staging", ignore_errors=True)
        man, _ = self._manifest(fresh=True)          # unreadable: raises, start is retried
        try:
            return self._recover(man)
        except StoreDenied as e:
            # credentials that may read but not write (a KServe-style reader): serve as is
            log.warning("%s — serving the store read-only", e.message)
            self.read_only = True
            return []

    def _recover(self, man: Manifest | None) -> list[str]:
        removed = []
        for key, claim in (man.pending if man is not None else {}).items():
            owner, since = str(claim.get("owner", "")), claim.get("since", 0)
            age = time.time() - since if isinstance(since, (int, float)) else float("inf")
            if not (owner_gone(owner, at_startup=True) or age > self.stale_s):
                continue
            model, _, rest = key.partition("/")
            prefix = f"{model}/" if rest == "*" else f"{key}/"
            self.blobs.delete([b.key for b in self.blobs.list(prefix)])
            self._update(lambda m, k=key: None if m is None or k not in m.pending else
                         Manifest(m.generation + 1, m.models,
                                  {x: c for x, c in m.pending.items() if x != k}))
            removed.append(key)
        self.publish(if_changed=True)
        if removed:
            log.warning("recovery: removed interrupted writes of %s", ", ".join(removed))
        return removed


    # -- `.mar` archives dropped into the bucket (drops.py) -----------------------------------
    def dropped_archives(self) -> dict[str, list]:
        self._listing()
        return dict(self._drops)

    def update_drop_record(self, change: Callable[[Record], Record | None]) -> Record:
        def read() -> tuple[Record, str | None]:
            got = self.blobs.get(RECORD)
            return (parse_record(None), None) if got is None else (parse_record(got[0]), got[1])
        return self._conditional(RECORD, read, change, record_bytes)

    @contextmanager
    def open_dropped(self, fname: str) -> Iterator[BinaryIO]:
        """The archive downloaded beside the read cache (imported once, so not kept)."""
        tmp = self.cache.root / "staging" / f"{owner_prefix()}{os.urandom(6).hex()}.mar"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.blobs.download(fname, tmp)
            with open(tmp, "rb") as f:
                yield f
        finally:
            tmp.unlink(missing_ok=True)
