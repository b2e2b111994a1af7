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

    def doc(self) -> dict[str, Any]:
        return {"format": 1, "generation": self.generation,
                "models": {n: e.doc() for n, e in sorted(self.models.items())}}


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


def read_manifest(root: Path) -> Manifest | None:
    """The manifest, or None when missing or unreadable (callers then use the directories)."""
    p = root / MANIFEST
    try:
        with open(p, "rb") as f:
            raw = f.read(_MAX_MANIFEST_BYTES + 1)
        doc = orjson.loads(raw) if len(raw) <= _MAX_MANIFEST_BYTES else None
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as e:
        log.warning("ignoring unreadable store manifest %s: %s", p, e)
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("generation"), int):
        return None
    models = {}
    for name, e in (doc.get("models") or {}).items():
        entry = _entry(e)
        if isinstance(name, str) and entry is not None:
            models[name] = entry
    return Manifest(doc["generation"], models)


def write_atomic(path: Path, data: bytes, crash_point: str | None = None) -> None:
    """framework's atomic write (temp file, fsync, `os.replace`, fsync of the directory) with
    this process's name on the temp file, so recovery knows whose debris it is, and an
    optional crash point between the write and the rename."""
    _write_atomic(path, data, prefix=TMP + owner_prefix(),
                  before_replace=(lambda: faults.point(crash_point)) if crash_point else None)


def write_manifest(root: Path, m: Manifest) -> None:
    write_atomic(root / MANIFEST, orjson.dumps(m.doc(), option=orjson.OPT_INDENT_2),
                 crash_point="manifest.tmp_written")


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
