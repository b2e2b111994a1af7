"""Model management: upload, Triton load (with config / files), unload, delete.

Every new version is written into the store's staging area, loaded and warmed there by a real
`Runner.load`, and only then renamed into place and served; any failure discards the staging
directory, so the store is exactly as it was.
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import shutil
from pathlib import Path
from typing import BinaryIO

from .config import ModelConfig, parse_config
from .core import Core
from .errors import BadRequest, Conflict, NotFound, PayloadTooLarge
from .runner import Runner
from .store import check_filename, check_name, check_version, find_files

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


async def _validate(core: Core, name: str, version: str, staged: Path,
                    cfg: ModelConfig | None) -> Runner:
    s = core.settings
    loop = asyncio.get_running_loop()
    files = find_files(staged)
    return await loop.run_in_executor(
        core.registry.load_pool, lambda: Runner.load(
            name, version, files, cfg, max_nodes=s.max_graph_nodes,
            max_params_bytes=s.max_params_bytes,
            default_max_batch_size=s.default_max_batch_size))


async def upload(core: Core, name: str, symbol: BinaryIO, params: BinaryIO | None,
                 config: bytes | None, version: str | None = None) -> dict:
    """Multipart upload → a new version (validated before it becomes visible)."""
    check_name(name)
    if version is not None:
        check_version(version)
    cfg = parse_config(config, "uploaded config") if config else None
    store = core.store
    loop = asyncio.get_running_loop()
    async with core.mgmt_lock(name):
        staged = store.new_staging()
        try:
            limit = core.settings.max_upload_bytes
            await loop.run_in_executor(None, copy_limited, symbol, staged / f"{name}-symbol.json", limit)
            if params is not None:
                await loop.run_in_executor(None, copy_limited, params,
                                           staged / f"{name}-0000.params", limit)
            effective = cfg if cfg is not None else store.read_config(name)
            v = version or store.next_version(name)
            if v in store.versions(name):
                raise Conflict(f"model '{name}' already has version {v}")
            runner = await _validate(core, name, v, staged, effective)
            store.commit_version(name, staged, v, config=cfg)
        except BaseException:
            store.discard(staged)
            raise
        mv = await core.registry.install(name, v, runner)
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
            raise BadRequest(f"file override '{path}' must be '<version>/<filename>'")
        v, fname = check_version(parts[0]), check_filename(parts[1])
        if not (fname.endswith("-symbol.json") or fname.endswith(".params")):
            raise BadRequest(f"file override '{path}': only *-symbol.json and *.params files "
                             "are accepted")
        if not isinstance(val, str):
            raise BadRequest(f"file override '{path}' must be a base64 string")
        try:
            data = base64.b64decode(val, validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadRequest(f"file override '{path}' is not valid base64: {e}") from None
        total += len(data)
        if total > limit:
            raise PayloadTooLarge(f"file overrides exceed {limit} bytes")
        out.setdefault(v, {})[fname] = data
    return out


async def load(core: Core, name: str, params: dict) -> None:
    """Triton `POST /v2/repository/models/{name}/load` (optionally with config and files)."""
    check_name(name)
    raw_cfg = params.get("config")
    if raw_cfg is not None and not isinstance(raw_cfg, (str, dict)):
        raise BadRequest("parameter 'config' must be a JSON string")
    cfg = parse_config(raw_cfg, "config parameter") if raw_cfg else None
    if cfg is not None and cfg.name not in (None, name):
        raise BadRequest(f"config names model '{cfg.name}' but the request loads '{name}'")
    files = _decode_files(params, core.settings.max_upload_bytes)
    store, registry = core.store, core.registry
    async with core.mgmt_lock(name):
        if not files:
            await registry.load(name, cfg)           # old versions keep serving if this fails
            if cfg is not None:
                store.write_config(name, cfg)
            return
        effective = cfg if cfg is not None else (store.read_config(name)
                                                 if store.exists(name) else None)
        validated = []
        try:
            for v, content in sorted(files.items(), key=lambda kv: int(kv[0])):
                staged = store.new_staging()
                validated.append((v, staged, None))
                for fname, data in content.items():
                    (staged / fname).write_bytes(data)
                runner = await _validate(core, name, v, staged, effective)
                validated[-1] = (v, staged, runner)
            for k, (v, staged, _) in enumerate(validated):
                store.commit_version(name, staged, v, config=cfg if k == 0 else None, replace=True)
        except BaseException:
            for _, staged, _ in validated:
                store.discard(staged)
            raise
        for v, _, runner in validated:
            await registry.install(name, v, runner)


async def unload(core: Core, name: str) -> None:
    await core.registry.unload(name)


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
        await core.registry.forget(name, version)
        loop = asyncio.get_running_loop()
        if version is None:
            await loop.run_in_executor(None, store.delete_model, name)
        else:
            await loop.run_in_executor(None, store.delete_version, name, version)
            if not store.versions(name):          # last version gone: drop the model dir too
                await loop.run_in_executor(None, shutil.rmtree, store.model_dir(name), True)
    log.info("deleted %s%s", name, f"/{version}" if version else "")
