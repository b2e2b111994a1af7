"""The local read cache of an object store: each version's objects are downloaded once into
`<cache>/models/<model>/<version>@<digest>/`, where the digest covers every object's key and
ETag — an unchanged version is never downloaded twice (a restart on the same cache included),
a replaced one gets a new directory. Files beside the versions in the store (labels, a
calibration set) land in `<cache>/models/<model>/`, refreshed when their ETag changes: the
runner looks for them in the version directory, then its parent, as in a directory store.

Over `limit_bytes` the least recently used version directories are removed (loaded models
are in memory already; a later load downloads again).
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
import time
from pathlib import Path

import orjson

from .blobs import Blob, Blobs
from .owner import owner_prefix

log = logging.getLogger("hybridserve.cache")
_DONE, _ETAGS = ".complete", ".etags.json"


def digest(blobs: dict[str, Blob]) -> str:
    h = hashlib.sha256()
    for name, b in sorted(blobs.items()):
        h.update(f"{name}\0{b.etag}\0".encode())
    return h.hexdigest()[:20]


class ReadCache:
    def __init__(self, root: Path, limit_bytes: int):
        self.root, self.limit = root, limit_bytes
        (root / "models").mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.downloads = 0            # objects fetched from the store since start

    def fetch(self, store: Blobs, model: str, version: str, vblobs: dict[str, Blob],
              mblobs: dict[str, Blob]) -> Path:
        """The local directory holding `vblobs` (file name → object) of `model`/`version`,
        with the model-level files `mblobs` in its parent."""
        mdir = self.root / "models" / model
        vdir = mdir / f"{version}@{digest(vblobs)}"
        with self._lock:
            mdir.mkdir(parents=True, exist_ok=True)
            self._model_files(store, mdir, mblobs)
            if (vdir / _DONE).is_file():
                os.utime(vdir)
                return vdir
            tmp = mdir / f".tmp-{owner_prefix()}{os.urandom(4).hex()}"
            tmp.mkdir()
            try:
                for name, b in vblobs.items():
                    store.download(b.key, tmp / name)
                    self.downloads += 1
                (tmp / _DONE).write_bytes(b"")
                shutil.rmtree(vdir, ignore_errors=True)
                os.rename(tmp, vdir)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            self._evict(keep=vdir)
        return vdir

    def _model_files(self, store: Blobs, mdir: Path, mblobs: dict[str, Blob]) -> None:
        try:
            have = orjson.loads((mdir / _ETAGS).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            have = {}
        if not isinstance(have, dict):
            have = {}
        for name in set(have) - set(mblobs):
            (mdir / name).unlink(missing_ok=True)
        for name, b in mblobs.items():
            if have.get(name) != b.etag or not (mdir / name).is_file():
                tmp = mdir / f".tmp-{owner_prefix()}{name}"
                store.download(b.key, tmp)
                self.downloads += 1
                os.replace(tmp, mdir / name)
        (mdir / _ETAGS).write_bytes(orjson.dumps({n: b.etag for n, b in mblobs.items()}))

    def _evict(self, keep: Path) -> None:
        dirs = []
        for d in (self.root / "models").glob("*/*@*"):
            try:
                size = sum(f.stat().st_size for f in d.iterdir())
                dirs.append((d.stat().st_mtime, size, d))
            except OSError:
                continue
        total = sum(s for _, s, _ in dirs)
        for _, size, d in sorted(dirs):
            if total <= self.limit:
                break
            if d != keep:
                shutil.rmtree(d, ignore_errors=True)
                total -= size
                log.info("read cache over %d bytes: removed %s", self.limit,
                         d.relative_to(self.root))

    def clear_debris(self, stale_s: float) -> None:
        """Temp directories of downloads that died (this host's processes only use it)."""
        for d in (self.root / "models").glob("*/.tmp-*"):
            if time.time() - d.lstat().st_mtime > min(stale_s, 60.0) or not d.is_dir():
                shutil.rmtree(d, ignore_errors=True) if d.is_dir() else d.unlink(missing_ok=True)
