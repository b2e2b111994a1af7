"""MXNet Model Server archives dropped into the store: `<store>/<file>.mar` is imported as a
new version of the model its manifest names (else the file's stem), exactly as an upload of
it would be (management.upload_archive: staged, checked, loaded, committed), at startup and on
every store poll.

Which archives were imported is kept in `<store>/.mar-imported.json` (file name → size and
mtime, and the outcome): an archive is claimed there under the store lock before it is
imported, so of several replicas polling one store only one imports it; a replaced file
(new size or mtime) is imported again as the next version. A refused archive is logged once
and recorded with the reason; it is tried again only when the file changes. The archive
itself stays where it was put.
"""
from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import orjson

from ..errors import BadRequest, ServiceError
from ..repository import mar
from ..repository.manifest import write_atomic
from ..repository.store import ModelStore, check_name
from .dataplane import Core
from .management import upload_archive

log = logging.getLogger("hybridserve.archives")
RECORD = ".mar-imported.json"


def _ident(p: Path) -> list[int]:
    st = p.stat()
    return [st.st_size, st.st_mtime_ns]


def _read(store: ModelStore) -> dict:
    f = store.root / RECORD
    try:
        doc = orjson.loads(f.read_bytes()) if f.is_file() else {}
    except (OSError, orjson.JSONDecodeError):
        doc = {}
    return doc if isinstance(doc, dict) else {}


def claim(store: ModelStore) -> list[Path]:
    """The dropped archives not yet imported in their current form, claimed for this process."""
    candidates = [p for p in sorted(store.root.glob("*.mar"))
                  if p.is_file() and not p.is_symlink()]
    if not candidates:
        return []
    with store.lock:
        record = _read(store)
        mine = []
        for p in candidates:
            if (record.get(p.name) or {}).get("ident") != _ident(p):
                record[p.name] = {"ident": _ident(p), "state": "importing"}
                mine.append(p)
        if mine:
            write_atomic(store.root / RECORD, orjson.dumps(record, option=orjson.OPT_INDENT_2))
    return mine


def _note(store: ModelStore, archive: Path, outcome: dict) -> None:
    with store.lock:
        record = _read(store)
        record[archive.name] = (record.get(archive.name) or {}) | outcome
        write_atomic(store.root / RECORD, orjson.dumps(record, option=orjson.OPT_INDENT_2))


def model_name(store: ModelStore, archive: Path, limits: mar.MarLimits) -> str:
    """The manifest's model name when it is a valid one, else the file's stem."""
    name = mar.manifest_name(archive, archive.name, limits)
    try:
        return check_name(name) if name else check_name(archive.stem)
    except BadRequest:
        return check_name(archive.stem)


async def import_dropped(core: Core) -> None:
    """Import every new or changed `<store>/*.mar` (a `Core.before_poll` hook)."""
    store = core.store
    if store.read_only or not isinstance(store, ModelStore):
        return          # archives are dropped into a directory store (not a bucket)
    loop = asyncio.get_running_loop()
    for archive in await loop.run_in_executor(None, claim, store):
        try:
            name = await loop.run_in_executor(None, model_name, store, archive,
                                              mar.MarLimits.of(core.settings))
            with open(archive, "rb") as f:
                out = await upload_archive(core, name, f, archive.name)
            outcome = {"state": "imported", "model": name, "version": out["version"]}
            log.info("imported %s as %s/%s", archive.name, name, out["version"])
        except (ServiceError, OSError) as e:
            msg = e.message if isinstance(e, ServiceError) else str(e)
            outcome = {"state": "refused", "error": msg[:500]}
            log.error("model store archive %s refused: %s", archive.name, msg)
        await loop.run_in_executor(None, _note, store, archive, outcome)
