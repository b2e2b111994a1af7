"""The small storage interface an object store is written over (objstore.py): flat keys
relative to the store's root, each with an ETag; whole-object reads and writes; and the one
primitive replicas need to agree without a shared lock — a conditional write (`if_match` an
ETag, or `if_absent`). s3.py implements it for S3 and S3-compatible servers.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple, Protocol

from ..errors import Unavailable


class Blob(NamedTuple):
    key: str           # relative to the store root, '/'-separated
    etag: str          # changes whenever the object's content does
    size: int


class PreconditionFailed(Exception):
    """A conditional write found the object changed (another replica wrote first)."""


class StoreUnavailable(Unavailable):
    """The object store cannot be read or written now: unreachable, refusing our credentials,
    or failing after retries. The message names the store and endpoint, never a secret."""


class StoreDenied(StoreUnavailable):
    """The object store refused our credentials for this request (HTTP 403)."""


class Blobs(Protocol):
    location: str                  # e.g. "s3://bucket/prefix at http://host:port"

    def list(self, prefix: str = "") -> list[Blob]:
        """Every object under `prefix` (recursively)."""
        ...

    def get(self, key: str) -> tuple[bytes, str] | None:
        """(content, etag), or None when there is no such object."""
        ...

    def download(self, key: str, dest: Path) -> None: ...

    def put(self, key: str, data: bytes | Path, *, if_match: str | None = None,
            if_absent: bool = False) -> str:
        """Write an object (bytes, or a local file's content); returns its ETag. With
        `if_match`/`if_absent` raises PreconditionFailed when the object is not as expected."""
        ...

    def delete(self, keys: list[str]) -> None: ...
