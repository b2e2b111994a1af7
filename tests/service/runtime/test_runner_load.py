"""A model is loaded once: `Runner.load` reads the symbol and params files one time each
(parsed under the size limits) and builds the block from what it parsed, so peak memory is
bounded by a small multiple of the params file; load failures map to one 400 for both the
registry and uploads."""
from __future__ import annotations

import asyncio
import builtins
import io
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import framework as mx
from framework.gluon import nn
from service.errors import BadRequest, ServiceError
from service.repository.store import ModelFiles, ModelStore, find_files
from service.runtime.metrics import Metrics
from service.runtime.registry import Registry
from service.runtime.runner import Runner
from service.settings import Settings


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> ModelFiles:
    """An MLP with 8 MiB of weights (2048 → 1024 → 10), exported as MXNet does."""
    d = tmp_path_factory.mktemp("big")
    net = nn.HybridSequential()
    net.add(nn.Dense(1024, in_units=2048, activation="relu"), nn.Dense(10, in_units=1024))
    net.initialize()
    net.hybridize()
    net(mx.np.zeros((1, 2048)))
    net.export(str(d / "big"))
    return find_files(d)


def _opens(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = io.open
    me = threading.get_ident()    # a session server's store poller opens files meanwhile

    def counting(file, *args, **kw):
        if isinstance(file, (str, os.PathLike)) and threading.get_ident() == me:
            seen.append(os.path.basename(os.fspath(file)))
        return real(file, *args, **kw)
    monkeypatch.setattr(io, "open", counting)
    monkeypatch.setattr(builtins, "open", counting)
    return seen


def test_each_file_is_read_once(big, monkeypatch):
    opened = _opens(monkeypatch)
    r = Runner.load("big", "1", big, None)
    monkeypatch.undo()
    # (a first onnxruntime lowering also imports onnx, which reads package metadata)
    assert sorted(n for n in opened if n.startswith("big")) == ["big-0000.params",
                                                                "big-symbol.json"]
    x = np.random.default_rng(0).standard_normal((2, 2048)).astype(np.float32)
    ref = Runner.load("big", "1", big, None, optimize=False)
    np.testing.assert_allclose(r.run([x])[0], ref.run([x])[0], rtol=1e-4, atol=1e-5)


_PEAK_SCRIPT = """
import sys, tracemalloc
from pathlib import Path
from service.repository.store import find_files
from service.runtime.runner import Runner
files = find_files(Path(sys.argv[1]))
Runner.load("big", "1", files, None)               # imports and first-use caches, once
tracemalloc.start()
Runner.load("big", "1", files, None)
print(tracemalloc.get_traced_memory()[1])
"""


def test_peak_memory_is_a_small_multiple_of_the_params(big):
    """Reading the params file (its bytes, then the parsed arrays) and the block's copy of
    them; parsing both files a second time (as `SymbolBlock.imports` did) went past 3.8×.
    Measured in a fresh interpreter: tracemalloc counts every thread, and servers that other
    tests leave running in this process allocate meanwhile."""
    size = Path(big.params).stat().st_size
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, str(Path(big.params).parent)],
                         cwd=root, capture_output=True, text=True, timeout=120, check=True)
    peak = int(out.stdout.split()[-1])
    assert peak < 3.2 * size, (peak, size)


@pytest.mark.parametrize("raised, message, status", [
    (MemoryError(), "cannot load model 'm' version 1: not enough memory", 507),
    (RuntimeError("boom"), "cannot load model: RuntimeError: boom", 400),
    (BadRequest("cannot load model: params file 'm-0000.params': truncated"),
     "cannot load model: params file 'm-0000.params': truncated", 400)])
def test_load_failures_are_the_models(tmp_path, big, monkeypatch, raised, message, status):
    """Registry loads and uploads (which both call Registry.load_runner) share one mapping:
    whatever a model's load raises is a 400 naming the failure (507 when memory ran out),
    never a 500."""
    def failing(*args, **kw):
        raise raised
    monkeypatch.setattr(Runner, "load", failing)
    with ThreadPoolExecutor(1) as pool:
        reg = Registry(ModelStore(tmp_path), Settings(model_store=tmp_path), Metrics(), pool)
        try:
            with pytest.raises(ServiceError) as e:
                asyncio.run(reg.load_runner("m", "1", big, None))
        finally:
            reg.load_pool.shutdown()
    assert e.value.message == message and e.value.status == status
