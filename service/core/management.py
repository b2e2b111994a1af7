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
from typing import BinaryIO

from ..errors import BadRequest, Conflict, NotFound, PayloadTooLarge, ServiceError
from ..limits import check_json_depth
from ..repository import faults
from ..repository.config import ModelConfig, parse_config
from ..repository.manifest import LOADED, UNLOADED
from ..repository.store import check_filename, check_name, check_version, find_files
from ..runtime.runner import Runner
from .dataplane import Core

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
    check_name(name)
    if version is not None:
        check_version(version)
    store = core.store
    store.require_writable()
    cfg = parse_user_config(core, config, "uploaded config") if config else None
    async with core.mgmt_lock(name):
        staged = await _run(store.new_staging)
        try:
            limit = core.settings.max_upload_bytes
            await _run(copy_limited, symbol, staged / f"{name}-symbol.json", limit)
            if params is not None:
                await _run(copy_limited, params, staged / f"{name}-0000.params", limit)
            faults.point("upload.received")
            effective = cfg if cfg is not None else store.read_config(name)
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


async def load(core: Core, name: str, params: dict) -> None:
    """Triton `POST /v2/repository/models/{name}/load` (optionally with config and files).
    Every replica follows: the manifest records the model as loaded, bumps its reload epoch
    and, with a config, its new digest."""
    check_name(name)
    raw_cfg = params.get("config")
    if raw_cfg is not None and not isinstance(raw_cfg, (str, dict)):
        raise BadRequest("parameter 'config' must be a JSON string")
    cfg = parse_user_config(core, raw_cfg, "config parameter") if raw_cfg else None
    if cfg is not None and cfg.name not in (None, name):
        raise BadRequest(f"config names model '{cfg.name}' but the request loads '{name}'"[:300])
    files = _decode_files(params, core.settings.max_upload_bytes)
    store, registry = core.store, core.registry
    if files or cfg is not None:
        store.require_writable()
    async with core.mgmt_lock(name):
        if not files:
            await registry.load(name, cfg)           # old versions keep serving if this fails
            if cfg is not None:
                await _run(store.write_config, name, cfg)
            elif not store.read_only:
                await _run(store.set_state, name, LOADED, True)
            await core.sync.mark_applied(name, config=True, epoch=True, state=True)
            return
        effective = cfg if cfg is not None else (store.read_config(name)
                                                 if store.exists(name) else None)
        validated = []
        try:
            for v, content in sorted(files.items(), key=lambda kv: int(kv[0])):
                staged = await _run(store.new_staging)
                validated.append((v, staged, None))
                for fname, data in content.items():
                    (staged / fname).write_bytes(data)
                runner = await _validate(core, name, v, staged, effective)
                validated[-1] = (v, staged, runner)
            for k, (v, staged, _) in enumerate(validated):
                await _run(lambda: store.commit_version(name, staged, v,
                                                        config=cfg if k == 0 else None,
                                                        replace=True))
        except BaseException:
            for _, staged, _ in validated:
                await _run(store.discard, staged)
            raise
        for v, _, runner in validated:
            await registry.install(name, v, runner, store.version_ident(name, v))
        others = set(store.versions(name)) - set(files)
        if others and cfg is not None:            # the model's config changed: all follow it
            try:
                await registry.load(name, only=others)
            except ServiceError as e:
                log.warning("load %s: other versions under the new config: %s", name, e.message)
        await core.sync.mark_applied(name, config=cfg is not None)


async def unload(core: Core, name: str) -> None:
    """Unload on every replica (the manifest's desired state); files stay. On a read-only
    store only this replica can be told."""
    check_name(name)
    async with core.mgmt_lock(name):
        await core.registry.unload(name)
        if not core.store.read_only and core.store.exists(name):
            await _run(core.store.set_state, name, UNLOADED)
        await core.sync.mark_applied(name, state=True)


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
        if version is None:
            await _run(store.delete_model, name)
        else:
            await _run(store.delete_version, name, version)
        await core.sync.mark_applied(name)
    log.info("deleted %s%s", name, f"/{version}" if version else "")
