"""BilinearSampler: sample an NCHW image at the points of a normalised grid (spatial
transformers, `mx.image.imrotate`)."""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._nnutil import OptBool
from .registry import register


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
    n, c, h, w = data.shape
    x = (grid[:, 0].astype(np.float64) + 1) * (w - 1) / 2
    y = (grid[:, 1].astype(np.float64) + 1) * (h - 1) / 2
    x0, y0 = np.floor(x).astype(np.int64), np.floor(y).astype(np.int64)
    out = np.zeros((n, c) + grid.shape[2:], np.float64)
    batch = np.arange(n)[:, None, None]
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            wgt = (1 - np.abs(x - xi)) * (1 - np.abs(y - yi))
            ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            vals = data[batch, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]  # (n, H', W', c)
            out += np.moveaxis(vals * (wgt * ok)[..., None], -1, 1)
    return out.astype(data.dtype)
