"""The store manifest (`<store>/.manifest.json`) and the cross-process store lock.

Several replicas share one model store. Every committed change (upload, delete, load, unload,
config change) is made under `StoreLock` — `fcntl.flock` on `<store>/.lock` plus a thread lock
— and ends by rewriting the manifest atomically (temp file, fsync, `os.replace`): a generation
counter and, per model, its versions, its desired state (`loaded`/`unloaded`), a config digest
and an `epoch` bumped by explicit (re)load requests. Replicas poll it (see `service/core/sync.py`).

The directories stay the truth for what exists (versions appear by one rename of a validated
directory); the manifest adds what directories cannot say (desired state, explicit reloads)
and a cheap change signal.
"""
from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from framework.io.atomic import write_atomic as _write_atomic

from . import faults
from .owner import TMP, owner_prefix

log = logging.getLogger("hybridserve.manifest")
MANIFEST, LOCK = ".manifest.json", ".lock"
LOADED, UNLOADED = "loaded", "unloaded"
_MAX_MANIFEST_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ModelEntry:
    versions: tuple[str, ...] = ()
    state: str = LOADED
    config_digest: str | None = None
    epoch: int = 0
    # a `load` with a config: that config, serialised, until the next plain load or
    # persistent config change (Triton's override is for that load only, never written to
    # config.json)
    override: str | None = None

    def doc(self) -> dict[str, Any]:
        d: dict[str, Any] = {"versions": list(self.versions), "state": self.state,
                             "config_digest": self.config_digest, "epoch": self.epoch}
        if self.override is not None:
            d["override"] = self.override
        return d


@dataclass(frozen=True)
class Manifest:
    generation: int = 0
    models: dict[str, ModelEntry] = field(default_factory=dict)
    # an object store's writes in progress (objstore.py): "<model>/<version>" or "<model>/*"
    # → {"owner": owner prefix, "since": unix time}; hidden from every replica until done
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)

    def doc(self) -> dict[str, Any]:
        d: dict[str, Any] = {"format": 1, "generation": self.generation,
                             "models": {n: e.doc() for n, e in sorted(self.models.items())}}
        if self.pending:
            d["pending"] = dict(sorted(self.pending.items()))
        return d

    def to_bytes(self) -> bytes:
        return orjson.dumps(self.doc(), option=orjson.OPT_INDENT_2)


KEEP: Any = object()        # next_manifest(override=KEEP): the model's override stays as it is


def next_manifest(old: Manifest | None, found: dict[str, tuple[tuple[str, ...], str | None]],
                  name: str | None = None, state: str | None = None, bump: bool = False,
                  override: object = KEEP) -> Manifest:
    """The manifest after a change: `found` is what the store holds ({model: (versions,
    config digest)}); each model's desired state, epoch and override carry over; `name` gets
    `state`/`bump`/`override`. Generation + 1; pending writes carry over."""
    old = old or Manifest()
    models = {}
    for m, (versions, digest) in found.items():
        prev = old.models.get(m, ModelEntry())
        st = state if (m == name and state is not None) else prev.state
        ov = override if (m == name and override is not KEEP) else prev.override
        models[m] = ModelEntry(tuple(versions), st, digest,
                               prev.epoch + (1 if m == name and bump else 0), ov)
    return Manifest(old.generation + 1, models, dict(old.pending))


def config_digest(raw: bytes | None) -> str | None:
    return None if raw is None else "sha256:" + hashlib.sha256(raw).hexdigest()


def _entry(doc: Any) -> ModelEntry | None:
    if not isinstance(doc, dict):
        return None
    vs = doc.get("versions", [])
    state = doc.get("state", LOADED)
    epoch = doc.get("epoch", 0)
    dig = doc.get("config_digest")
    override = doc.get("override")
    if (not isinstance(vs, list) or not all(isinstance(v, str) for v in vs)
            or state not in (LOADED, UNLOADED) or not isinstance(epoch, int)
            or not (dig is None or isinstance(dig, str))
            or not (override is None or isinstance(override, str))):
        return None
    return ModelEntry(tuple(vs), state, dig, epoch, override)


def parse_manifest(raw: bytes, where: str) -> Manifest | None:
    """A manifest document, or None when it is not one (a store edited by hand: callers then
    use what the store holds)."""
    try:
        doc = orjson.loads(raw) if len(raw) <= _MAX_MANIFEST_BYTES else None
    except orjson.JSONDecodeError as e:
        log.warning("ignoring unreadable store manifest %s: %s", where, e)
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("generation"), int):
        return None
    models = {}
    for name, e in (doc.get("models") or {}).items():
        entry = _entry(e)
        if isinstance(name, str) and entry is not None:
            models[name] = entry
    pending = doc.get("pending")
    pending = {k: v for k, v in pending.items() if isinstance(k, str) and isinstance(v, dict)
               } if isinstance(pending, dict) else {}
    return Manifest(doc["generation"], models, pending)


def read_manifest(root: Path) -> Manifest | None:
    """The manifest, or None when missing or unreadable (callers then use the directories)."""
    p = root / MANIFEST
    try:
        with open(p, "rb") as f:
            raw = f.read(_MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("ignoring unreadable store manifest %s: %s", p, e)
        return None
    return parse_manifest(raw, str(p))


def write_atomic(path: Path, data: bytes, crash_point: str | None = None) -> None:
    """framework's atomic write (temp file, fsync, `os.replace`, fsync of the directory) with
    this process's name on the temp file, so recovery knows whose debris it is, and an
    optional crash point between the write and the rename."""
    _write_atomic(path, data, prefix=TMP + owner_prefix(),
                  before_replace=(lambda: faults.point(crash_point)) if crash_point else None)


def write_manifest(root: Path, m: Manifest) -> None:
    write_atomic(root / MANIFEST, m.to_bytes(), crash_point="manifest.tmp_written")


class StoreLock:
    """Exclusive across processes (flock on `<store>/.lock`) and threads; re-entrant within
    a thread. Blocking: call it from a worker thread, not the event loop."""

    def __init__(self, root: Path):
        self.path = root / LOCK
        self._tlock = threading.RLock()
        self._fd: int | None = None
        self._depth = 0

    def __enter__(self) -> "StoreLock":
        self._tlock.acquire()
        try:
            if self._depth == 0:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            self._depth += 1
        except BaseException:
            self._tlock.release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        self._tlock.release()
