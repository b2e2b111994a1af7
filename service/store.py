"""The on-disk model repository.

Layout: `<root>/<model>/config.json` (optional) and `<root>/<model>/<version>/<prefix>-symbol.json`
+ `<prefix>-NNNN.params`, exactly as MXNet exports them. New versions are written into
`<root>/.staging/` (same filesystem), validated by the caller, then moved in with one
`os.rename`, so readers never see half a version and a crash leaves only staging debris, which
`recover()` removes at startup. Deletions go through `<root>/.trash/` for the same reason.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import NamedTuple

from .config import ModelConfig, parse_config
from .errors import BadRequest, Conflict, NotFound

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")
_VERSION_RE = re.compile(r"^[1-9][0-9]{0,8}$")
_PARAMS_RE = re.compile(r"^(?P<prefix>.+)-(?P<epoch>[0-9]{4,})\.params$")
RESERVED = {"stats"}                 # would collide with GET /v2/models/stats
STAGING, TRASH = ".staging", ".trash"
CONFIG = "config.json"


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name) or ".." in name or name in RESERVED:
        raise BadRequest(f"invalid model name {name!r}: use 1-128 letters, digits, '_', '-', '.' "
                         "(not starting with '.', no '..', not 'stats')"[:300])
    return name


def check_version(version: str) -> str:
    if not isinstance(version, str) or not _VERSION_RE.match(version):
        raise BadRequest(f"invalid model version {version!r}: a positive integer is expected"[:200])
    return version


def check_filename(fname: str) -> str:
    if (not fname or "/" in fname or "\\" in fname or fname.startswith(".")
            or not _NAME_RE.match(fname)):
        raise BadRequest(f"invalid file name {fname!r}"[:200])
    return fname


class ModelFiles(NamedTuple):
    symbol: Path
    params: Path | None


def find_files(d: Path) -> ModelFiles:
    """The `*-symbol.json` and matching highest-epoch `*.params` of a version directory."""
    syms = sorted(p for p in d.glob("*-symbol.json") if p.is_file())
    if not syms:
        raise BadRequest(f"no *-symbol.json file in version directory '{d.name}'")
    if len(syms) > 1:
        raise BadRequest(f"several symbol files in version '{d.name}': {[p.name for p in syms]}")
    prefix = syms[0].name[: -len("-symbol.json")]
    cands = []
    for p in d.glob("*.params"):
        m = _PARAMS_RE.match(p.name)
        if m and m["prefix"] == prefix and p.is_file():
            cands.append((int(m["epoch"]), p))
    if not cands:
        loose = [p for p in d.glob("*.params") if p.is_file()]
        if len(loose) > 1:
            raise BadRequest(f"several params files in version '{d.name}' and none named "
                             f"'{prefix}-NNNN.params'")
        return ModelFiles(syms[0], loose[0] if loose else None)
    return ModelFiles(syms[0], max(cands)[1])


class ModelStore:
    def __init__(self, root: str | os.PathLike, create: bool = True):
        self.root = Path(root).expanduser().resolve()
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        if not self.root.is_dir():
            raise NotFound(f"model store {self.root} is not a directory")
        self.lock = threading.RLock()     # serialises mutations (version numbering, renames)

    # -- paths, always checked to stay inside the store ----------------------------------------
    def _inside(self, p: Path) -> Path:
        real = p.resolve()
        if real != self.root and self.root not in real.parents:
            raise BadRequest(f"'{p.name}' points outside the model store")
        return p

    def model_dir(self, name: str) -> Path:
        return self._inside(self.root / check_name(name))

    def version_dir(self, name: str, version: str) -> Path:
        return self._inside(self.model_dir(name) / check_version(version))

    # -- reading -------------------------------------------------------------------------------
    def recover(self) -> None:
        """Drop debris of interrupted uploads/deletes (a crash mid-write leaves only these)."""
        for sub in (STAGING, TRASH):
            shutil.rmtree(self.root / sub, ignore_errors=True)

    def models(self) -> list[str]:
        out = []
        for p in sorted(self.root.iterdir()):
            if p.name.startswith(".") or not p.is_dir():
                continue
            try:
                check_name(p.name)
                self._inside(p)
            except BadRequest:
                continue
            out.append(p.name)
        return out

    def exists(self, name: str) -> bool:
        return self.model_dir(name).is_dir()

    def versions(self, name: str) -> list[str]:
        d = self.model_dir(name)
        if not d.is_dir():
            return []
        vs = []
        for p in d.iterdir():
            if p.is_dir() and _VERSION_RE.match(p.name):
                try:
                    self._inside(p)
                except BadRequest:
                    continue
                vs.append(p.name)
        return sorted(vs, key=int)

    def read_config(self, name: str) -> ModelConfig | None:
        f = self.model_dir(name) / CONFIG
        if not f.is_file():
            return None
        self._inside(f)
        return parse_config(f.read_bytes(), f"config of model '{name}'")

    def files(self, name: str, version: str) -> ModelFiles:
        d = self.version_dir(name, version)
        if not d.is_dir():
            raise NotFound(f"model '{name}' has no version {version} in the store")
        mf = find_files(d)
        for p in (mf.symbol, mf.params):
            if p is not None:
                self._inside(p)
        return mf

    # -- writing -------------------------------------------------------------------------------
    def new_staging(self) -> Path:
        base = self.root / STAGING
        base.mkdir(exist_ok=True)
        return Path(tempfile.mkdtemp(dir=base))

    def next_version(self, name: str) -> str:
        vs = self.versions(name)
        return str(int(vs[-1]) + 1) if vs else "1"

    def commit_version(self, name: str, staged: Path, version: str,
                       config: ModelConfig | None = None, replace: bool = False) -> None:
        """Move a validated staged version directory into place (one rename)."""
        check_version(version)
        with self.lock:
            mdir = self.model_dir(name)
            if not mdir.exists():
                # new model: assemble the whole model dir in staging, then one rename
                holder = staged.parent / f"{staged.name}.model"
                holder.mkdir()
                os.rename(staged, holder / version)
                if config is not None:
                    (holder / CONFIG).write_bytes(config.to_json_bytes())
                os.rename(holder, mdir)
                return
            target = mdir / version
            if target.exists():
                if not replace:
                    raise Conflict(f"model '{name}' already has version {version}")
                self._to_trash(target)
            os.rename(staged, target)
            if config is not None:
                self.write_config(name, config)

    def write_config(self, name: str, config: ModelConfig) -> None:
        with self.lock:
            mdir = self.model_dir(name)
            fd, tmp = tempfile.mkstemp(dir=mdir, prefix=".config-")
            with os.fdopen(fd, "wb") as f:
                f.write(config.to_json_bytes())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, mdir / CONFIG)

    def delete_version(self, name: str, version: str) -> None:
        with self.lock:
            d = self.version_dir(name, version)
            if not d.is_dir():
                raise NotFound(f"model '{name}' has no version {version}")
            self._to_trash(d)

    def delete_model(self, name: str) -> None:
        with self.lock:
            d = self.model_dir(name)
            if not d.is_dir():
                raise NotFound(f"model '{name}' is not in the store")
            self._to_trash(d)

    def _to_trash(self, p: Path) -> None:
        trash = self.root / TRASH
        trash.mkdir(exist_ok=True)
        dest = Path(tempfile.mkdtemp(dir=trash))
        if p.is_symlink():
            p.unlink()
        else:
            os.rename(p, dest / p.name)
        shutil.rmtree(dest, ignore_errors=True)

    def discard(self, staged: Path) -> None:
        shutil.rmtree(staged, ignore_errors=True)
        shutil.rmtree(staged.parent / f"{staged.name}.model", ignore_errors=True)
