#!/usr/bin/env python
"""Share of graph nodes lowerable to ONNX, per model: the committed fixtures and, when
artifacts/interop/zoo-1.9.1/ holds them (tests/interop/export_zoo_mx.py), the 34 zoo exports.

    python scripts/onnx_coverage.py [--zoo DIR] [--build]

Columns: op nodes, nodes with a lowering that accepts their attrs (`lowerable`), the share, and
the ops of the others. With --build each model is also lowered whole (`lower_symbol` at its
recorded input shapes) and checked with onnx.checker: 'ok', or the error.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from fixture_util import FIXTURES, VERSIONS, fixture_names  # noqa: E402
from framework.io.params_file import load_params, strip_prefixes  # noqa: E402
from framework.onnx import lower_symbol, refusal  # noqa: E402
from framework.symbol import load  # noqa: E402


def models(zoo_dir: str) -> list[tuple[str, str]]:
    """(label, file prefix) of every fixture and zoo export found."""
    out = [(f"{v}/{n}", str(FIXTURES / v / n)) for v in VERSIONS for n in fixture_names(v)]
    if os.path.isdir(zoo_dir):
        stems = sorted(f[: -len("-symbol.json")] for f in os.listdir(zoo_dir)
                       if f.endswith("-symbol.json"))
        out += [(f"zoo/{s}", os.path.join(zoo_dir, s)) for s in stems]
    return out


def coverage(prefix: str, build: bool) -> tuple[int, int, Counter, str]:
    sym = load(prefix + "-symbol.json")
    ops = [n for n in sym.topo() if not n.is_var]
    missing = Counter(n.opname for n in ops if refusal(n) is not None)
    status = ""
    if build:
        try:
            import onnx
            params = strip_prefixes(load_params(prefix + "-0000.params"))
            io = np.load(prefix + "-io.npz")
            shapes = {k: io[k].shape for k in io.files if k.startswith("data")}
            onnx.checker.check_model(lower_symbol(sym, params, shapes))
            status = "ok"
        except Exception as e:  # noqa: BLE001  reported in the table
            status = f"{type(e).__name__}: {str(e)[:60]}"
    return len(ops), len(ops) - sum(missing.values()), missing, status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zoo", default=os.path.join(ROOT, "artifacts", "interop", "zoo-1.9.1"))
    ap.add_argument("--build", action="store_true", help="also lower each model whole")
    args = ap.parse_args()
    total = lowered = 0
    print(f"| model | op nodes | lowerable | share | not lowerable |{' build |' if args.build else ''}")
    print(f"|---|---|---|---|---|{'---|' if args.build else ''}")
    for label, prefix in models(args.zoo):
        n, ok, missing, status = coverage(prefix, args.build)
        total, lowered = total + n, lowered + ok
        rest = ", ".join(f"{op}×{k}" for op, k in sorted(missing.items())) or "-"
        share = f"{100 * ok / n:.1f} %" if n else "-"
        print(f"| {label} | {n} | {ok} | {share} | {rest} |" + (f" {status} |" if args.build else ""))
    print(f"\nall: {lowered}/{total} op nodes lowerable ({100 * lowered / max(total, 1):.2f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
