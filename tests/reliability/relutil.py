"""Helpers for the reliability suite: the in-process server of tests/serverproc.py with the
suite's defaults, store snapshots and a store consistency check, and a results recorder printed
at the end of the run."""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import numpy as np

import serverproc
from serverproc import ROOT, copy_store

MX1 = ROOT / "tests" / "fixtures" / "mxnet-1.9.1"
RESULTS: list[dict] = []          # rows for the terminal summary (see conftest.py)


def record(kind: str, what: str, **figures) -> None:
    RESULTS.append({"kind": kind, "what": what, **figures})


def make_store(dst: Path, models: tuple[str, ...] = ("mlp", "lenet")) -> Path:
    return copy_store(dst, models)


@contextmanager
def inproc_server(store: Path, **overrides) -> Iterator[SimpleNamespace]:
    """serverproc's in-process server, quieter (errors only) unless `log_level` is given."""
    with serverproc.inproc_server(store, **{"log_level": "error", **overrides}) as srv:
        yield srv


def snapshot(root: Path) -> dict[str, int]:
    """Every file of the store that serving depends on (dot-entries excluded), with sizes."""
    out = {}
    for dp, dns, fns in os.walk(root):
        dns[:] = [d for d in dns if not d.startswith(".")]
        for f in fns:
            if not f.startswith("."):
                p = os.path.join(dp, f)
                out[os.path.relpath(p, root)] = os.path.getsize(p)
    return out


def debris(root: Path) -> list[str]:
    """Leftovers of interrupted writes: staging/trash entries and temp files."""
    out = []
    for sub in (".staging", ".trash"):
        d = root / sub
        if d.is_dir():
            out += [f"{sub}/{p.name}" for p in d.iterdir()]
    for d in [root, *(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))]:
        out += [str(p.relative_to(root)) for p in d.glob(".tmp-*")]
    return out


def check_consistent(root: Path) -> dict[str, list[str]]:
    """The store after recovery: no debris, every version directory complete and loadable,
    the manifest agreeing with the directories. Returns {model: versions}."""
    from service.runtime.runner import Runner
    from service.repository.store import ModelStore
    assert not debris(root), f"debris left after recovery: {debris(root)}"
    st = ModelStore(root, create=False)
    models = {m: st.versions(m) for m in st.models()}
    for m, vs in models.items():
        assert vs, f"model dir '{m}' without versions"
        cfg = st.read_config(m)
        for v in vs:
            Runner.load(m, v, st.files(m, v), cfg)          # raises if half-written
    man = json.loads((root / ".manifest.json").read_text())
    assert {m: e["versions"] for m, e in man["models"].items()} == models, (man, models)
    return models


def mlp_body(x: np.ndarray | None = None) -> dict:
    x = np.ones((1, 512), np.float32) if x is None else x
    return {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                        "data": x.ravel().tolist()}]}


def fixture_files(name: str = "fc_flatten") -> dict:
    return {"symbol": (f"{name}-symbol.json", (MX1 / f"{name}-symbol.json").read_bytes()),
            "params": (f"{name}-0000.params", (MX1 / f"{name}-0000.params").read_bytes())}
