"""Box geometry shared by the detection operators, in MXNet's float arithmetic.

Boxes are `(..., 4)` arrays in "corner" (xmin, ymin, xmax, ymax) or "center" (x, y, w, h) form.
Every step stays in the input's dtype so results round as MXNet's float kernels do.
"""
from __future__ import annotations

import numpy as np

FORMATS = ("corner", "center")


def _side(lo_a, hi_a, lo_b, hi_b):
    w = np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b)
    return np.where(w > 0, w, w.dtype.type(0))


def intersect(a: np.ndarray, b: np.ndarray, fmt: str) -> np.ndarray:
    """Overlap area of broadcastable box arrays (zero where they do not overlap)."""
    if fmt == "corner":
        wx = _side(a[..., 0], a[..., 2], b[..., 0], b[..., 2])
        wy = _side(a[..., 1], a[..., 3], b[..., 1], b[..., 3])
        return wx * wy
    out = None
    for c, s in ((0, 2), (1, 3)):   # MXNet builds each side from centre ± half extent
        ha, hb = a[..., s] / a.dtype.type(2), b[..., s] / b.dtype.type(2)
        w = _side(a[..., c] - ha, a[..., c] + ha, b[..., c] - hb, b[..., c] + hb)
        out = w if out is None else out * w
    return out


def area(a: np.ndarray, fmt: str) -> np.ndarray:
    """Box area; a box with a negative width or height has area 0."""
    if fmt == "corner":
        w, h = a[..., 2] - a[..., 0], a[..., 3] - a[..., 1]
    else:
        w, h = a[..., 2], a[..., 3]
    return np.where((w < 0) | (h < 0), w.dtype.type(0), w * h)


def convert_rows(boxes: np.ndarray, to: str) -> np.ndarray:
    """corner ↔ center in place on (..., 4) rows; rows whose first value is negative are left as
    they are (MXNet's padding rows are -1, and its converter skips any row starting below 0)."""
    keep = boxes[..., 0] < 0
    b = boxes.copy()
    two = b.dtype.type(2)
    if to == "center":
        new = np.stack([(b[..., 0] + b[..., 2]) / two, (b[..., 1] + b[..., 3]) / two,
                        b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]], axis=-1)
    else:
        hw, hh = b[..., 2] / two, b[..., 3] / two
        new = np.stack([b[..., 0] - hw, b[..., 1] - hh, b[..., 0] + hw, b[..., 1] + hh], axis=-1)
    return np.where(keep[..., None], b, new)


def half_up(lo: np.ndarray, extent: np.ndarray) -> np.ndarray:
    """`lo + extent * 0.5` as MXNet's kernels compute it: the 0.5 is a C double literal, so the sum
    is formed in double and rounded once to the box dtype."""
    return (lo.astype(np.float64) + extent.astype(np.float64) * 0.5).astype(lo.dtype)
