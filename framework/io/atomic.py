"""Atomic file writes: a temporary file in the target's directory, fsync, os.replace, then
fsync of the directory (so the rename itself survives a power cut)."""
from __future__ import annotations

import os
import tempfile
from typing import Callable


def write_atomic(path: str | os.PathLike, data: bytes, *, prefix: str = ".tmp-",
                 before_replace: Callable[[], None] | None = None) -> None:
    """Replace `path` by `data` atomically: readers see the old file or the new one, never a
    part. `prefix` starts the temp file's name (e.g. to say whose it is, for a cleanup of
    crash debris); `before_replace` is called once the temp file is written and synced, just
    before the rename (fault injection: a crash there leaves only the temp file)."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=d)
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
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(d)


def fsync_dir(d: str | os.PathLike) -> None:
    """Best effort: some filesystems refuse to open or fsync a directory."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
