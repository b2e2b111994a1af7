"""ONNX building blocks for MXNet's INT8 ops: a quantized tensor is its int8/uint8 value plus a
real range that must be a constant here (calibrated graphs); it becomes QuantizeLinear /
DequantizeLinear pairs (QDQ) around float ops, which ONNX Runtime fuses into its integer kernels
(QLinearConv, QLinearAdd, QLinearConcat, QLinearAveragePool…)."""
from __future__ import annotations

import functools
import platform

import numpy as np

from . import int8 as q
from ..lowering import Unsupported


def const_range(ctx, lo: str, hi: str) -> tuple[np.float32, np.float32]:
    """A range input's values; ranges computed at run time (uncalibrated graphs) stay on NumPy."""
    vlo, vhi = ctx.value(lo), ctx.value(hi)
    if vlo is None or vhi is None:
        raise Unsupported("its quantization range is computed at run time (calibrate the model)")
    return q.scalar(vlo), q.scalar(vhi)


def range_outputs(ctx, lo, hi) -> list[str]:
    return [ctx.const(np.array([lo], np.float32), hint="min"),
            ctx.const(np.array([hi], np.float32), hint="max")]


def _bind_like(ctx, name: str, like: str, dtype) -> str:
    ctx.bind(name, ctx.shape(like) if _known(ctx, like) else None, np.dtype(dtype),
             ctx.varying(like))
    return name


def _known(ctx, name: str) -> bool:
    try:
        ctx.shape(name)
        return True
    except Exception:   # noqa: BLE001 - a value whose static shape was not recorded
        return False


def dequantize(ctx, x: str, step, dtype=None, zero: int = 0) -> str:
    """Levels → float32 (`step`: the real value of one level; `zero`: the level of 0)."""
    dt = np.dtype(dtype or ctx.dtype(x))
    y = ctx.op("DequantizeLinear", [x, ctx.const(np.float32(step), hint="step"),
                                    ctx.const(np.asarray(zero, dt), hint="zp")])
    return _bind_like(ctx, y, x, np.float32)


def quantize(ctx, y: str, step, dtype, zero: int = 0) -> str:
    """float32 → levels of `dtype` (round half to even, saturated), offset by `zero`."""
    dt = np.dtype(dtype)
    out = ctx.op("QuantizeLinear", [y, ctx.const(np.float32(step), hint="step"),
                                    ctx.const(np.asarray(zero, dt), hint="zp")])
    return _bind_like(ctx, out, y, dt)


def level(dtype, lo, hi) -> np.float32:
    """One level of MXNet's int8/uint8 tensors over [lo, hi] (127.5 / 255.5 levels)."""
    return np.float32(1) / q.quant_scale(dtype, lo, hi)


def dequantize_input(ctx, ins: list[str], k: int = 0, lo_at: int = 1, hi_at: int = 2) -> str:
    """Input k of a quantized op, in real values, its range being inputs lo_at and hi_at."""
    lo, hi = const_range(ctx, ins[lo_at], ins[hi_at])
    return dequantize(ctx, ins[k], level(ctx.dtype(ins[k]), lo, hi))


@functools.lru_cache(maxsize=1)
def int8_products_saturate() -> bool:
    """True on x86 CPUs without VNNI (AVX2, AVX-512 without `avx512_vnni`/`avx_vnni`): there
    ONNX Runtime's uint8×int8 kernels add pairs of products in saturating 16-bit lanes
    (`vpmaddubsw`), which clips large sums; its uint8×uint8 kernels widen first and are exact."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return not flags & {"avx512_vnni", "avx_vnni", "amx_int8"}
    except OSError:
        pass
    return False        # unknown: assume a modern CPU (the load-time check still guards it)


def channel_dequantize(ctx, levels: np.ndarray, steps: np.ndarray) -> str:
    """A per-output-channel quantized constant (int8 weights, int32 bias) as DequantizeLinear of
    an integer initializer: the pattern ONNX Runtime folds into its integer convolution. Where
    its int8 kernels saturate (`int8_products_saturate`), int8 weights travel as the same levels
    offset to uint8 around 128: exact there, and the integer convolution still fuses."""
    if levels.dtype == np.int8 and int8_products_saturate():
        levels = (levels.astype(np.int16) + 128).astype(np.uint8)
        zp = np.full(len(steps), 128, np.uint8)
    else:
        zp = np.zeros(len(steps), levels.dtype)
    return ctx.op("DequantizeLinear", [ctx.const(levels, hint="qweight"),
                                       ctx.const(np.asarray(steps, np.float32), hint="wstep"),
                                       ctx.const(zp, hint="wzp")], axis=0)


def offset_uint8(ctx, x: str, step) -> str:
    """int8 levels → the same levels as uint8 around 128: ONNX Runtime fuses only quantized
    patterns of one 8-bit type, and its uint8 kernels are the fast ones. (A DequantizeLinear /
    QuantizeLinear pair, which its layout optimiser moves through, unlike bitwise ops; skipped
    when the producer recorded its uint8 twin.)"""
    if np.dtype(ctx.dtype(x)) == np.uint8:
        return x
    twin = ctx.twins.get(x)
    if twin is not None and twin[1] == np.float32(step):
        return twin[0]
    return quantize(ctx, dequantize(ctx, x, step), step, np.uint8, 128)


def from_offset_uint8(ctx, u: str, step) -> str:
    """uint8 levels around 128 → int8 levels, written only if a lowering reads the int8 value
    itself rather than its uint8 twin (`u`, recorded for `offset_uint8`)."""
    s8 = _bind_like(ctx, ctx.fresh("int8"), u, np.int8)
    ctx.defer(s8, lambda: quantize(ctx, dequantize(ctx, u, step, np.uint8, 128), step, np.int8))
    ctx.twins[s8] = (u, np.float32(step))
    return s8


def as_uint8_kernel(ctx, x: str, step) -> str:
    """Real values of an int8/uint8 tensor, dequantized from uint8 (int8 offset by 128)."""
    zero = 128 if np.dtype(ctx.dtype(x)) == np.int8 else 0
    return dequantize(ctx, offset_uint8(ctx, x, step), step, np.uint8, zero)


def to_levels(ctx, y: str, step, dtype) -> str:
    """float → levels of `dtype` through a uint8 QuantizeLinear (offset by 128 for int8)."""
    if np.dtype(dtype) == np.uint8:
        return quantize(ctx, y, step, np.uint8)
    return from_offset_uint8(ctx, quantize(ctx, y, step, np.uint8, 128), step)
