"""INT8 interop with real MXNet 1.9.1. Exits non-zero on a mismatch.

1. hybridserve's `quantize_net` on the fixture networks, exported in 1.x format, loaded by MXNet
   (`SymbolBlock.imports`) and run there: outputs equal hybridserve's within a few quantization
   steps (same graph, ranges and weights; oneDNN and the NumPy kernels may round a level apart).
2. A random-weight ResNet-18 v1 (bench/int8/agreement.py's recipe) exported in 1.x format:
   MXNet's `quantize_net` and ours (naive, 32 calibration inputs) give the same graph (operators,
   names, inputs), and both INT8 nets' agreement with float32 on 256 other inputs is printed.

    .venv/bin/python tests/interop/check_quantized_export.py

(the MXNet 1.9.1 venv comes from tests/interop/setup_mxnet_venv.sh, under .mxnet-venvs/ or
$HYBRIDSERVE_MXNET_VENV_DIR)
"""
from __future__ import annotations

import json
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


_MX_ZOO = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import mxnet as mx, numpy as np
from mxnet.contrib.quantization import quantize_net
d = sys.argv[1]
net = mx.gluon.SymbolBlock.imports(d + "/f-symbol.json", ["data"], d + "/f-0000.params")
z = np.load(d + "/data.npz")
q = quantize_net(net, calib_mode="naive", num_calib_examples=32,
                 calib_data=mx.io.NDArrayIter(data=z["calib"], batch_size=8))
q.hybridize()
np.save(d + "/mx_q.npy", q(mx.nd.array(z["test"])).asnumpy())
q.export(d + "/mxq")
'''


def _rows(path: str) -> list:
    with open(path) as f:
        nodes = json.load(f)["nodes"]
    return [(n["op"], n["name"], [nodes[i[0]]["name"] for i in n["inputs"]])
            for n in nodes if n["op"] != "null"]


def _agree(f: np.ndarray, q: np.ndarray) -> str:
    top5 = np.mean([len(set(a) & set(b)) for a, b in
                    zip(np.argsort(-f, 1)[:, :5], np.argsort(-q, 1)[:, :5])])
    return f"top-1 identical {np.mean(f.argmax(1) == q.argmax(1)):.1%}, top-5 overlap {top5:.2f}"


def check_zoo(d: str) -> bool:
    sys.path.insert(0, os.path.join(REPO, "bench", "int8"))
    from agreement import random_net, run
    net = random_net("resnet18_v1", 1000)
    net.hybridize()
    net(mx.np.zeros((1, 3, 64, 64)))
    net.export(f"{d}/f", format="1.x")
    rng = np.random.default_rng(1)
    calib = rng.normal(0, 1, (32, 3, 64, 64)).astype(np.float32)
    test = rng.normal(0, 1, (256, 3, 64, 64)).astype(np.float32)
    np.savez(f"{d}/data.npz", calib=calib, test=test)
    subprocess.run([venv_python("1.9.1"), "-c", _MX_ZOO, d], check=True)
    fnet = SymbolBlock.imports(f"{d}/f-symbol.json", ["data"], f"{d}/f-0000.params")
    q = quantize_net(fnet, calib_mode="naive", calib_data=[calib[i:i + 8] for i in range(0, 32, 8)])
    q.export(f"{d}/q", format="1.x")
    same = _rows(f"{d}/q-symbol.json") == _rows(f"{d}/mxq-symbol.json")
    f = run(fnet, test)
    print(f"ResNet-18 v1 (random): graph {'equals' if same else 'DIFFERS FROM'} MXNet's; "
          f"INT8 vs float32 — MXNet: {_agree(f, np.load(f'{d}/mx_q.npy'))}; "
          f"hybridserve: {_agree(f, run(q, test))}")
    return same


def main() -> int:
    bad = 0
    with warnings.catch_warnings(), tempfile.TemporaryDirectory() as d:
        warnings.simplefilter("ignore")
        bad += not check_zoo(d)
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
