"""Run the workloads of MXNet's test_numpy_interoperability.py one by one and count them.

    python tests/upstream/interop_workloads.py MXNET_SRC [--json OUT]

The file's four tests each loop over hundreds of workloads and stop at the first failure, so
a pass/fail per test says little; this counts every (function, workload) pair of the three
dispatch tests, in the same environment as runner.py (run it with .venv-upstream's Python).
A workload fails when the framework's result differs from NumPy's or either raises; when
NumPy itself cannot run the reference (a name NumPy 2 removed), it is counted apart. The test
module gets NumPy 1.x's removed names and results as in the pytest run (numpy1_compat.py).
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import os
import sys
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "alias"), str(HERE), str(HERE.parents[1])]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    test_dir = args.src.resolve() / "tests/python/unittest"
    sys.path.insert(0, str(test_dir))
    os.chdir(test_dir)
    import numpy as onp
    import test_numpy_interoperability as t
    from numpy1_compat import install
    from mxnet import np
    from mxnet.numpy_dispatch_protocol import _NUMPY_ARRAY_FUNCTION_LIST, _NUMPY_ARRAY_UFUNC_LIST

    groups = {"array_function": _NUMPY_ARRAY_FUNCTION_LIST, "array_ufunc": _NUMPY_ARRAY_UFUNC_LIST,
              "fallback": list(np.fallback.__all__)
              + [f"linalg.{n}" for n in np.fallback_linalg.__all__]}
    skip = {"shares_memory", "may_share_memory", "empty_like", "__version__", "dtype", "_NoValue"}
    rows, failures = {}, collections.Counter()
    install(t)
    onp.random.seed(1234)
    for group, names in groups.items():
        c = collections.Counter()
        for name in names:
            if name in skip:
                continue
            t.OpArgMngr.randomize_workloads()
            try:
                workloads = t.OpArgMngr.get_workloads(name) or []
            except Exception as e:  # noqa: BLE001
                c["failed"] += 1
                failures[f"{name}: workloads: {type(e).__name__}: {str(e)[:80]}"] += 1
                continue
            tol = {"linalg.tensorinv": (1e-2, 5e-3), "linalg.solve": (1e-3, 5e-2)}.get(name, (1e-3, 1e-4))
            for w in workloads:
                try:
                    ref = t._np
                    for part in name.split("."):
                        ref = getattr(ref, part)
                except AttributeError:
                    c["numpy2"] += 1
                    continue
                try:
                    with redirect_stdout(io.StringIO()):
                        t._check_interoperability_helper(name, *tol, *w["args"], **w["kwargs"])
                    c["passed"] += 1
                except Exception as e:  # noqa: BLE001
                    c["failed"] += 1
                    failures[f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:90] if str(e) else ''}"] += 1
        rows[group] = dict(c)
    print("| group | passed / run | NumPy 2 lacks the reference |\n|---|---|---|")
    for g, c in rows.items():
        n = c.get("passed", 0) + c.get("failed", 0)
        print(f"| {g} | {c.get('passed', 0)} / {n} | {c.get('numpy2', 0)} |")
    for k, v in failures.most_common():
        print(f"  {v:4d}  {k}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "failures": failures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
