"""Run MXNet's Python unit tests (from a source tree the user supplies) against `framework`.

    python tests/upstream/runner.py MXNET_SRC [test_file.py ...] [--jobs 2] [--timeout 60]

Each file runs in its own pytest process (two at a time by default) with `mxnet` resolving to the
alias package in tests/upstream/alias; scope.py decides which tests are in scope (its docstring is
the rule). Prints one row per file: in-scope passed / in-scope total, runtime skips, out of scope.
A file that fails to import counts each of its in-scope test functions as one failed case.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scope import Module

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_FILES = ["test_gluon.py", "test_deferred_compute.py", "test_gluon_rnn.py",
                 "test_numpy_gluon.py", "test_symbol.py", "test_gluon_model_zoo.py",
                 "test_gluon_utils.py", "test_numpy_op.py", "test_gluon_data.py",
                 "test_numpy_gluon_data_vision.py"]
UNITTEST_DIR = Path("tests/python/unittest")


def run_file(src: Path, test_dir: Path, name: str, timeout: int, report: Path) -> None:
    env = dict(os.environ, UPSTREAM_REPORT=str(report), MXNET_MODULE_SEED="1234",
               PYTHONPATH=os.pathsep.join([str(HERE / "alias"), str(HERE), str(ROOT)]))
    ini = src / "pytest.ini"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "plugin", "-p", "no:cacheprovider",
           f"--timeout={timeout}", "--rootdir", str(src), name]
    if ini.exists():
        cmd[3:3] = ["-c", str(ini)]
    with open(report.with_suffix(".log"), "w") as log:
        subprocess.run(cmd, cwd=test_dir, env=env, stdout=log, stderr=subprocess.STDOUT)


def summarize(test_dir: Path, name: str, records: list[dict]) -> dict:
    """Counts for one file from the plugin's records (or the AST when the file did not import)."""
    cases = {}
    for r in records:
        if r["outcome"] != "collect-error":
            cases[(r["test"], r["case"])] = r
    if not cases:   # collection failed: every in-scope function counts as one failed case
        mod = Module((test_dir / name).read_text())
        for t in mod.tests():
            v = mod.classify(t)
            cases[(t, t)] = {"outcome": "failed" if v.in_scope else "out", "test": t,
                             "reason": v.reason or "file did not import"}
    c = collections.Counter(r["outcome"] for r in cases.values())
    failing = collections.Counter(r["reason"].splitlines()[0][:120] if r["reason"] else ""
                                  for r in cases.values() if r["outcome"] == "failed")
    return {"file": name, "passed": c["passed"], "in_scope": c["passed"] + c["failed"],
            "skipped": c["skipped"], "out": c["out"], "top_failures": failing.most_common(8),
            "failed_tests": sorted({r["test"] for r in cases.values() if r["outcome"] == "failed"})}


def table(rows: list[dict]) -> str:
    lines = ["| file | in-scope passed / total | % | skipped at run time | out of scope |",
             "|---|---|---|---|---|"]
    for r in rows:
        pct = 100.0 * r["passed"] / r["in_scope"] if r["in_scope"] else 100.0
        lines.append(f"| {r['file']} | {r['passed']} / {r['in_scope']} | {pct:.0f} % "
                     f"| {r['skipped']} | {r['out']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path, help="an MXNet source tree (tests/python/unittest inside)")
    ap.add_argument("files", nargs="*", help=f"test files (default: {' '.join(DEFAULT_FILES)})")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per test")
    ap.add_argument("--json", type=Path, help="also write the per-file results here")
    args = ap.parse_intermixed_args(argv)
    src = args.src.resolve()
    test_dir = src / UNITTEST_DIR
    if not test_dir.is_dir():
        print(f"no {UNITTEST_DIR} under {src}", file=sys.stderr)
        return 2
    # a file outside unittest/ is named from tests/python (quantization/test_quantization.py)
    where = {f: (test_dir / f).parent if "/" not in f else (src / "tests/python" / f).parent
             for f in (args.files or DEFAULT_FILES)}
    files = [f for f in where if (where[f] / Path(f).name).exists()]
    with tempfile.TemporaryDirectory() as tmp:
        reports = {f: Path(tmp) / (Path(f).name + ".jsonl") for f in files}
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda f: run_file(src, where[f], Path(f).name, args.timeout,
                                             reports[f]), files))
        rows = [summarize(where[f], Path(f).name,
                          [json.loads(x) for x in reports[f].read_text().splitlines()]
                          if reports[f].exists() else []) for f in files]
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
