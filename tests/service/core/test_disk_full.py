"""A full disk (ENOSPC/EDQUOT) while an upload writes to the store is 507 with a clear message:
nothing half-written, the models already there keep serving, and the same upload succeeds once
space is freed (issue 26, defect 4). Fast: the write path raises ENOSPC part-way (monkeypatch);
slow: a real, small tmpfs filled up (root only)."""
from __future__ import annotations

import errno
import json
import os
import uuid

import httpx
import numpy as np
import pytest

from mgmt_fixtures import small_tmpfs
from serverproc import STORE, copy_store, infer_json, inproc_server
from service.core import management
from service.repository.store import ModelStore

X = np.zeros((1, 512), np.float32)


def _files() -> dict:
    d = STORE / "mlp" / "1"
    return {"symbol": ("mlp-symbol.json", (d / "mlp-symbol.json").read_bytes()),
            "params": ("mlp-0000.params", (d / "mlp-0000.params").read_bytes())}


def _tree(root) -> dict:
    """Every file (dot-dirs included, but not the lock/manifest) → its bytes."""
    out = {}
    for dp, _, fns in os.walk(root):
        for f in fns:
            p = os.path.join(dp, f)
            rel = os.path.relpath(p, root)
            if rel not in (".lock", ".manifest.json"):
                out[rel] = open(p, "rb").read()
    return out


def _check_refused(r: httpx.Response, c: httpx.Client, before: dict, root) -> None:
    assert r.status_code == 507, r.text
    msg = r.json()["error"]
    assert "disk is full" in msg and ("'mlp2'" in msg or "'mlp'" in msg), msg
    assert "Traceback" not in msg
    assert _tree(root) == before                       # nothing half-written, nothing lost
    assert c.post("/v2/models/mlp/infer", json=infer_json("mlp", X)).status_code == 200


def test_enospc_while_writing_the_upload_is_507(tmp_path, monkeypatch):
    store = copy_store(tmp_path / "store", ("mlp",))
    real = management.copy_limited

    def half_then_full(src, dst, limit):      # what a filling disk does: part, then ENOSPC
        with open(dst, "wb") as out:
            out.write(src.read(1000))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))

    with inproc_server(store) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        before = _tree(store)
        monkeypatch.setattr(management, "copy_limited", half_then_full)
        r = c.post("/v2/repository/models/mlp2/upload", files=_files())
        _check_refused(r, c, before, store)
        assert "No space left on device" in r.json()["error"]
        monkeypatch.setattr(management, "copy_limited", real)          # space freed
        r = c.post("/v2/repository/models/mlp2/upload", files=_files())
        assert r.status_code == 201, r.text
        assert c.post("/v2/models/mlp2/infer", json=infer_json("mlp2", X)).status_code == 200


@pytest.mark.parametrize("errno_", [errno.ENOSPC, errno.EDQUOT])
def test_full_disk_at_commit_leaves_the_model_as_it_was(tmp_path, monkeypatch, errno_):
    """The version is renamed in, then config.json or the manifest cannot be written: the
    version goes back out and config.json keeps its old bytes."""
    store = copy_store(tmp_path / "store", ("mlp",))
    with inproc_server(store) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        before = _tree(store)
        gen = srv.core.store.manifest().generation
        real = ModelStore.publish

        def full(self, *a, **k):
            raise OSError(errno_, os.strerror(errno_))

        monkeypatch.setattr(ModelStore, "publish", full)
        cfg = json.loads((store / "mlp" / "config.json").read_text())
        cfg["description"] = "new"
        r = c.post("/v2/repository/models/mlp/upload",
                   files={**_files(), "config": ("config.json", json.dumps(cfg))})
        _check_refused(r, c, before, store)
        monkeypatch.setattr(ModelStore, "publish", real)
        assert srv.core.store.manifest().generation == gen
        assert srv.core.store.versions("mlp") == ["1"]
        r = c.post("/v2/repository/models/mlp/upload",
                   files={**_files(), "config": ("config.json", json.dumps(cfg))})
        assert r.status_code == 201 and r.json()["version"] == "2", r.text


@pytest.mark.slow
def test_a_really_full_disk_is_507_and_the_upload_works_once_freed(tmp_path):
    with small_tmpfs(tmp_path / "tmpfs") as mnt:
        _fill_and_free(mnt)


def _fill_and_free(mnt) -> None:
    store = copy_store(mnt / "store", ("mlp",))
    filler = mnt / f"filler-{uuid.uuid4().hex}"
    with inproc_server(store) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        st = os.statvfs(mnt)
        room = st.f_bavail * st.f_frsize
        with open(filler, "wb") as f:          # leave ~200 KB: less than the params file
            f.write(b"\0" * max(0, room - 200_000))
        before = _tree(store)
        r = c.post("/v2/repository/models/mlp2/upload", files=_files())
        _check_refused(r, c, before, store)
        filler.unlink()
        r = c.post("/v2/repository/models/mlp2/upload", files=_files())
        assert r.status_code == 201, r.text
        assert c.post("/v2/models/mlp2/infer", json=infer_json("mlp2", X)).status_code == 200


def test_full_disk_on_unload_and_delete_is_507(tmp_path, monkeypatch):
    """The manifest they rewrite does not fit: 507, not a 500 with a traceback."""
    store = copy_store(tmp_path / "store", ("mlp",))
    with inproc_server(store) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        def full(self, *a, **k):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(ModelStore, "publish", full)
        for r in (c.post("/v2/repository/models/mlp/unload"), c.delete("/v2/models/mlp")):
            assert r.status_code == 507 and "disk is full" in r.json()["error"], r.text
