"""hybridserve's MXNet 1.x export of MXNet 1.9.1's own INT8 exports loads in real MXNet 1.9.1
and gives MXNet's INT8 outputs (tests/fixtures/mxnet-1.9.1-int8/), to the bit.

    PYTHONPATH=. .venv/bin/python tests/interop/check_int8_export.py
"""
from __future__ import annotations

import os
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
from tests.interop.interop_util import run_mx  # noqa: E402

FIXTURES = os.path.join(HERE, "..", "fixtures", "mxnet-1.9.1-int8")


def main() -> int:
    import framework as fw
    from framework import gluon
    warnings.simplefilter("ignore")
    names = sorted(f[:-len("-symbol.json")] for f in os.listdir(FIXTURES)
                   if f.endswith("-symbol.json"))
    out = tempfile.mkdtemp(prefix="int8-export-")
    jobs = []
    for n in names:
        pre = os.path.join(FIXTURES, n)
        net = gluon.SymbolBlock.imports(pre + "-symbol.json", ["data"], pre + "-0000.params")
        net(fw.np.array(np.load(pre + "-io.npz")["data"]))
        sym, params = net.export(os.path.join(out, n), format="1.x")
        jobs.append({"name": n, "symbol": sym, "params": params, "inputs": pre + "-io.npz",
                     "out": os.path.join(out, n + "-mx.npz")})
    summary = run_mx("1.9.1", jobs)
    bad = 0
    for job in jobs:
        n = job["name"]
        if not summary[n]["ok"]:
            print(f"{n}: MXNet failed: {summary[n]['error']}")
            bad += 1
            continue
        got = np.load(job["out"])["output"]
        ref = np.load(os.path.join(FIXTURES, n + "-io.npz"))["output"]
        d = float(np.abs(got - ref).max())
        print(f"{n}: max|Δ| vs MXNet's own INT8 output {d:.3g}")
        bad += d != 0.0
    print("ok" if not bad else f"{bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
