"""INT8 arithmetic as MXNet 1.9.1's oneDNN (MKLDNN) operators compute it: scales, rounding,
saturation and the ranges its quantized ops report.

MXNet maps a real range [min, max] onto int8 with the scale 127.5 / max(|min|, |max|) and onto
uint8 with 255.5 / max(|min|, |max|) (its kInt8Range / kUint8Range), rounds to nearest (ties to
even, oneDNN's reorder) and saturates to the type's limits. The int32 ranges its un-requantized
ops report use 127 / 255 levels instead (QuantizationRangeForMultiplication); both are kept as
MXNet has them, so outputs match its exports bit for bit where the arithmetic allows.
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError

INT8_RANGE = np.float32(127.5)
UINT8_RANGE = np.float32(255.5)
INT32_MAX = np.float32(2147483647.0)
QDTYPES = (np.dtype(np.int8), np.dtype(np.uint8))
F32 = np.dtype(np.float32)


def scalar(x) -> np.float32:
    """A min/max input (MXNet passes them as shape-(1,) float32 arrays)."""
    return np.float32(np.asarray(x, np.float32).reshape(-1)[0])


def range_out(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    return np.array([lo], np.float32), np.array([hi], np.float32)


def abs_max(lo, hi) -> np.float32:
    return np.float32(max(abs(np.float32(lo)), abs(np.float32(hi))))


def quant_scale(dtype, lo, hi) -> np.float32:
    """Real value → quantized level factor (MXNet's GetQuantizeScale)."""
    amax = abs_max(lo, hi)
    if not amax:
        return INT32_MAX
    return (INT8_RANGE if np.dtype(dtype) == np.int8 else UINT8_RANGE) / amax


def saturate(x: np.ndarray, dtype) -> np.ndarray:
    """Round to nearest (ties to even) and clamp to `dtype`'s limits."""
    info = np.iinfo(dtype)
    return np.clip(np.rint(x), info.min, info.max).astype(dtype)


def auto_dtype(out_type: str, lo, hi) -> np.dtype:
    """MXNet's GetQuantizeOutputType: 'auto' is uint8 only for a calibrated range ≥ 0."""
    if out_type == "uint8" or (out_type == "auto" and lo is not None and hi is not None
                               and lo >= 0):
        return np.dtype(np.uint8)
    return np.dtype(np.int8)


def int32_range(a_lo, a_hi, a_levels, b_lo, b_hi, b_levels) -> np.float32:
    """MXNet's QuantizationRangeForMultiplication: the real value of int32's largest level for
    a product of values quantized with `a_levels` and `b_levels` levels."""
    a = abs_max(a_lo, a_hi) / np.float32(a_levels)
    b = abs_max(b_lo, b_hi) / np.float32(b_levels)
    return np.float32(a * b * INT32_MAX)


def check_qdtype(x: np.ndarray, op: str, what: str = "data") -> None:
    if x.dtype not in QDTYPES:
        raise OperatorError(f"{op}: {what} must be int8 or uint8, got {x.dtype}")


def channel_scales(w: np.ndarray, b: np.ndarray | None, data_scale: np.float32) -> np.ndarray:
    """Per-output-channel weight scales 127.5/max|w_c|, lowered where the int32 bias
    b_c·data_scale·scale would pass INT32_MAX/2 (MXNet's GetWeightScales)."""
    flat = w.reshape(w.shape[0], -1)
    amax = np.maximum(np.abs(flat.min(1)), np.abs(flat.max(1))).astype(np.float32)
    with np.errstate(divide="ignore"):
        s = np.where(amax > 0, INT8_RANGE / np.where(amax > 0, amax, 1), INT32_MAX)
    s = s.astype(np.float32)
    if b is not None:
        nz = b != 0
        lim = np.where(b > 0, INT32_MAX, -INT32_MAX - 1) / 2 / np.where(nz, b, 1) / data_scale
        s = np.where(nz, np.minimum(s, lim.astype(np.float32)), s).astype(np.float32)
    return s


def quantize_weight(w: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """int8 weights, one scale per output channel (or one for all)."""
    shape = (-1,) + (1,) * (w.ndim - 1)
    return saturate(w * np.asarray(scales, np.float32).reshape(shape), np.int8)


def quantize_bias(b: np.ndarray, scales) -> np.ndarray:
    """int32 bias at data_scale·weight_scale (as oneDNN's reorder: nearest, saturated)."""
    return saturate(b.astype(np.float32) * np.asarray(scales, np.float32), np.int32)
