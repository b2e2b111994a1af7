"""Crash points for the fault tests: `HYBRIDSERVE_CRASH_AT=<point>` makes the process SIGKILL
itself when it reaches that point (a crash at that exact moment of an upload, a delete, a
manifest write). Unset (always, outside tests) it is a dict lookup.

Points: upload.received, upload.validated, commit.renamed, commit.config, commit.replaced,
delete.trashed, manifest.tmp_written; an object store's (objstore.py): commit.uploaded,
delete.claimed, manifest.written.
"""
from __future__ import annotations

import os
import signal

_AT = frozenset(filter(None, os.environ.get("HYBRIDSERVE_CRASH_AT", "").split(",")))


def point(name: str) -> None:
    if name in _AT:
        os.kill(os.getpid(), signal.SIGKILL)
