"""Sequence ops (SequenceMask / SequenceLast / SequenceReverse) and small 1.x math helpers
(smooth_l1, _contrib_div_sqrt_dim)."""
from __future__ import annotations

import numpy as np

from .attrs import Bool, Float, Int
from .registry import register
from ._common import ScalarAttr, same_shape


def _seq_inputs(a):
    return ("data", "sequence_length") if a.use_sequence_length else ("data",)


def _lengths(a, lens, T, N):
    if not a.use_sequence_length or lens is None:
        return np.full((N,), T, dtype=np.int64)
    return np.clip(lens.astype(np.int64).reshape(-1), 0, T)


def _tn(x, axis):
    """Time and batch sizes for time axis `axis` (0: TNC, 1: NTC)."""
    return (x.shape[0], x.shape[1]) if axis == 0 else (x.shape[1], x.shape[0])


@register("SequenceMask", "_npx_sequence_mask",
          attrs={"use_sequence_length": Bool(False), "value": Float(0.0), "axis": Int(0)},
          inputs=_seq_inputs, infer_shape=same_shape, strict=True)
def sequence_mask(a, x, lens=None):
    """Set steps t >= length[n] to `value` (time axis 0, or 1 for batch-major data)."""
    if not a.use_sequence_length:
        return x.copy()
    T, N = _tn(x, a.axis)
    L = _lengths(a, lens, T, N)
    t = np.arange(T)
    keep = t[:, None] < L[None, :] if a.axis == 0 else t[None, :] < L[:, None]
    keep = keep.reshape(keep.shape + (1,) * (x.ndim - 2))
    return np.where(keep, x, x.dtype.type(a.value))


def _last_shape(a, s):
    s = tuple(s[0])
    return [s[:a.axis] + s[a.axis + 1:]]


@register("SequenceLast", "_npx_sequence_last",
          attrs={"use_sequence_length": Bool(False), "axis": Int(0)},
          inputs=_seq_inputs, infer_shape=_last_shape, strict=True)
def sequence_last(a, x, lens=None):
    """The last valid step of every sequence."""
    T, N = _tn(x, a.axis)
    L = _lengths(a, lens, T, N)
    idx = np.maximum(L - 1, 0)
    n = np.arange(N)
    return x[idx, n] if a.axis == 0 else x[n, idx]


@register("SequenceReverse", "_npx_sequence_reverse",
          attrs={"use_sequence_length": Bool(False), "axis": Int(0)},
          inputs=_seq_inputs, infer_shape=same_shape, strict=True)
def sequence_reverse(a, x, lens=None):
    """Reverse the first length[n] steps of every sequence (time axis 0)."""
    T, N = x.shape[0], x.shape[1]
    L = _lengths(a, lens, T, N)
    t = np.arange(T)[:, None]
    src = np.where(t < L[None, :], L[None, :] - 1 - t, t)
    return x[src, np.arange(N)[None, :]]


@register("smooth_l1", attrs={"scalar": ScalarAttr(1.0)}, infer_shape=same_shape, strict=True)
def smooth_l1(a, x):
    """0.5·(σx)² where |x| < 1/σ², else |x| − 0.5/σ²  (σ = scalar)."""
    s2 = x.dtype.type(a.scalar * a.scalar) if x.dtype.kind == "f" else a.scalar ** 2
    ax = np.abs(x)
    return np.where(ax < 1.0 / s2, x.dtype.type(0.5) * s2 * x * x, ax - x.dtype.type(0.5) / s2)


@register("_contrib_div_sqrt_dim", "_npx_div_sqrt_dim", infer_shape=same_shape)
def div_sqrt_dim(a, x):
    """x / sqrt(x.shape[-1])."""
    return x / x.dtype.type(np.sqrt(x.shape[-1]))
