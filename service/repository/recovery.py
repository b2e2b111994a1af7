"""Startup recovery of a (possibly shared) model store after a crash.

Removes only debris nobody can still be writing (see owner.py): staging directories of
uploads, trash of deletes, temp files of config/manifest writes. A version that was being
replaced when the process died (old one moved to trash, new one not yet renamed in) is put
back. Finally the manifest is made to agree with the directories.
"""
from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from ..errors import ServiceError
from .owner import TMP, is_stale
from .store import RESTORE, STAGING, TRASH, ModelStore

log = logging.getLogger("hybridserve.recovery")


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        try:
            p.unlink()
        except OSError:
            pass


def _restore(store: ModelStore, trash_dir: Path) -> None:
    for e in trash_dir.iterdir():
        if not e.name.startswith(RESTORE):
            continue
        try:
            model, version = e.name[len(RESTORE):].split("=", 1)
            target = store.version_dir(model, version)
        except (ValueError, OSError, ServiceError):     # a malformed name: just debris
            continue
        if target.parent.is_dir() and not target.exists():
            os.rename(e, target)
            log.warning("recovery: restored %s/%s (its replacement never landed)", model, version)


def recover(store: ModelStore) -> list[str]:
    """Clear stale debris and re-publish the manifest if it disagrees; returns what was removed."""
    if store.read_only:
        return []
    removed: list[str] = []
    with store.lock:
        for sub in (STAGING, TRASH):
            base = store.root / sub
            if not base.is_dir():
                continue
            for e in sorted(base.iterdir()):
                if not is_stale(e, store.stale_s, at_startup=True):
                    continue
                if sub == TRASH and e.is_dir():
                    _restore(store, e)
                _remove(e)
                removed.append(f"{sub}/{e.name}")
        for d in [store.root, *(store.root / m for m in store.models())]:
            for f in d.glob(TMP + "*"):
                if is_stale(f, store.stale_s, at_startup=True):
                    _remove(f)
                    removed.append(str(f.relative_to(store.root)))
        store.publish(if_changed=True)
    if removed:
        log.info("recovery: removed %d leftover(s) of interrupted writes: %s", len(removed),
                 ", ".join(removed[:10]))
    return removed
