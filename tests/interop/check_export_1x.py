"""hybridserve's 1.x-format export of each model-zoo network loads in REAL MXNet 1.9.1 and
gives the same outputs; parameter counts and output shapes equal MXNet's own zoo models.

    python tests/interop/check_export_1x.py [--models NAME ...] [--subset] [--fixtures]

Per model: build with framework.gluon.model_zoo (Xavier weights, randomised BatchNorm
statistics), hybridize, run, export with format='1.x' into artifacts/interop/export-1x/, then
the 1.9.1 venv loads it with gluon.SymbolBlock.imports and runs the same input.
`--fixtures` also converts every committed MXNet 2.0.0b1 fixture to 1.x format and checks 1.9.1
reproduces the recorded outputs. Exit status 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import warnings

import numpy as onp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_util import compare, print_table, randomize, run_mx  # noqa: E402
from zoo_common import ARTIFACTS, REPO, SUBSET, ZOO_MODELS, file_stem, input_size, seed_of  # noqa: E402

import framework as mx  # noqa: E402
from framework.gluon import SymbolBlock  # noqa: E402
from framework.gluon.model_zoo import vision  # noqa: E402
from framework.symbol.legacy_export import LegacyExportError, export_legacy  # noqa: E402

OUT = os.path.join(ARTIFACTS, "export-1x")


def export_1x(block, prefix: str):
    """`block.export(prefix, format='1.x')` when HybridBlock supports it, else the same writer."""
    try:
        return block.export(prefix, format="1.x")
    except TypeError:
        return export_legacy(block, prefix)


def build_zoo(name: str):
    rs = onp.random.RandomState(seed_of(name))
    s = input_size(name)
    x = rs.standard_normal((1, 3, s, s)).astype(onp.float32)
    net = vision.get_model(name)
    net.initialize(mx.init.Xavier())
    net(mx.np.array(x))
    randomize(net, rs)
    net.hybridize()
    y = net(mx.np.array(x)).asnumpy()
    count = int(sum(int(onp.prod(p.shape)) for p in net.collect_params().values()))
    return net, x, y, count


def zoo_jobs(names):
    jobs, ours = [], {}
    for name in names:
        t = time.time()
        net, x, y, count = build_zoo(name)
        prefix = os.path.join(OUT, file_stem(name))
        export_1x(net, prefix)
        onp.savez(prefix + "-in.npz", data=x)
        ours[name] = (y, count)
        jobs.append({"name": name, "symbol": prefix + "-symbol.json",
                     "params": prefix + "-0000.params", "inputs": prefix + "-in.npz",
                     "out": prefix + "-mx.npz", "zoo": name})
        print(f"exported {name} ({time.time() - t:.1f}s)", file=sys.stderr, flush=True)
        del net
    return jobs, ours


def fixture_jobs():
    jobs, ours = [], {}
    fdir = os.path.join(REPO, "tests", "fixtures", "mxnet-2.0.0b1")
    for sym_file in sorted(glob.glob(os.path.join(fdir, "*-symbol.json"))):
        name = os.path.basename(sym_file)[: -len("-symbol.json")]
        io = onp.load(os.path.join(fdir, f"{name}-io.npz"))
        ins = sorted((k for k in io.files if k.startswith("data")), key=lambda k: int(k[4:] or 0))
        outs = sorted((k for k in io.files if k.startswith("output")),
                      key=lambda k: int(k[6:] or 0))
        block = SymbolBlock.imports(sym_file, ins, os.path.join(fdir, f"{name}-0000.params"))
        block.hybridize()
        block(*[mx.np.array(io[k]) for k in ins])
        prefix = os.path.join(OUT, "fixture_" + name)
        key = "fixture:" + name
        try:
            export_legacy(block, prefix, input_shapes={k: io[k].shape for k in ins})
        except Exception as e:
            ours[key] = e
            continue
        onp.savez(prefix + "-in.npz", **{k: io[k] for k in ins})
        ours[key] = [io[k] for k in outs]
        jobs.append({"name": key, "symbol": prefix + "-symbol.json",
                     "params": prefix + "-0000.params", "inputs": prefix + "-in.npz",
                     "out": prefix + "-mx.npz"})
    return jobs, ours


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--subset", action="store_true", help="the representative subset only")
    ap.add_argument("--fixtures", action="store_true", help="also the 2.0.0b1 fixtures")
    ap.add_argument("--no-zoo", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    os.makedirs(OUT, exist_ok=True)
    names = [] if args.no_zoo else (args.models or (SUBSET if args.subset else ZOO_MODELS))
    jobs, ours = zoo_jobs(names)
    if args.fixtures:
        fj, fo = fixture_jobs()
        jobs += fj
        ours.update(fo)
    summary = run_mx("1.9.1", jobs) if jobs else {}
    rows, bad = [], 0
    for name, mine in ours.items():
        res = summary.get(name)
        if isinstance(mine, LegacyExportError):       # documented: no 1.x equivalent
            rows.append([name, "n/a (no 1.x form)", "", "", str(mine).split(": ", 1)[-1][:90]])
            continue
        if isinstance(mine, Exception):
            rows.append([name, "EXPORT ERROR", "", "", str(mine)[:100]])
            bad += 1
            continue
        if res is None or not res["ok"]:
            rows.append([name, "LOAD/RUN FAILED", "", "", (res or {}).get("error", "")[:100]])
            bad += 1
            continue
        prefix = os.path.join(OUT, file_stem(name) if not name.startswith("fixture:")
                              else "fixture_" + name[8:])
        mxo = onp.load(prefix + "-mx.npz")
        refs = [mxo[k] for k in sorted(mxo.files, key=lambda k: int(k[6:] or 0))]
        if name.startswith("fixture:"):
            results = [compare(r, e) for r, e in zip(refs, mine)]
            ok = all(r[0] for r in results) and len(refs) == len(mine)
            diff = max((r[1] for r in results), default=0.0)
            rows.append([name, "ok" if ok else "MISMATCH", f"{diff:.2e}", "-", f"{len(refs)} outputs"])
        else:
            y, count = mine
            ok, diff, rule = compare(y, refs[0])
            same_count = count == res.get("zoo_params")
            same_shape = list(y.shape) == res.get("zoo_output_shape")
            ok = ok and same_count and same_shape
            rows.append([name, "ok" if ok else "MISMATCH", f"{diff:.2e}",
                         f"{count:,}" + ("" if same_count else f" (MXNet {res.get('zoo_params'):,})"),
                         f"{tuple(y.shape)}" + ("" if same_shape else " (shape differs)")])
        bad += not ok
    print_table(rows, ["model", "1.x export in MXNet 1.9.1", "max|Δ|", "params", "output"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
