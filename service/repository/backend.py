"""The one interface the server reads and writes models through, and the store a
`--model-store` URL names.

`Store` is what the registry, the management operations and the replica sync (core/sync.py)
use: model names, numeric versions with an identity that changes when a version is replaced,
`config.json`, the manifest (desired state, reload epoch, load override), the files of a
version as local paths, and atomic commits. Two backends implement it: a directory
(`store.ModelStore`, one rename per commit under a file lock) and an object store
(`objstore.ObjectStore`: `s3://BUCKET/PREFIX`, conditional writes of the manifest).

A store URL with any other scheme is refused at start: `s3:/models` taken as a local
directory once served nothing while reporting ready.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, ContextManager, Protocol, runtime_checkable

from .config import ModelConfig
from .drops import Record
from . import recovery
from .manifest import Manifest
from .store import ModelFiles, ModelStore
from .url import UnsupportedStore, check_store_url, split_url

# {model: ({version: identity}, config identity)}
Scan = dict[str, tuple[dict[str, object], object]]


@runtime_checkable
class Store(Protocol):
    read_only: bool
    location: str                  # for logs and errors: a path or URL, never a secret

    def require_writable(self) -> None: ...
    # reading
    def models(self) -> list[str]: ...
    def exists(self, name: str) -> bool: ...
    def versions(self, name: str) -> list[str]: ...
    def version_ident(self, name: str, version: str) -> tuple | None: ...
    def config_bytes(self, name: str) -> bytes | None: ...
    def read_config(self, name: str) -> ModelConfig | None: ...
    def override(self, name: str) -> str | None: ...
    def effective_config(self, name: str) -> ModelConfig | None: ...
    def files(self, name: str, version: str) -> ModelFiles: ...
    def scan(self, only: str | None = None) -> Scan: ...
    def manifest(self) -> Manifest | None: ...
    # writing (blocking: run in a worker thread)
    def new_staging(self) -> Path: ...
    def discard(self, staged: Path) -> None: ...
    def commit_version(self, name: str, staged: Path, version: str | None = None,
                       config: ModelConfig | None = None, replace: bool = False) -> str: ...
    def write_config(self, name: str, config: ModelConfig) -> None: ...
    def set_override(self, name: str, config: ModelConfig) -> None: ...
    def set_state(self, name: str, state: str, bump: bool = False,
                  override: object = ...) -> None: ...
    def delete_version(self, name: str, version: str) -> None: ...
    def delete_model(self, name: str) -> None: ...

    # `.mar` archives dropped into the store (drops.py)
    def dropped_archives(self) -> dict[str, list]: ...
    def update_drop_record(self, change: Callable[[Record], Record | None]) -> Record: ...
    def open_dropped(self, fname: str) -> ContextManager[BinaryIO]: ...


def recover(store: Store) -> list[str]:
    """At startup: clear what interrupted writes left, of this process's earlier life or of
    dead replicas (a directory's debris: recovery.py; an object store's own claims)."""
    if isinstance(store, ModelStore):
        return recovery.recover(store)
    return store.recover()


def default_cache_dir(spec: str) -> Path:
    """Per store URL, under $XDG_CACHE_HOME (~/.cache) — a restart finds its downloads —
    else, where that cannot be written (a container's read-only root), under the temp dir."""
    sub = Path("hybridserve") / "stores" / hashlib.sha256(spec.encode()).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    try:
        (base / sub).mkdir(parents=True, exist_ok=True)
        return base / sub
    except OSError:
        return Path(tempfile.gettempdir()) / sub


def open_store(spec: str | Path, *, read_only: bool | None = None, stale_s: float = 3600.0,
               max_config_bytes: int = 1 << 20, endpoint_url: str | None = None,
               cache_dir: str | Path | None = None, cache_bytes: int = 10 << 30) -> Store:
    """The store `spec` names: a directory (a path or file://PATH) or s3://BUCKET/PREFIX
    (endpoint: `endpoint_url`, else AWS_ENDPOINT_URL; downloads cached in `cache_dir`, at
    most `cache_bytes`)."""
    scheme, rest = split_url(check_store_url(str(spec)))
    if scheme == "file":
        if not rest.startswith("//"):
            raise UnsupportedStore(f"model store {spec!r}: write file:///absolute/path")
        path = rest[2:]
        if path and not path.startswith("/"):
            raise UnsupportedStore(f"model store {spec!r}: file:// URLs take no host; "
                                   "write file:///absolute/path")
        return ModelStore(path, read_only=read_only, stale_s=stale_s,
                          max_config_bytes=max_config_bytes)
    if scheme == "s3":
        # boto3 is imported only when a bucket is opened (it costs a directory store's start)
        from .cache import ReadCache
        from .objstore import ObjectStore
        from .s3 import S3Blobs
        cache = ReadCache(Path(cache_dir) if cache_dir else default_cache_dir(str(spec)),
                          cache_bytes)
        return ObjectStore(S3Blobs(str(spec), endpoint_url), cache, read_only=read_only,
                           stale_s=stale_s, max_config_bytes=max_config_bytes)
    return ModelStore(Path(rest).expanduser(), read_only=read_only, stale_s=stale_s,
                      max_config_bytes=max_config_bytes)
