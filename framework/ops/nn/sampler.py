"""Bilinear sampling at fractional pixel positions: BilinearSampler (spatial transformers,
`mx.image.imrotate`), and the gather deformable convolutions use."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ..nnutil import OptBool
from ..registry import register


def bilinear_gather(data: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """data (N, C, H, W) at pixel positions y, x (N, *out) → (N, C, *out); each of the four
    neighbours outside the image contributes 0 (MXNet's rule for both operators)."""
    n, c, h, w = data.shape
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    out = np.zeros((n, c) + y.shape[1:], np.result_type(data.dtype, np.float32))
    batch = np.arange(n).reshape((n,) + (1,) * (y.ndim - 1))
    for dy in (0, 1):
        for dx in (0, 1):
            yi, xi = y0 + dy, x0 + dx
            wgt = (1 - np.abs(y - yi)) * (1 - np.abs(x - xi))
            wgt = wgt * ((xi >= 0) & (xi < w) & (yi >= 0) & (yi < h))
            vals = data[batch, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]  # (n, *out, c)
            out += np.moveaxis(vals * wgt[..., None].astype(out.dtype), -1, 1)
    return out


def _sampler_shape(a, s):
    data, grid = s
    if len(data) != 4 or len(grid) != 4 or grid[1] != 2 or grid[0] != data[0]:
        raise ShapeError(f"BilinearSampler: data must be (N, C, H, W) and grid (N, 2, H', W'), "
                         f"got {tuple(data)} and {tuple(grid)}")
    return [(data[0], data[1], grid[2], grid[3])]


@register("BilinearSampler", "_npx_bilinear_sampler", inputs=("data", "grid"),
          attrs={"cudnn_off": OptBool(None)}, infer_shape=_sampler_shape)
def bilinear_sampler(a, data, grid):
    """out[n, c, i, j] = data[n, c] at x = (grid[n, 0, i, j] + 1)(W - 1)/2 and
    y = (grid[n, 1, i, j] + 1)(H - 1)/2, bilinearly; neighbours outside the image count as 0."""
    _sampler_shape(a, [data.shape, grid.shape])
    h, w = data.shape[2:]
    g = grid.astype(np.float64)
    out = bilinear_gather(data, (g[:, 1] + 1) * (h - 1) / 2, (g[:, 0] + 1) * (w - 1) / 2)
    return out.astype(data.dtype)
