"""Does a compiled engine reproduce the NumPy reference? One comparison for every check of the
ONNX Runtime engine against the reference kernels (the server's twin at load, each shape
specialization when asked to verify)."""
from __future__ import annotations

import numpy as np


def differs(got: list, want: list, bound: float) -> str | None:
    """None when `got` reproduces `want` (same count, shapes, dtypes; floats within
    max|Δ| ≤ bound·max(1, max|want|) per output, NaN where NaN; others equal), else what differs."""
    if len(got) != len(want):
        return f"{len(got)} outputs instead of {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {k} is {g.dtype}{list(g.shape)}, not {w.dtype}{list(w.shape)}"
        if w.dtype.kind not in "fc":
            if not np.array_equal(g, w):
                return f"output {k} differs"
            continue
        if not np.array_equal(np.isnan(g), np.isnan(w)):
            return f"output {k} has NaN in other places"
        fin = ~np.isnan(w)
        if not fin.any():
            continue
        diff = float(np.max(np.abs(g[fin].astype(np.float64) - w[fin])))
        limit = bound * max(1.0, float(np.max(np.abs(w[fin]))))
        if not diff <= limit:
            return f"output {k}: max|Δ| {diff:.3g} over the bound {limit:.3g}"
    return None
