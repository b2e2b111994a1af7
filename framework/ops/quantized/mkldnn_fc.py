"""MXNet 1.9.1's fused oneDNN fully-connected layer `_sg_mkldnn_fully_connected`, float and INT8,
as its CPU `quantize_net` exports it: FullyConnected [+ element-wise activation] in the node's
subgraph; when quantized, MXNet's offline int8 weights and bias with their ranges (or float
weights with channel_wise_quantize). Its ONNX lowering (dequantized weights, Gemm) is at the end.
"""
from __future__ import annotations

import numpy as np

from .._kernels import int8 as q
from .._kernels import int8_onnx as qo
from .._kernels.mkldnn_common import (U8_ACTS, bound_out, cached, eltwise, eltwise_onnx,
                             fixed_input_dtypes, int32_output, params_of, read_subgraph, sg_of)
from ..attrs import Attrs, Bool
from ..lowering import Unsupported, lowers, refuse_if
from ..nn.dense import _fc_shape, fully_connected
from .standalone import CALIB_ATTRS
from ..registry import register

_F32 = q.F32
_OUT3 = ("output", "min_output", "max_output")
_FC_U8_ACTS = U8_ACTS + ("square", "sqrt", "exp", "abs")


FC_FLAGS = {"quantized": Bool(False), "enable_float_output": Bool(False),
            "with_eltwise": Bool(False), "channel_wise_quantize": Bool(None), **CALIB_ATTRS}


def _fc_subgraph(a: Attrs, subgraphs: list) -> None:
    sg = read_subgraph(a, subgraphs, "FullyConnected")
    if sg is None:
        return
    sg["act"] = sg["acts"][0] if a.with_eltwise and sg["acts"] else None
    a["_sg"] = sg


def _fc_input_names(a: Attrs) -> list[str]:
    sg = sg_of(a) if "_sg" in a else {"main": Attrs(no_bias=True)}
    has_bias = not sg["main"].no_bias
    names = ["data", "weight"] + (["bias"] if has_bias else [])
    if a.quantized:
        names += ["min_data", "max_data"]
        if not a.channel_wise_quantize:
            names += ["min_weight", "max_weight"] + (["min_bias", "max_bias"] if has_bias else [])
    return names


def _fc_outputs(a: Attrs) -> int:
    return 3 if a.quantized and not a.enable_float_output else 1


def _fc_calibrated(a: Attrs) -> bool:
    return a.min_calib_range is not None and a.max_calib_range is not None


def _sg_fc_shape(a: Attrs, s: list) -> list:
    fc = sg_of(a)["main"]
    out = _fc_shape(fc, s[:2] + ([s[2]] if not fc.no_bias and len(s) > 2 else []))[0]
    return [out] + [(1,), (1,)] * (_fc_outputs(a) == 3)


def _sg_fc_type(a: Attrs, d: list) -> list:
    if not a.quantized:
        return [np.dtype(d[0])]
    if a.enable_float_output:
        return [_F32]
    if not _fc_calibrated(a):
        return [np.dtype(np.int32), _F32, _F32]
    act = sg_of(a)["act"]
    u8 = a.with_eltwise and act is not None and act[0] in _FC_U8_ACTS
    return [np.dtype(np.uint8 if u8 else np.int8), _F32, _F32]


def _round_away(x: np.ndarray) -> np.ndarray:
    """std::round: halves away from zero."""
    return np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))


def _prequantized_fc(get: dict, data_scale) -> tuple:
    """MXNet's offline-quantized int8 weight and bias: int32 bias rescaled to the product scale
    (lowered, with the weights, where it would pass INT32_MAX/2)."""
    w = get["weight"].astype(np.float32)
    ws = q.quant_scale(np.int8, q.scalar(get["min_weight"]), q.scalar(get["max_weight"]))
    if "bias" not in get:
        return w, None, ws
    b_lo, b_hi = q.scalar(get["min_bias"]), q.scalar(get["max_bias"])
    b_scale = q.quant_scale(np.int8, b_lo, b_hi)
    rescale = np.float32(data_scale * ws / b_scale)
    limit = np.float32(q.INT32_MAX / 2 / q.abs_max(b_lo, b_hi) / b_scale)
    if rescale > limit:
        w_rescale = np.float32(limit * b_scale / data_scale / ws)
        w = _round_away(w * w_rescale)
        ws, rescale = np.float32(ws * w_rescale), limit
    return w, _round_away(get["bias"].astype(np.float32) * rescale), ws


def _quantized_fc_weights(a: Attrs, get: dict, data_dtype) -> dict:
    lo, hi = q.scalar(get["min_data"]), q.scalar(get["max_data"])
    data_scale = q.quant_scale(data_dtype, lo, hi)
    if a.channel_wise_quantize:
        w, b = get["weight"], get.get("bias")
        ws = q.channel_scales(w, b, data_scale)
        wq = q.quantize_weight(w, ws).astype(np.float32)
        bq = None if b is None else q.quantize_bias(b, ws * data_scale).astype(np.float32)
    else:
        wq, bq, ws = _prequantized_fc(get, data_scale)
    prep = {"weight": wq.T.copy(), "bias": bq, "range": None, "scale": None}
    if _fc_calibrated(a) or a.enable_float_output:
        prep["scale"] = (np.float32(1) / data_scale / ws).astype(np.float32)
    if _fc_calibrated(a):
        out_dt = _sg_fc_type(a, [data_dtype])[0]
        prep["out_scale"] = q.quant_scale(out_dt, a.min_calib_range, a.max_calib_range)
        prep["range"] = (a.min_calib_range, a.max_calib_range)
    elif not a.enable_float_output:
        wlo, whi = q.scalar(get["min_weight"]), q.scalar(get["max_weight"])
        levels = 255 if data_dtype == np.uint8 else 127   # MXNet's S8U8 range: weight as u8
        top = q.int32_range(lo, hi, 127, wlo, whi, levels)
        prep["range"] = (-top, top)
    return prep


def _quantized_fc(a: Attrs, get: dict):
    sg, x = sg_of(a), get["data"]
    q.check_qdtype(x, "_sg_mkldnn_fully_connected")
    key = tuple(v for k, v in get.items() if k not in ("data", "min_data", "max_data"))
    key += (x.dtype, q.scalar(get["min_data"]), q.scalar(get["max_data"]))
    prep = cached(sg, key, lambda: _quantized_fc_weights(a, get, x.dtype))
    x2 = _fc_rows(sg["main"], x).astype(np.float32)
    acc = x2 @ prep["weight"]
    if prep["bias"] is not None:
        acc += prep["bias"]
    act = sg["act"] if a.with_eltwise else None
    if prep["scale"] is not None:
        acc = acc * prep["scale"]
    if act is not None:
        acc = eltwise(*act, acc)
    out_shape = _fc_shape(sg["main"], [x.shape])[0]
    if a.enable_float_output:
        return acc.reshape(out_shape).astype(np.float32)
    if "out_scale" in prep:
        acc = acc * prep["out_scale"]
    y = q.saturate(acc, _sg_fc_type(a, [x.dtype])[0]).reshape(out_shape)
    return y, *q.range_out(*prep["range"])


def _fc_rows(fc: Attrs, x: np.ndarray) -> np.ndarray:
    return x.reshape(x.shape[0], -1) if fc.flatten else x.reshape(-1, x.shape[-1])


@register("_sg_mkldnn_fully_connected", attrs=FC_FLAGS, inputs=_fc_input_names,
          input_dtypes=lambda a, names: fixed_input_dtypes(
              a.quantized and not a.channel_wise_quantize, names),
          num_outputs=_fc_outputs, output_names=_OUT3, infer_shape=_sg_fc_shape,
          infer_type=_sg_fc_type, subgraph_attrs=_fc_subgraph, strict=True, layer="dense",
          quantized=lambda a: a.quantized,
          data_shape=lambda a, w: fully_connected.data_shape(sg_of(a)["main"], w) if "_sg" in a
          else None)
def sg_mkldnn_fully_connected(a: Attrs, *ins: np.ndarray):
    """oneDNN's fused fully-connected layer (+ element-wise activation); INT8 when quantized
    (MXNet's offline int8 weights, or channel-wise scales of float weights)."""
    get = dict(zip(_fc_input_names(a), ins))
    if a.quantized:
        return _quantized_fc(a, get)
    sg = sg_of(a)
    y = fully_connected.kernel(sg["main"], get["data"], get["weight"], get.get("bias"))
    return eltwise(*sg["act"], y) if a.with_eltwise and sg["act"] is not None else y


# -- ONNX lowering ------------------------------------------------------------------------------


def _fc_real_weights(a: Attrs, get: dict, data_dtype) -> tuple:
    """Dequantized weights and bias of a quantized FC: W_real·x_real equals MXNet's int32
    product rescaled (float32 rounding aside)."""
    prep = _quantized_fc_weights(a, get, data_dtype)
    data_scale = q.quant_scale(data_dtype, get["min_data"], get["max_data"])
    unit = np.float32(1) / data_scale
    per_out = (prep["scale"] if prep["scale"] is not None else unit) / unit
    w = (prep["weight"] * per_out).T.astype(np.float32)           # (out, in), real units
    b = None if prep["bias"] is None else (prep["bias"] * per_out * unit).astype(np.float32)
    return w, b, prep


@lowers(sg_mkldnn_fully_connected, check=refuse_if(
    uncalibrated_int32_output=lambda a: int32_output(a) and not a.enable_float_output))
def _sg_fc_onnx(ctx, node, ins):
    a, sg = node.parsed, sg_of(node.parsed)
    fc = sg["main"]
    names = _fc_input_names(a)
    get = params_of(ctx, node, ins, names)
    x = ins[0]
    if a.quantized:
        lo, hi = qo.const_range(ctx, ins[names.index("min_data")], ins[names.index("max_data")])
        for k in ("min_weight", "max_weight", "min_bias", "max_bias"):
            if k in get and isinstance(get[k], str):
                raise Unsupported(f"its {k} is not a parameter")
        get["min_data"], get["max_data"] = lo, hi
        w, b, prep = _fc_real_weights(a, get, ctx.dtype(x))
        x = qo.dequantize(ctx, x, qo.level(ctx.dtype(x), lo, hi))
    else:
        w, b = get["weight"], get.get("bias")
    x = ctx.op("Flatten", [x], axis=1) if fc.flatten else x
    if fc.flatten or ctx.rank(ins[0]) == 2:
        y = ctx.op("Gemm", [x, ctx.const(w, hint="weight")] + ([] if b is None else
                                                                [ctx.const(b, hint="bias")]),
                   transB=1)
    else:
        y = ctx.op("MatMul", [x, ctx.const(np.ascontiguousarray(w.T), hint="weight")])
        y = y if b is None else ctx.op("Add", [y, ctx.const(b, hint="bias")])
    y = bound_out(ctx, y)
    if a.with_eltwise and sg["act"] is not None:
        y = bound_out(ctx, eltwise_onnx(ctx, sg["act"], y))
    if not a.quantized or a.enable_float_output:
        return y
    out_dt = ctx.out_dtypes[0]
    return [qo.quantize(ctx, y, 1 / prep["out_scale"], out_dt),
            *qo.range_outputs(ctx, *prep["range"])]
