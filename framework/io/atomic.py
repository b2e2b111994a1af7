"""Atomic file writes: a temporary file in the target's directory, fsync, then os.replace."""
from __future__ import annotations

import os
import tempfile


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        try:           # mkstemp creates 0600: keep an existing file's mode, else rw-r--r--
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
