"""MXNet 1.9.1's own INT8 ResNet-18/50 v1 and MobileNet v2 1.0 (its `quantize_net`, naive
calibration: `gen_int8_fixtures.py --zoo artifacts/interop/zoo-int8`) through hybridserve, on
NumPy and on the ONNX Runtime engine, against MXNet's INT8 outputs: same top-1 and
max|Δ| ≤ 6/127.5·max|ref| (six int8 levels of the output; the server's INT8 check bound).

    PYTHONPATH=. .venv/bin/python tests/interop/check_int8_zoo.py [--dir artifacts/interop/zoo-int8]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

MODELS = ("resnet18_v1", "resnet50_v1", "mobilenetv2_1_0")
BOUND = 6 / 127.5


def check(prefix: str, backend: str | None) -> tuple[bool, str]:
    import framework as fw
    from framework import gluon
    io = np.load(prefix + "-io.npz")
    net = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    x = fw.np.array(io["data"])
    if backend:
        net.optimize_for(x, backend=backend)
    t0 = time.perf_counter()
    y = net(x).asnumpy()
    dt = time.perf_counter() - t0
    ref = io["output"]
    d = float(np.abs(y - ref).max())
    ok = d <= BOUND * max(1.0, float(np.abs(ref).max())) and y.argmax() == ref.argmax()
    return ok, f"max|Δ| {d:.4f} (max|ref| {np.abs(ref).max():.3f}), top-1 {y.argmax()} vs " \
               f"{ref.argmax()}, {dt * 1e3:.0f} ms"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.path.join("artifacts", "interop", "zoo-int8"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    bad = 0
    for m in MODELS:
        for backend in (None, "onnxruntime"):
            ok, msg = check(os.path.join(args.dir, f"{m}_int8"), backend)
            print(f"{m} [{backend or 'numpy'}]: {'ok' if ok else 'MISMATCH'} {msg}", flush=True)
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
