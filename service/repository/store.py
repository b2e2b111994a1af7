"""The on-disk model repository.

Layout: `<root>/<model>/config.json` (optional) and `<root>/<model>/<version>/<prefix>-symbol.json`
+ `<prefix>-NNNN.params`, exactly as MXNet exports them. New versions are written into a
per-process directory under `<root>/.staging/` (same filesystem), validated by the caller,
then moved in with one `os.rename`, so readers never see half a version. Deletions go through
`<root>/.trash/`. Every commit runs under the cross-process `StoreLock` (version numbering
included, so two replicas never pick the same number) and ends with a new store manifest
(see manifest.py). A crash leaves only owned debris, which `recovery.recover(store)` clears.

A store we cannot write to (a read-only KServe/PVC mount) serves normally; writes answer 403.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, NamedTuple

from ..errors import BadRequest, Conflict, Forbidden, InsufficientStorage, NotFound
from . import faults
from .config import ModelConfig
from .configs import ConfigReading
from .drops import RECORD, Record, parse_record, record_bytes
from .manifest import (KEEP, LOADED, Manifest, StoreLock, config_digest, next_manifest,
                       read_manifest, write_atomic, write_manifest)
from .owner import owner_prefix

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")
_VERSION_RE = re.compile(r"^[1-9][0-9]{0,8}$")
_PARAMS_RE = re.compile(r"^(?P<prefix>.+)-(?P<epoch>[0-9]{4,})\.params$")
RESERVED = {"stats"}                 # would collide with GET /v2/models/stats
STAGING, TRASH = ".staging", ".trash"
CONFIG = "config.json"
_KEEP = KEEP          # publish(override=_KEEP): the model's override stays as it is
RESTORE = "restore="                 # trash entry of a replaced version: `restore=<model>=<v>`


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


_DISK_FULL = {errno.ENOSPC, errno.EDQUOT}


@contextmanager
def disk_full_is_507(what: str, left: str = "nothing was written") -> Iterator[None]:
    """A full disk or quota while writing to the store is the server's lack of room (507,
    retry once space is freed), not a crash: callers discard what they staged first;
    `left` says what the store holds then."""
    try:
        yield
    except OSError as e:
        if e.errno not in _DISK_FULL:
            raise
        raise InsufficientStorage(f"{what}: the model store's disk is full "
                                  f"({os.strerror(e.errno)}); {left}. Free space (or raise "
                                  "the quota) and send it again") from None


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


def _ident(p: Path) -> tuple | None:
    """Identity of a directory entry: a replaced version/config gets a new one."""
    try:
        st = p.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size if not p.is_dir() else 0)


class ModelStore(ConfigReading):
    def __init__(self, root: str | os.PathLike, create: bool = True,
                 read_only: bool | None = None, stale_s: float = 3600.0,
                 max_config_bytes: int = 1 << 20):
        self.root = Path(root).expanduser().resolve()
        if create and not self.root.exists():
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise NotFound(f"model store {self.root} cannot be created: {e}") from None
        if not self.root.is_dir():
            raise NotFound(f"model store {self.root} is not a directory")
        self.stale_s, self.max_config_bytes = stale_s, max_config_bytes
        self.read_only = self._detect_read_only() if read_only is None else read_only
        self.lock = StoreLock(self.root)  # serialises commits across threads and processes

    @property
    def location(self) -> str:
        return str(self.root)

    def _detect_read_only(self) -> bool:
        """Without writing anything: a read-only mount, or no write permission."""
        try:
            if os.statvfs(self.root).f_flag & os.ST_RDONLY:
                return True
        except OSError:
            pass
        return not os.access(self.root, os.W_OK)

    def require_writable(self) -> None:
        if self.read_only:
            raise Forbidden(f"the model store is read-only: uploads, deletes and config "
                            f"changes are refused (store {self.root.name!r})")

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

    def version_ident(self, name: str, version: str) -> tuple | None:
        return _ident(self.version_dir(name, version))

    def config_bytes(self, name: str) -> bytes | None:
        f = self.model_dir(name) / CONFIG
        if not f.is_file():
            return None
        self._inside(f)
        limit = self.max_config_bytes
        if f.stat().st_size > limit:
            raise BadRequest(f"config of model '{name}' is over {limit} bytes")
        return f.read_bytes()

    def files(self, name: str, version: str) -> ModelFiles:
        d = self.version_dir(name, version)
        if not d.is_dir():
            raise NotFound(f"model '{name}' has no version {version} in the store")
        mf = find_files(d)
        for p in (mf.symbol, mf.params):
            if p is not None:
                self._inside(p)
        return mf

    def scan(self, only: str | None = None
             ) -> dict[str, tuple[dict[str, tuple | None], tuple | None]]:
        """Every model (or just `only`): ({version: identity}, config identity); stats only."""
        out = {}
        if only is None:
            names = self.models()
        else:
            try:
                names = [only] if self.model_dir(only).is_dir() else []
            except BadRequest:
                names = []
        for name in names:
            try:
                vs = {v: self.version_ident(name, v) for v in self.versions(name)}
                out[name] = (vs, _ident(self.model_dir(name) / CONFIG))
            except (OSError, BadRequest):
                continue
        return out

    def manifest(self) -> Manifest | None:
        return read_manifest(self.root)

    # -- writing (blocking: run these in a worker thread) --------------------------------------
    def new_staging(self) -> Path:
        self.require_writable()
        base = self.root / STAGING
        base.mkdir(exist_ok=True)
        d = base / f"{owner_prefix()}{os.urandom(6).hex()}"
        d.mkdir()
        return d

    def next_version(self, name: str) -> str:
        vs = self.versions(name)
        return str(int(vs[-1]) + 1) if vs else "1"

    def commit_version(self, name: str, staged: Path, version: str | None = None,
                       config: ModelConfig | None = None, replace: bool = False) -> str:
        """Move a validated staged version directory into place (one rename) under the store
        lock, numbering it (next free number) unless `version` is given; publish the manifest.
        Returns the version."""
        self.require_writable()
        with self.lock:
            v = check_version(version) if version is not None else self.next_version(name)
            mdir = self.model_dir(name)
            undo, old_config = None, self.config_bytes(name) if mdir.exists() else None
            write_cfg = config is not None
            if not mdir.exists():
                # new model: assemble the whole model dir in staging, then one rename
                holder = staged.parent / f"{staged.name}.model"
                holder.mkdir()
                os.rename(staged, holder / v)
                if config is not None:
                    (holder / CONFIG).write_bytes(config.to_json_bytes())
                os.rename(holder, mdir)
                undo = lambda: os.rename(mdir, holder)      # noqa: E731
                write_cfg = False                           # it came with the model dir
                faults.point("commit.renamed")
            else:
                target = mdir / v
                if target.exists():
                    if not replace:
                        raise Conflict(f"model '{name}' already has version {v}")
                    trash = self._to_trash(target, restore=f"{RESTORE}{name}={v}")
                    faults.point("commit.replaced")
                    os.rename(staged, target)
                    shutil.rmtree(trash, ignore_errors=True)
                else:
                    os.rename(staged, target)
                    undo = lambda: os.rename(target, staged)     # noqa: E731
                faults.point("commit.renamed")
            try:
                if write_cfg:
                    self._write_config(name, config)
                    faults.point("commit.config")
                # a new config.json is a persistent change: it ends a load's override
                self.publish(name, LOADED, override=None if config is not None else _KEEP)
            except OSError:
                # no room for config.json or the manifest: the version goes back to staging
                # (the caller discards it) and the old config stays, so nothing is half-done
                self._undo_commit(name, undo, old_config)
                raise
        return v

    def _undo_commit(self, name: str, undo, old_config: bytes | None) -> None:
        if undo is None:         # a replaced version: its predecessor is already gone
            return
        undo()
        f = self.model_dir(name) / CONFIG
        if old_config is None:
            f.unlink(missing_ok=True)
        elif f.is_file() and f.read_bytes() != old_config:
            write_atomic(f, old_config)

    def _write_config(self, name: str, config: ModelConfig) -> None:
        write_atomic(self.model_dir(name) / CONFIG, config.to_json_bytes())

    def write_config(self, name: str, config: ModelConfig) -> None:
        """A model's new persistent config (ends any load override); replicas reload it."""
        self.require_writable()
        with self.lock:
            self._write_config(name, config)
            self.publish(name, LOADED, bump=True, override=None)

    def set_override(self, name: str, config: ModelConfig) -> None:
        """Serve `config` instead of config.json until the next plain load (Triton's `load`
        with a config); config.json is untouched. Replicas reload with it."""
        self.require_writable()
        with self.lock:
            self.publish(name, LOADED, bump=True, override=config.to_json_bytes().decode())

    def set_state(self, name: str, state: str, bump: bool = False,
                  override: object = _KEEP) -> None:
        """Desired state for every replica (`loaded`/`unloaded`); `bump` asks them to reload;
        `override=None` ends a load's config override."""
        self.require_writable()
        with self.lock:
            self.publish(name, state, bump=bump, override=override)

    def delete_version(self, name: str, version: str) -> None:
        self.require_writable()
        with self.lock:
            d = self.version_dir(name, version)
            if not d.is_dir():
                raise NotFound(f"model '{name}' has no version {version}")
            if self.versions(name) == [version]:      # last version: the model goes too
                shutil.rmtree(self._to_trash(self.model_dir(name)), ignore_errors=True)
            else:
                shutil.rmtree(self._to_trash(d), ignore_errors=True)
            faults.point("delete.trashed")
            self.publish()

    def delete_model(self, name: str) -> None:
        self.require_writable()
        with self.lock:
            d = self.model_dir(name)
            if not d.is_dir():
                raise NotFound(f"model '{name}' is not in the store")
            shutil.rmtree(self._to_trash(d), ignore_errors=True)
            faults.point("delete.trashed")
            self.publish()

    def _to_trash(self, p: Path, restore: str | None = None) -> Path:
        """Move `p` out of sight with one rename; returns the trash dir to remove. A replaced
        version is kept as `restore=<model>=<v>` until the new one is in (see recovery.py)."""
        trash = self.root / TRASH
        trash.mkdir(exist_ok=True)
        dest = trash / f"{owner_prefix()}{os.urandom(6).hex()}"
        dest.mkdir()
        if p.is_symlink():
            p.unlink()
        else:
            os.rename(p, dest / (restore or p.name))
        return dest

    def discard(self, staged: Path) -> None:
        shutil.rmtree(staged, ignore_errors=True)
        shutil.rmtree(staged.parent / f"{staged.name}.model", ignore_errors=True)

    def publish(self, name: str | None = None, state: str | None = None,
                bump: bool = False, if_changed: bool = False,
                override: object = _KEEP) -> Manifest:
        """Rewrite the manifest from the directories (under the lock), carrying each model's
        desired state, epoch and override over; `name` gets `state`/`bump`/`override`.
        Generation + 1."""
        with self.lock:
            current = read_manifest(self.root)
            found = {}
            for m in self.models():
                try:
                    digest = config_digest(self.config_bytes(m))
                except (OSError, BadRequest):
                    digest = "unreadable"
                found[m] = (tuple(self.versions(m)), digest)
            new = next_manifest(current, found, name, state, bump, override)
            if if_changed and current is not None and current.models == new.models:
                return current
            write_manifest(self.root, new)
            return new


    # -- `.mar` archives dropped into the directory (drops.py) --------------------------------
    def dropped_archives(self) -> dict[str, list]:
        out = {}
        for p in sorted(self.root.glob("*.mar")):
            try:
                if p.is_file() and not p.is_symlink():
                    st = p.stat()
                    out[p.name] = [st.st_size, st.st_mtime_ns]
            except OSError:
                continue              # removed while listing
        return out

    def update_drop_record(self, change: Callable[[Record], Record | None]) -> Record:
        with self.lock:
            f = self.root / RECORD
            try:
                record = parse_record(f.read_bytes() if f.is_file() else None)
            except OSError:
                record = {}
            new = change(record)
            if new is None:
                return record
            write_atomic(f, record_bytes(new))
            return new

    @contextmanager
    def open_dropped(self, fname: str) -> Iterator[BinaryIO]:
        with open(self._inside(self.root / fname), "rb") as f:
            yield f
