"""hybridserve-side helpers for the interop checks: venvs, weight randomisation, comparison, tables."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as onp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from zoo_common import REPO, draw, rand_kind  # noqa: E402

if REPO not in sys.path:
    sys.path.insert(0, REPO)

RTOL, ATOL, DEEP_REL = 1e-4, 1e-5, 1e-4


def venv_python(version: str) -> str:
    """Path of the MXNet venv's python, creating the venv with setup_mxnet_venv.sh if missing."""
    root = os.environ.get("HYBRIDSERVE_MXNET_VENV_DIR", os.path.join(REPO, ".mxnet-venvs"))
    py = os.path.join(root, f"mxnet-{version}", "bin", "python")
    if not os.path.exists(py):
        out = subprocess.run(["bash", os.path.join(HERE, "setup_mxnet_venv.sh"), version],
                             check=True, capture_output=True, text=True)
        py = out.stdout.strip().splitlines()[-1]
    return py


def run_mx(version: str, jobs: list[dict], timeout: float = 7200) -> dict:
    """Run `mx_run.py` in the MXNet venv on `jobs`; returns its per-job summary."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"jobs": jobs}, f)
        path = f.name
    try:
        res = subprocess.run([venv_python(version), os.path.join(HERE, "mx_run.py"), path],
                             capture_output=True, text=True, timeout=timeout)
    finally:
        os.unlink(path)
    lines = [ln for ln in res.stdout.strip().splitlines() if ln.startswith("{")]
    if res.returncode != 0 or not lines:
        raise RuntimeError(f"MXNet {version} run failed (rc {res.returncode}):\n{res.stderr[-4000:]}")
    return json.loads(lines[-1])


def randomize(net, rs: onp.random.RandomState) -> None:
    """Random BatchNorm statistics / affine params and biases (the interop recipe)."""
    from framework import np as mnp
    for name, p in sorted(net.collect_params().items()):
        kind = rand_kind(name)
        if kind is not None:
            p.set_data(mnp.array(draw(rs, kind, p.shape).astype(onp.float32)))


def compare(out: onp.ndarray, ref: onp.ndarray, deep: bool = True) -> tuple[bool, float, str]:
    """(ok, max|Δ|, rule): allclose(rtol 1e-4, atol 1e-5), or for deep nets
    max|Δ| <= 1e-4 * max(1, max|ref|)."""
    if out.shape != ref.shape:
        return False, float("inf"), f"shape {out.shape} != {ref.shape}"
    diff = float(onp.max(onp.abs(out.astype(onp.float64) - ref))) if ref.size else 0.0
    if onp.allclose(out, ref, rtol=RTOL, atol=ATOL):
        return True, diff, "allclose"
    bound = DEEP_REL * max(1.0, float(onp.max(onp.abs(ref))) if ref.size else 1.0)
    if deep and diff <= bound:
        return True, diff, f"<= {bound:.2g}"
    return False, diff, "allclose" if not deep else f"> {bound:.2g}"


def print_table(rows: list[list], header: list[str]) -> None:
    cells = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells[1:]:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
