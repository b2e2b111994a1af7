"""Kernel thread policy: BLAS threads default to cores // (workers × inference threads ×
intra-op threads), the server applies the policy at start (threadpoolctl) and restores the
previous one at stop."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.settings import Settings
from service.runtime.compiled import OrtOptions
from service.runtime.threads import ThreadPolicy, ort_options, resolve

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("cores,workers,threads,want", [
    (2, 1, 2, 1), (2, 2, 2, 1), (2, 1, 1, 2), (8, 1, 2, 4), (8, 2, 2, 2), (16, 3, 2, 2)])
def test_default_blas_threads_share_the_cores(cores, workers, threads, want):
    s = Settings(workers=workers, inference_threads=threads)
    p = resolve(s, cores)
    assert (p.blas, p.intra_op) == (want, 1)
    # an onnxruntime session (shared by the inference threads) spans the worker's cores
    assert p.ort_intra_op == max(1, cores // workers)


def test_onnxruntime_session_threads():
    assert resolve(Settings(inference_threads=1), 2).ort_intra_op == 2      # lone forward
    assert resolve(Settings(intra_op_threads=2, inference_threads=2), 2).ort_intra_op == 2
    assert resolve(Settings(ort_intra_op_threads=3, inference_threads=2), 2).ort_intra_op == 3
    o = ort_options(Settings(ort_providers="CUDAExecutionProvider, CPUExecutionProvider",
                             inference_threads=2), 4)
    assert o == OrtOptions(("CUDAExecutionProvider", "CPUExecutionProvider"), 4, False)
    assert ort_options(Settings(), 2).providers is None       # detect (CUDA if present)


def test_explicit_settings_win():
    assert resolve(Settings(blas_threads=3, inference_threads=2), 2).blas == 3
    assert resolve(Settings(blas_threads=0), 2).blas is None          # library default
    assert resolve(Settings(intra_op_threads=2, inference_threads=1), 2) == ThreadPolicy(1, 2, 2)
    assert resolve(Settings(intra_op_threads=2, inference_threads=1), 8) == ThreadPolicy(4, 2, 8)


def test_environment_variables(monkeypatch):
    monkeypatch.setenv("HYBRIDSERVE_BLAS_THREADS", "2")
    monkeypatch.setenv("HYBRIDSERVE_INTRA_OP_THREADS", "2")
    monkeypatch.setenv("HYBRIDSERVE_OPTIMIZE_GRAPHS", "false")
    monkeypatch.setenv("HYBRIDSERVE_ENGINE", "numpy")
    monkeypatch.setenv("HYBRIDSERVE_ORT_INTRA_OP_THREADS", "3")
    s = Settings()
    assert (s.blas_threads, s.intra_op_threads, s.optimize_graphs) == (2, 2, False)
    assert (s.engine, s.ort_intra_op_threads) == ("numpy", 3)


_SERVER_START_STOP = r"""
import asyncio, json, sys
from threadpoolctl import threadpool_info
from framework.ops import parallel as _parallel
from service.core.server import Core
from service.settings import Settings


def state():
    return ([d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"],
            _parallel.intra_op_threads())


async def main():
    core = Core(Settings(model_store=sys.argv[1], load_on_startup=False, store_poll_s=0,
                         blas_threads=1, intra_op_threads=2))
    before = state()
    await core.start()
    during = state()
    await core.stop()
    print(json.dumps([before, during, state()]))
asyncio.run(main())
"""


def test_server_applies_the_policy_and_restores_it(tmp_path):
    """In a process of its own: threadpoolctl lets only one thread per process set OpenBLAS's
    limits, and in the test process the session server's thread may hold that role."""
    out = subprocess.run([sys.executable, "-c", _SERVER_START_STOP, str(tmp_path / "store")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
                         env={**os.environ, "OPENBLAS_NUM_THREADS": "2"})
    assert out.returncode == 0, out.stderr[-2000:]
    before, during, after = json.loads(out.stdout.strip().splitlines()[-1])
    if not before[0]:
        pytest.skip("no BLAS library visible to threadpoolctl")
    assert before == [[2] * len(before[0]), 1]
    assert during == [[1] * len(before[0]), 2]
    assert after == before
