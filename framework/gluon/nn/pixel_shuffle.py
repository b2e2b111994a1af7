"""Pixel shuffle (sub-pixel upsampling) layers: channels `C·f…` become `f`-times larger spatial
axes. Written with `npx.reshape`'s special codes so a hybridized graph does not fix the batch
or spatial sizes."""
from __future__ import annotations

from ... import numpy as np
from ... import numpy_extension as npx
from ..hybrid_block import HybridBlock

__all__ = ["PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


def _factors(factor, n: int) -> tuple[int, ...]:
    if isinstance(factor, (tuple, list)):
        if len(factor) != n:
            raise ValueError(f"PixelShuffle{n}D: expected {n} factors, got {factor}")
        return tuple(int(f) for f in factor)
    return (int(factor),) * n


class _PixelShuffle(HybridBlock):
    _NDIM = 1

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, self._NDIM)

    def forward(self, x):
        n = self._NDIM
        prod = 1
        for f in self._factors:
            prod *= f
        x = npx.reshape(x, (-2, -6, -1, prod) + (-2,) * n)   # (N, C, f1·…·fn, S1, …, Sn)
        for k, f in enumerate(self._factors[:-1], start=1):   # peel f1, f2 off the factor axis
            x = npx.reshape(x, (-2,) * (k + 1) + (-6, f, -1) + (-2,) * n)
        # (N, C, f1, …, fn, S1, …, Sn) → (N, C, S1, f1, …, Sn, fn)
        perm = (0, 1) + tuple(a for k in range(n) for a in (2 + n + k, 2 + k))
        x = np.transpose(x, perm)
        return npx.reshape(x, (-2, -2) + (-5,) * n)

    def __repr__(self) -> str:
        f = self._factors[0] if self._NDIM == 1 else self._factors
        return f"{self.__class__.__name__}({f})"


class PixelShuffle1D(_PixelShuffle):
    """(N, C·f, W) → (N, C, W·f)."""
    _NDIM = 1


class PixelShuffle2D(_PixelShuffle):
    """(N, C·f1·f2, H, W) → (N, C, H·f1, W·f2)."""
    _NDIM = 2


class PixelShuffle3D(_PixelShuffle):
    """(N, C·f1·f2·f3, D, H, W) → (N, C, D·f1, H·f2, W·f3)."""
    _NDIM = 3
