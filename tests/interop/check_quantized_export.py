"""INT8 export interop: hybridserve's `quantize_net` on the fixture networks, exported in 1.x
format, loaded by real MXNet 1.9.1 (`SymbolBlock.imports`) and run there; its outputs must equal
hybridserve's within a few quantization steps (the two share graph, ranges and weights; oneDNN
and the NumPy kernels may round a level differently). Exits non-zero on a mismatch.

    HYBRIDSERVE_MXNET_VENV_DIR=/work/mxnet-venvs .venv/bin/python tests/interop/check_quantized_export.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interop_util import REPO, venv_python  # noqa: E402

import framework as mx  # noqa: E402
from framework.contrib.quantization import quantize_net  # noqa: E402
from framework.gluon import SymbolBlock  # noqa: E402

FIX = os.path.join(REPO, "tests", "fixtures", "quantization")
_MX = r'''
import sys, warnings
warnings.simplefilter("ignore")
import mxnet as mx, numpy as np
d = sys.argv[1]
net = mx.gluon.SymbolBlock.imports(d + "/q-symbol.json", ["data"], d + "/q-0000.params")
x = np.load(d + "/x.npy")
np.save(d + "/mx.npy", net(mx.nd.array(x)).asnumpy())
'''


def check(name: str, calib_mode: str, d: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = SymbolBlock.imports(f"{FIX}/{name}-symbol.json", ["data"],
                                  f"{FIX}/{name}-0000.params")
    data = np.load(f"{FIX}/{name}-calib.npz")
    x = data["calib"]
    q = quantize_net(net, calib_mode=calib_mode,
                     calib_data=[(x[i:i + 8], np.zeros(8)) for i in range(0, 32, 8)])
    q.hybridize()
    ours = q(mx.np.array(data["test"])).asnumpy()
    q.export(f"{d}/q", format="1.x")
    np.save(f"{d}/x.npy", data["test"])
    subprocess.run([venv_python("1.9.1"), "-c", _MX, d], check=True)
    theirs = np.load(f"{d}/mx.npy")
    return float(np.abs(ours - theirs).max() / (np.abs(theirs).max() / 127))


def main() -> int:
    bad = 0
    for name in ("res", "branchy"):
        for mode in ("naive", "entropy"):
            with tempfile.TemporaryDirectory() as d:
                steps = check(name, mode, d)
            ok = steps <= 3
            bad += not ok
            print(f"{name} {mode}: MXNet 1.9.1 runs our INT8 export; max|Δ| = {steps:.2f} "
                  f"output steps {'ok' if ok else 'MISMATCH'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
