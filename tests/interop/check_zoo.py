"""Run MXNet 1.9.1's own model-zoo exports (from export_zoo_mx.py) in hybridserve and compare.

    python tests/interop/check_zoo.py [DIR] [--models NAME ...]

DIR defaults to artifacts/interop/zoo-1.9.1/. With --optimize, each model is also built with
`optimize_for(x, backend="hybridserve")` (BN folding, channels-last, Winograd, fused epilogues)
and run serially and with 2 intra-op threads. With --onnx, each export is also converted to a
standard ONNX file (`framework.onnx.convert`, into DIR/../zoo-onnx/) and run by stock
onnxruntime (CPU, 2 threads): both engines must give MXNet's output. With --backend onnxruntime,
each model is also partitioned by `optimize_for(x, backend="onnxruntime")` and run through its
ONNX Runtime regions (the table then gives the regions and the share of nodes they hold, and
that engine's max|Δ|). Each export is loaded with
`SymbolBlock.imports` and run on the recorded input; the output must match MXNet's
(rtol 1e-4 / atol 1e-5, or for deep nets max|Δ| <= 1e-4 * max(1, max|ref|)). Prints a table;
exit status 1 on any mismatch or missing export.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as onp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_util import compare, print_table  # noqa: E402
from zoo_common import ARTIFACTS, ZOO_MODELS, file_stem  # noqa: E402

import framework as mx  # noqa: E402
from framework.gluon import SymbolBlock  # noqa: E402


def onnx_output(prefix: str, x: onp.ndarray, outdir: str) -> onp.ndarray:
    """The export converted to ONNX and run by stock onnxruntime on `x`."""
    import onnxruntime as ort
    from framework.onnx import convert
    os.makedirs(outdir, exist_ok=True)
    path = convert(prefix + "-symbol.json", prefix + "-0000.params",
                   os.path.join(outdir, os.path.basename(prefix) + ".onnx"), {"data": x.shape})
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"data": x})[0]


def regions(net) -> str:
    """`regions/share of op nodes inside them` of a partitioned block."""
    nodes = [n for n in net._cached_graph[1].topo() if not n.is_var]
    subs = [n for n in nodes if n.subgraphs]
    inside = sum(sum(not m.is_var for m in n.subgraphs[0].topo()) for n in subs)
    return f"{len(subs)}/{inside / max(1, inside + len(nodes) - len(subs)):.0%}"


def check(name: str, d: str, optimize: bool = False, use_onnx: bool = False,
          backend: str | None = None) -> list:
    prefix = os.path.join(d, file_stem(name))
    if not os.path.exists(prefix + "-io.npz"):
        return [name, "MISSING", "", "", "", ""]
    io = onp.load(prefix + "-io.npz")
    t = time.time()
    net = SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    x = mx.np.array(io["data"])
    outs = [net(x).asnumpy()]
    if optimize:
        from framework.ops import parallel
        net.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
        outs.append(net(x).asnumpy())
        prev = parallel.set_intra_op_threads(2)
        try:
            outs.append(net(x).asnumpy())
        finally:
            parallel.set_intra_op_threads(prev)
    parts = ""
    if backend:
        net.optimize_for(x, backend=backend)
        outs.append(net(x).asnumpy())
        parts = regions(net)
    if use_onnx:
        outs.append(onnx_output(prefix, io["data"], os.path.join(os.path.dirname(
            os.path.abspath(d)), "zoo-onnx")))
    dt = time.time() - t
    checks = [compare(o, io["output"]) for o in outs]
    ok, rule = all(c[0] for c in checks), checks[0][2]
    diff = max(c[1] for c in checks)
    ref_max = float(onp.max(onp.abs(io["output"])))
    row = [name, "ok" if ok else "MISMATCH", f"{diff:.2e}", f"{ref_max:.3g}", rule, f"{dt:.1f}s"]
    if backend:
        row += [parts, f"{checks[1 + 2 * optimize][1]:.2e}"]
    return row + [f"{checks[-1][1]:.2e}"] if use_onnx else row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", default=os.path.join(ARTIFACTS, "zoo-1.9.1"))
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--optimize", action="store_true",
                    help="also check optimize_for(backend='hybridserve'), serial and threaded")
    ap.add_argument("--onnx", action="store_true",
                    help="also check the export converted to ONNX, in stock onnxruntime")
    ap.add_argument("--backend", choices=["onnxruntime"],
                    help="also check optimize_for(x, backend=...): its regions and output")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for name in args.models or ZOO_MODELS:
        try:
            rows.append(check(name, args.dir, args.optimize, args.onnx, args.backend))
        except Exception as e:  # noqa: BLE001  report and continue
            rows.append([name, "ERROR", "", "", f"{type(e).__name__}: {str(e)[:80]}", ""]
                        + (["", ""] if args.backend else []) + ([""] if args.onnx else []))
        print(" ".join(rows[-1][:3]), file=sys.stderr, flush=True)
    print_table(rows, ["model (MXNet 1.9.1 export)", "hybridserve", "max|Δ|", "max|ref|",
                       "rule", "time"]
                + ([f"{args.backend} regions/share", f"{args.backend} max|Δ|"] if args.backend
                   else [])
                + (["onnxruntime max|Δ|"] if args.onnx else []))
    return 0 if all(r[1] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
