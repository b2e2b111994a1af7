"""Model management: upload, Triton load (with config / files), unload, delete.

Every new version is written into this process's staging directory, loaded and warmed there
by a real `Runner.load`, and only then numbered and renamed into place under the store lock
(repository/store.py), which also publishes the new manifest for the other replicas; any failure
discards the staging directory, so the store is exactly as it was. Unload and config changes
are recorded in the manifest too, so every replica follows (sync.py).
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from pathlib import Path
from typing import BinaryIO, Callable

from ..errors import BadRequest, Conflict, NotFound, PayloadTooLarge, ServiceError
from ..limits import check_json_depth
from ..repository import faults, mar
from ..repository.config import ModelConfig, parse_config
from ..repository.manifest import LOADED, UNLOADED
from ..repository.store import (check_filename, check_name, check_version, disk_full_is_507,
                                find_files)
from ..runtime.runner import Runner
from .server import Core

log = logging.getLogger("hybridserve.management")
_CHUNK = 1 << 20


def copy_limited(src: BinaryIO, dst: Path, limit: int) -> int:
    n = 0
    with open(dst, "wb") as out:
        while True:
            chunk = src.read(_CHUNK)
            if not chunk:
                break
            n += len(chunk)
            if n > limit:
                raise PayloadTooLarge(f"uploaded file exceeds {limit} bytes")
            out.write(chunk)
    return n


def parse_user_config(core: Core, raw: bytes | str | dict, what: str) -> ModelConfig:
    s = core.settings
    if isinstance(raw, (bytes, str)):
        data = raw.encode() if isinstance(raw, str) else raw
        if len(data) > s.max_config_bytes:
            raise PayloadTooLarge(f"{what} is {len(data)} bytes, over the limit of "
                                  f"{s.max_config_bytes}")
        check_json_depth(data, s.max_json_depth, what)
    return parse_config(raw, what)


async def _run(fn, *args):
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def _validate(core: Core, name: str, version: str, staged: Path,
                    cfg: ModelConfig | None) -> Runner:
    """Load and warm the staged files exactly as serving would."""
    return await core.registry.load_runner(name, version, find_files(staged), cfg)


async def upload(core: Core, name: str, symbol: BinaryIO, params: BinaryIO | None,
                 config: bytes | None, version: str | None = None) -> dict:
    """Multipart upload → a new version (validated before it becomes visible)."""
    cfg = parse_user_config(core, config, "uploaded config") if config else None

    def fill(staged: Path) -> tuple[ModelConfig | None, str | None]:
        limit = core.settings.max_upload_bytes
        copy_limited(symbol, staged / f"{name}-symbol.json", limit)
        if params is not None:
            copy_limited(params, staged / f"{name}-0000.params", limit)
        return cfg, version

    return await _new_version(core, name, version, fill)


async def upload_archive(core: Core, name: str, archive: BinaryIO, filename: str,
                         version: str | None = None,
                         check: Callable[[ModelConfig], None] | None = None) -> dict:
    """An MXNet Model Server `.mar` → a new version: its model files, labels and the config
    made from its signature and handler (repository/mar.py); its handler code is never run.
    The version is `version`, else the manifest's when it is an integer, else the next.
    With `check` (a dropped archive for a model the store has): `check` vets the archive's
    config (raising to refuse it) and the model's own config stays as it is."""
    def fill(staged: Path) -> tuple[ModelConfig | None, str | None]:
        upload = staged / ".upload.mar"
        copy_limited(archive, upload, core.settings.max_upload_bytes)
        try:
            got = mar.unpack(upload, staged, filename, mar.MarLimits.of(core.settings))
        finally:
            upload.unlink(missing_ok=True)
        for note in got.notes:
            log.warning("upload %s from %s: %s", name, filename, note)
        if check is not None:
            check(got.config)
            return None, version or got.version
        return got.config, version or got.version

    return await _new_version(core, name, version, fill)


async def _new_version(core: Core, name: str, version: str | None,
                       fill: Callable[[Path], tuple[ModelConfig | None, str | None]]) -> dict:
    """Stage a version (`fill` writes its files and says its config and version), load and
    warm it there, then number and rename it into place; any failure leaves the store as
    it was."""
    check_name(name)
    if version is not None:
        check_version(version)
    store = core.store
    store.require_writable()
    async with core.mgmt_lock(name):
        with disk_full_is_507(f"upload of model '{name}'"):
            staged = await _run(store.new_staging)
            try:
                cfg, version = await _run(fill, staged)
                faults.point("upload.received")
                effective = cfg if cfg is not None else store.effective_config(name)
                if version is not None and version in store.versions(name):
                    raise Conflict(f"model '{name}' already has version {version}")
                others = store.versions(name)
                runner = await _validate(core, name, version or "0", staged, effective)
                faults.point("upload.validated")
                v = await _run(store.commit_version, name, staged, version, cfg)
            except BaseException:
                await _run(store.discard, staged)
                raise
        mv = await core.registry.install(name, v, runner, store.version_ident(name, v))
        if cfg is not None and others:
            # the model's config changed: its other versions follow it here as on every
            # other replica (which see the new config digest)
            try:
                await core.registry.load(name, only=set(others))
            except ServiceError as e:
                log.warning("upload %s/%s: other versions under the new config: %s",
                            name, v, e.message)
        await core.sync.mark_applied(name, config=cfg is not None)
    log.info("uploaded %s/%s", name, v)
    return {"name": name, "version": v, "state": mv.state.value}


def _decode_files(params: dict, limit: int) -> dict[str, dict[str, bytes]]:
    """`file:<version>/<filename>` base64 parameters → {version: {filename: bytes}}."""
    out: dict[str, dict[str, bytes]] = {}
    total = 0
    for key, val in params.items():
        if not key.startswith("file:"):
            continue
        path = key[5:]
        parts = path.split("/")
        if len(parts) != 2:
            raise BadRequest(f"file override '{path}' must be '<version>/<filename>'"[:300])
        v, fname = check_version(parts[0]), check_filename(parts[1])
        if not (fname.endswith("-symbol.json") or fname.endswith(".params")):
            raise BadRequest(f"file override '{path}': only *-symbol.json and *.params files "
                             "are accepted"[:300])
        if not isinstance(val, str):
            raise BadRequest(f"file override '{path}' must be a base64 string"[:300])
        try:
            data = base64.b64decode(val, validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadRequest(f"file override '{path}' is not valid base64: {e}"[:300]) from None
        total += len(data)
        if total > limit:
            raise PayloadTooLarge(f"file overrides exceed {limit} bytes")
        out.setdefault(v, {})[fname] = data
    return out


def _load_config(core: Core, name: str, params: dict) -> tuple[ModelConfig | None, bool]:
    """The `config` parameter of a load (None without one) and whether it is to be kept
    (`persist_config`: written to config.json) rather than used for this load only."""
    raw_cfg = params.get("config")
    if raw_cfg is not None and not isinstance(raw_cfg, (str, dict)):
        raise BadRequest("parameter 'config' must be a JSON string")
    persist = params.get("persist_config", False)
    if not isinstance(persist, bool):
        raise BadRequest("parameter 'persist_config' must be a boolean")
    cfg = parse_user_config(core, raw_cfg, "config parameter") if raw_cfg else None
    if cfg is not None and cfg.name not in (None, name):
        raise BadRequest(f"config names model '{cfg.name}' but the request loads '{name}'"[:300])
    if persist and cfg is None:
        raise BadRequest("'persist_config' needs a 'config' parameter")
    return cfg, persist


async def _record_config(core: Core, name: str, cfg: ModelConfig | None, persist: bool) -> None:
    """What every replica loads from now on: config.json rewritten (persist), the load's
    override, or — a plain load — config.json again (any override ends)."""
    store = core.store
    if store.read_only:
        return
    with disk_full_is_507(f"config of model '{name}'"):
        if cfg is None:
            await _run(lambda: store.set_state(name, LOADED, True, override=None))
        elif persist:
            await _run(store.write_config, name, cfg)
        else:
            await _run(store.set_override, name, cfg)


async def load(core: Core, name: str, params: dict) -> None:
    """Triton `POST /v2/repository/models/{name}/load` (optionally with config and files).
    A config applies to this load only (as Triton's model repository extension says): it is
    recorded as the model's override in the manifest, which the next plain load clears;
    `persist_config: true` writes it to config.json instead. Every replica follows: the
    manifest records the model as loaded, bumps its reload epoch and carries the override."""
    check_name(name)
    cfg, persist = _load_config(core, name, params)
    files = _decode_files(params, core.settings.max_upload_bytes)
    store, registry = core.store, core.registry
    if files or cfg is not None:
        store.require_writable()
    async with core.mgmt_lock(name):
        if not files:
            # a plain load serves config.json (not a previous load's override), or the
            # defaults when there is none; old versions keep serving if this fails
            await registry.load(name, cfg, plain=cfg is None)
            await _record_config(core, name, cfg, persist)
            await core.sync.mark_applied(name, config=True, epoch=True, state=True)
            return
        await _load_files(core, name, files, cfg, persist)
        await core.sync.mark_applied(name, config=cfg is not None)


async def _load_files(core: Core, name: str, files: dict[str, dict[str, bytes]],
                      cfg: ModelConfig | None, persist: bool) -> None:
    """A load with `file:` overrides: each version staged, validated, then committed."""
    store, registry = core.store, core.registry
    effective = cfg if cfg is not None else (store.read_config(name)
                                             if store.exists(name) else None)
    validated: list[tuple[str, Path, Runner | None]] = []
    with disk_full_is_507(f"load of model '{name}' with files"):
        try:
            for v, content in sorted(files.items(), key=lambda kv: int(kv[0])):
                staged = await _run(store.new_staging)
                validated.append((v, staged, None))
                for fname, data in content.items():
                    (staged / fname).write_bytes(data)
                runner = await _validate(core, name, v, staged, effective)
                validated[-1] = (v, staged, runner)
            for k, (v, staged, _) in enumerate(validated):
                await _run(lambda: store.commit_version(
                    name, staged, v, config=cfg if k == 0 and persist else None, replace=True))
        except BaseException:
            for _, staged, _ in validated:
                await _run(store.discard, staged)
            raise
        ended = cfg is None and store.override(name) is not None     # a plain load ends it
        if cfg is not None and not persist:
            await _run(store.set_override, name, cfg)
        elif ended:
            await _run(lambda: store.set_state(name, LOADED, override=None))
    for v, _, runner in validated:
        await registry.install(name, v, runner, store.version_ident(name, v))
    others = set(store.versions(name)) - set(files)
    if others and (cfg is not None or ended):     # the model's config changed: all follow it
        try:
            await registry.load(name, cfg, only=others, plain=cfg is None)
        except ServiceError as e:
            log.warning("load %s: other versions under the new config: %s", name, e.message)


async def unload(core: Core, name: str) -> None:
    """Unload on every replica (the manifest's desired state); files stay. On a read-only
    store only this replica can be told."""
    check_name(name)
    async with core.mgmt_lock(name):
        await core.registry.unload(name)
        if not core.store.read_only and core.store.exists(name):
            with disk_full_is_507(f"unload of model '{name}'", "unloaded on this replica "
                                  "only"):
                await _run(core.store.set_state, name, UNLOADED)
        await core.sync.mark_applied(name, state=True)


async def _refill(core: Core, name: str) -> None:
    """After a version is deleted, the version policy may serve versions it left out (the
    newest one gone, `latest` reaches one further back): load them."""
    reg = core.registry
    parked = {v for v, mv in reg.models.get(name, {}).items() if mv.excluded}
    if parked and name not in reg.unloaded:
        try:
            await reg.load(name, only=parked)
        except ServiceError as e:
            log.warning("delete %s: versions the policy now serves: %s", name, e.message)


async def delete(core: Core, name: str, version: str | None = None) -> None:
    """Unload and remove a version (or the whole model) from the store."""
    check_name(name)
    store = core.store
    async with core.mgmt_lock(name):
        if version is not None:
            check_version(version)
            if version not in store.versions(name):
                raise NotFound(f"model '{name}' has no version {version}")
        elif not store.exists(name):
            raise NotFound(f"Model with name '{name}' does not exist.")
        store.require_writable()
        await core.registry.forget(name, version)
        with disk_full_is_507(f"delete of model '{name}'", "its files may be gone while "
                              "the store's manifest still lists them"):
            if version is None:
                await _run(store.delete_model, name)
            else:
                await _run(store.delete_version, name, version)
        if version is not None:
            await _refill(core, name)
        await core.sync.mark_applied(name)
    log.info("deleted %s%s", name, f"/{version}" if version else "")
