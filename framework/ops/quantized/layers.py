"""MXNet 1.9.1's unfused INT8 layers `_contrib_quantized_conv` and
`_contrib_quantized_fully_connected` (its oneDNN CPU kernels): int8 weights and bias quantized
offline, int32 output levels over the range of a product of int8 levels (MXNet's
QuantizationRangeForMultiplication). quantize_net on CPU fuses these into the `_sg_mkldnn_*`
nodes; graphs written by other tools may still hold them. NumPy only (their int32 output is
followed by a requantize computed at run time in such graphs).
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError
from .._kernels import int8 as q
from ..attrs import Attrs
from ..nn.conv import CONV_ATTRS, _conv_shape, convolution
from ..nn.dense import FC_ATTRS, _fc_shape, fully_connected
from .standalone import float_ranges
from ..registry import register

_OUT3 = ("output", "min_output", "max_output")
_INT32 = np.dtype(np.int32)


def _inputs(a: Attrs) -> list[str]:
    params = ["data", "weight"] + ([] if a.no_bias else ["bias"])
    return params + [f"{m}_{p}" for p in params for m in ("min", "max")]


def _split(a: Attrs, ins: tuple) -> tuple[dict, list]:
    names = _inputs(a)
    get = dict(zip(names, ins))
    return get, [q.scalar(get[f"{m}_{p}"]) for p in ("data", "weight") for m in ("min", "max")]


def _int8_dtypes(a: Attrs, names: list[str]) -> list:
    return [np.dtype(np.int8) if n in ("weight", "bias") else d
            for n, d in zip(names, float_ranges(a, names))]


@register("_contrib_quantized_conv", "_npx_quantized_conv", attrs=CONV_ATTRS, inputs=_inputs, num_outputs=3,
          output_names=_OUT3, input_dtypes=_int8_dtypes, quantized=True,
          infer_shape=lambda a, s: [_conv_shape(a, s[:2])[0], (1,), (1,)],
          infer_type=lambda a, d: [_INT32, q.F32, q.F32])
def quantized_conv(a: Attrs, *ins: np.ndarray):
    """uint8 data × int8 weights → int32 levels; the int8 bias is added as it is (MXNet's
    oneDNN kernel reorders it to int32 unscaled); the range is the int8 × int8 product's."""
    get, (dlo, dhi, wlo, whi) = _split(a, ins)
    if get["data"].dtype != np.uint8:
        raise OperatorError("_contrib_quantized_conv: data must be uint8 (MXNet's oneDNN kernel)")
    bias = None if a.no_bias else get["bias"].astype(np.float32)
    acc = convolution.kernel(a, get["data"].astype(np.float32), get["weight"].astype(np.float32),
                             bias)
    top = q.int32_range(dlo, dhi, 127, wlo, whi, 127)
    return q.saturate(acc, np.int32), *q.range_out(-top, top)


@register("_contrib_quantized_fully_connected", "_npx_quantized_fully_connected",
          attrs=FC_ATTRS, inputs=_inputs, num_outputs=3,
          output_names=_OUT3, input_dtypes=_int8_dtypes, quantized=True,
          infer_shape=lambda a, s: [_fc_shape(a, s[:1])[0], (1,), (1,)],
          infer_type=lambda a, d: [_INT32, q.F32, q.F32])
def quantized_fully_connected(a: Attrs, *ins: np.ndarray):
    """int8/uint8 data × int8 weights → int32 levels; the int8 bias rescaled to the product's
    levels (truncated, as MXNet's kernel)."""
    get, (dlo, dhi, wlo, whi) = _split(a, ins)
    x = get["data"]
    q.check_qdtype(x, "_contrib_quantized_fully_connected")
    bias = None
    if not a.no_bias:
        scale = q.quant_scale(x.dtype, dlo, dhi) * q.quant_scale(np.int8, wlo, whi)
        rescale = np.float32(scale * q.abs_max(q.scalar(get["min_bias"]),
                                               q.scalar(get["max_bias"])) / q.INT8_RANGE)
        bias = np.trunc(get["bias"].astype(np.float32) * rescale)
    acc = fully_connected.kernel(a, x.astype(np.float32), get["weight"].astype(np.float32), bias)
    levels = 255 if x.dtype == np.uint8 else 127    # MXNet's S8U8 range reads the weight as u8
    top = q.int32_range(dlo, dhi, 127, wlo, whi, levels)
    return q.saturate(acc, np.int32), *q.range_out(-top, top)


# MXNet's FQuantizedOp of the plain layers (a graph quantized without oneDNN fusion:
# contrib.quantization.quantize_model)
convolution.quantized_as = quantized_conv.name
fully_connected.quantized_as = quantized_fully_connected.name
