"""MXNet Model Server archives dropped into the store: `<store>/<file>.mar` is imported as a
new version of the model its manifest names (else the file's stem), exactly as an upload of
it would be (management.upload_archive: staged, checked, loaded, committed), at startup and on
every store poll.

The same holds for an `s3://` store: `<prefix>/<file>.mar` in the bucket. Which archives were
imported is kept in the store's `.mar-imported.json` (file name → identity, and the outcome;
repository/drops.py): an archive is claimed there atomically (a directory's lock, a bucket's
conditional write) before it is imported, so of several replicas polling one store only one
imports it; a replaced file (new identity) is imported again as the next version. A refused archive is logged once
and recorded with the reason; it is tried again only when the file changes. The archive
itself stays where it was put.

An archive never rewrites the configuration of a model the store already has: one whose
declared signature (input and output names, datatypes, shapes) matches the served model's
becomes its next version under the model's own config; one whose signature differs is
refused (a warning, the record, and the reason on the model's rows of the repository index).
"""
from __future__ import annotations

import asyncio
import logging
from typing import BinaryIO

from ..errors import BadRequest, Conflict, ServiceError
from ..repository import mar
from ..repository.backend import Store
from ..repository.config import ModelConfig
from ..repository.drops import claim_change, note_change
from ..repository.store import check_name
from .server import Core
from .management import upload_archive

log = logging.getLogger("hybridserve.archives")


def claim(store: Store) -> list[str]:
    """The dropped archives not yet imported in their current form, claimed for this process."""
    found = store.dropped_archives()
    if not found:
        return []
    change, mine = claim_change(found)
    store.update_drop_record(change)
    return list(mine)


def _note(store: Store, fname: str, outcome: dict) -> None:
    store.update_drop_record(note_change(fname, outcome))


def model_name(src: BinaryIO, fname: str, limits: mar.MarLimits) -> str:
    """The manifest's model name when it is a valid one, else the file's stem."""
    name = mar.manifest_name(src, fname, limits)
    src.seek(0)
    stem = fname[:-len(".mar")] if fname.endswith(".mar") else fname
    try:
        return check_name(name) if name else check_name(stem)
    except BadRequest:
        return check_name(stem)


def _dims(shape: list[int] | tuple[int, ...] | None) -> str:
    return "any" if shape is None else "[" + ",".join("-1" if d < 0 else str(d)
                                                      for d in shape) + "]"


def _same_dims(a, b) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x < 0 or y < 0 or x == y for x, y in zip(a, b))


def signature_change(new: ModelConfig, served: dict[str, list]) -> str | None:
    """How an archive's declared inputs/outputs differ from the served ones (`served`:
    "inputs"/"outputs" → objects with name, datatype, shape); None when they agree or the
    archive declares none (its version is then validated under the model's config)."""
    for what in ("inputs", "outputs"):
        mine, theirs = getattr(new, what), served.get(what) or []
        if not mine or not theirs:
            continue
        a = [(t.name, t.datatype, t.shape) for t in mine]
        b = [(t.name, t.datatype, t.shape) for t in theirs]
        if (len(a) != len(b) or any(x[:2] != y[:2] or not _same_dims(x[2], y[2])
                                    for x, y in zip(a, b))):
            show = lambda ts: ", ".join(f"{n} {d} {_dims(s)}" for n, d, s in ts)  # noqa: E731
            return f"{what} {show(a)} where the served model has {show(b)}"
    return None


def _served_signature(core: Core, name: str) -> dict[str, list]:
    """The newest ready version's inputs/outputs, else the model's config's."""
    ready = core.registry.ready_versions(name)
    if ready:
        r = core.registry.models[name][ready[-1]].runner
        return {"inputs": list(r.inputs), "outputs": list(r.outputs)}
    cfg = core.store.effective_config(name)
    return {"inputs": list(cfg.inputs), "outputs": list(cfg.outputs)} if cfg else {}


def _vet(fname: str, name: str, served: dict[str, list]):
    def check(cfg: ModelConfig) -> None:
        change = signature_change(cfg, served)
        if change is not None:
            raise Conflict(f"archive '{fname}' names model '{name}', which the store "
                           f"already serves, with a different signature ({change}); not "
                           "imported: give the archive another modelName (or delete the "
                           "model first)"[:1000])
    return check


async def _import(core: Core, fname: str) -> dict:
    """Import one claimed archive (blocking reads in a worker thread); the record's outcome."""
    store, loop = core.store, asyncio.get_running_loop()
    name = None
    try:
        with await loop.run_in_executor(None, store.open_dropped, fname) as f:
            name = await loop.run_in_executor(None, model_name, f, fname,
                                              mar.MarLimits.of(core.settings))
            existing = store.exists(name)
            check = _vet(fname, name, _served_signature(core, name)) if existing else None
            out = await upload_archive(core, name, f, fname, check=check)
        core.registry.notes.pop(name, None)
        (log.warning if existing else log.info)(
            "imported %s as %s/%s%s", fname, name, out["version"],
            " (a new version of a model the store had; its config kept)" if existing else "")
        return {"state": "imported", "model": name, "version": out["version"]}
    except (ServiceError, OSError) as e:
        msg = e.message if isinstance(e, ServiceError) else str(e)
        if isinstance(e, Conflict) and name is not None:
            core.registry.notes[name] = msg[:500]
            log.warning("model store archive %s refused: %s", fname, msg)
        else:
            log.error("model store archive %s refused: %s", fname, msg)
        return {"state": "refused", "error": msg[:500]}


async def import_dropped(core: Core) -> None:
    """Import every new or changed `<store>/*.mar` (a `Core.before_poll` hook); a directory
    store or a bucket alike."""
    store = core.store
    if store.read_only:
        return
    loop = asyncio.get_running_loop()
    for fname in await loop.run_in_executor(None, claim, store):
        outcome = await _import(core, fname)
        await loop.run_in_executor(None, _note, store, fname, outcome)
