"""Who owns a temporary entry in the store (staging dir, trash dir, temp file).

Names start with `<host>-<pid>-`, so a replica restarting on a shared store removes only its
own leftovers and those of processes that are gone (same host, dead pid) or that are older
than the staleness timeout — never another live replica's upload in progress.
"""
from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

_HOST = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname() or "host")[:64]
TMP = ".tmp-"                    # temp files: `.tmp-<host>-<pid>-<random>` (manifest.write_atomic)
_OWNED = re.compile(r"^(?:\.tmp-)?(?P<host>[A-Za-z0-9_]+)-(?P<pid>[0-9]+)-")


def owner_prefix() -> str:
    return f"{_HOST}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_gone(name: str, at_startup: bool = False) -> bool:
    """True if the owner named at the start of `name` is a process of this host that is gone
    (or an earlier incarnation of this very pid, at startup: we have created nothing yet)."""
    m = _OWNED.match(name)
    if m and m["host"] == _HOST:
        pid = int(m["pid"])
        if pid == os.getpid():
            return at_startup
        return not _alive(pid)
    return False


def is_stale(p: Path, stale_s: float, at_startup: bool = False,
             now: float | None = None) -> bool:
    """True if nobody can still be writing `p`: its owner on this host is gone (or is an
    earlier incarnation of this very pid, at startup), or it is older than `stale_s`."""
    if owner_gone(p.name, at_startup):
        return True
    try:
        age = (now or time.time()) - p.lstat().st_mtime
    except FileNotFoundError:
        return False
    return age > stale_s
