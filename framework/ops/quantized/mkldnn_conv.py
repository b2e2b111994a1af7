"""MXNet 1.9.1's fused oneDNN convolution `_sg_mkldnn_conv`, float and INT8, as its CPU
`quantize_net` exports it.

The node's configuration is its subgraph (Convolution [+ BatchNorm] [+ activation]
[+ elemwise_add] [+ activation]) plus flags (quantized, with_bn, with_act, with_sum,
with_postsum_act, min/max_calib_range), read once at parse time. The kernel folds BatchNorm and
quantizes the weights per output channel once per set of parameter arrays (cached on the node's
attrs), never per forward. Its ONNX lowering (QDQ, ONNX Runtime's uint8 kernels) is at the end.
"""
from __future__ import annotations

import numpy as np

from .._kernels import int8_onnx as qo
from ...base import OperatorError
from .._kernels import int8 as q
from .._kernels.mkldnn_common import (U8_ACTS, bound_out, cached, channels, eltwise,
                             eltwise_onnx, fixed_input_dtypes, int32_output, params_of,
                             read_subgraph, sg_of)
from ..attrs import Attrs, Bool
from ..nn.conv import _conv_shape, conv_params, convolution
from ..lowering import Unsupported, lowers, refuse_if
from .standalone import CALIB_ATTRS
from ..registry import register

_F32 = q.F32


CONV_FLAGS = {"quantized": Bool(False), "with_bn": Bool(False), "with_act": Bool(False),
              "with_sum": Bool(False), "with_postsum_act": Bool(False), **CALIB_ATTRS}


def _conv_subgraph(a: Attrs, subgraphs: list) -> None:
    sg = read_subgraph(a, subgraphs, "Convolution")
    if sg is None:
        return
    acts = sg["acts"]
    # with_act: the first activation is the conv's own, any other comes after the sum
    sg["act"] = acts[0] if a.with_act and acts else None
    rest = acts[1:] if sg["act"] is not None else acts
    sg["postsum_act"] = rest[0] if rest else None
    a["_sg"] = sg


def _conv_input_names(a: Attrs) -> list[str]:
    sg = sg_of(a) if "_sg" in a else {"main": Attrs(no_bias=True)}
    names = ["data", "weight"] + ([] if sg["main"].no_bias else ["bias"])
    names += ["gamma", "beta", "mean", "var"] if a.with_bn else []
    names += ["sum"] if a.with_sum else []
    if a.quantized:
        names += ["data_min", "data_max"] + (["sum_min", "sum_max"] if a.with_sum else [])
    return names


def _conv_aux(a: Attrs) -> tuple[int, ...]:
    """BatchNorm's moving statistics: MXNet lists them as the node's auxiliary states."""
    names = _conv_input_names(a)
    return (names.index("mean"), names.index("var")) if a.with_bn else ()


def _conv_outputs(a: Attrs) -> int:
    return 3 if a.quantized else 1


def _conv_out_uint8(a: Attrs) -> bool:
    sg = sg_of(a)
    act = sg["postsum_act"] if a.with_sum else sg["act"]
    if a.with_sum and not a.with_postsum_act:
        return False
    return act is not None and (act[0] in U8_ACTS[1:] or (act[0] == "relu" and not act[1]))


def _sg_conv_shape(a: Attrs, s: list) -> list:
    conv = sg_of(a)["main"]
    out = _conv_shape(conv, s[:2] + ([s[2]] if not conv.no_bias and len(s) > 2 else []))[0]
    return [out, (1,), (1,)] if a.quantized else [out]


def _sg_conv_type(a: Attrs, d: list) -> list:
    if not a.quantized:
        return [np.dtype(d[0])]
    if a.min_calib_range is None or a.max_calib_range is None:
        return [np.dtype(np.int32), _F32, _F32]
    return [np.dtype(np.uint8 if _conv_out_uint8(a) else np.int8), _F32, _F32]


def _fold_bn(a: Attrs, w, b, gamma, beta, mean, var) -> tuple:
    """Weights and bias with BatchNorm folded in (float32, as MXNet's UpdateConvWeightBias)."""
    bn = sg_of(a)["bn"]
    g = np.ones_like(gamma) if bn.fix_gamma else gamma
    alpha = (g / np.sqrt(var + np.float32(bn.eps))).astype(np.float32)
    bias = beta + alpha * ((b if b is not None else 0) - mean)
    return (w * alpha.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32), \
        bias.astype(np.float32)


def _conv_weights(a: Attrs, get: dict) -> tuple:
    w, b = get["weight"], get.get("bias")
    if a.with_bn:
        return _fold_bn(a, w, b, get["gamma"], get["beta"], get["mean"], get["var"])
    return w, b


def _quantized_conv_weights(a: Attrs, get: dict, data_dtype) -> dict:
    """int8 weights, int32 bias and the per-channel output factors for this data range."""
    w, b = _conv_weights(a, get)
    lo, hi = q.scalar(get["data_min"]), q.scalar(get["data_max"])
    data_scale = q.quant_scale(data_dtype, lo, hi)
    calibrated = a.min_calib_range is not None and a.max_calib_range is not None
    prep = {"data_scale": data_scale}
    if calibrated:
        ws = q.channel_scales(w, b, data_scale)
        out_dt = np.dtype(np.uint8 if _conv_out_uint8(a) else np.int8)
        out_scale = q.quant_scale(out_dt, a.min_calib_range, a.max_calib_range)
        prep["requant"] = channels(out_scale / data_scale / ws, 4)
        prep["range"] = (a.min_calib_range, a.max_calib_range)
    else:
        ws = np.float32(q.quant_scale(np.int8, w.min(), w.max()))
        levels = 127 if data_dtype == np.int8 else 255
        top = q.int32_range(w.min(), w.max(), 127, lo, hi, levels)
        out_scale = data_scale * ws
        prep["requant"] = None
        prep["range"] = (-top, top)
    prep["out_scale"] = np.float32(out_scale)
    prep["wscales"] = np.broadcast_to(np.float32(ws), (w.shape[0],)).astype(np.float32)
    prep["weight"] = q.quantize_weight(w, np.broadcast_to(ws, (w.shape[0],))).astype(np.float32)
    prep["bias"] = None if b is None else q.quantize_bias(b, ws * data_scale).astype(np.float32)
    return prep


def _quantized_conv(a: Attrs, get: dict) -> tuple:
    sg, x = sg_of(a), get["data"]
    q.check_qdtype(x, "_sg_mkldnn_conv")
    if q.scalar(get["data_min"]) < 0 and x.dtype != np.int8:
        raise OperatorError("_sg_mkldnn_conv: data with a negative range must be int8")
    key = tuple(get[k] for k in _conv_input_names(a)[1:] if k not in ("data", "sum")
                and not k.startswith("data_") and not k.startswith("sum_"))
    key += (x.dtype, q.scalar(get["data_min"]), q.scalar(get["data_max"]))
    prep = cached(sg, key, lambda: _quantized_conv_weights(a, get, x.dtype))
    y = convolution.kernel(sg["main"], x.astype(np.float32), prep["weight"], prep["bias"])
    if prep["requant"] is not None:
        y = y * prep["requant"]
    y = _conv_post_ops(a, prep, get, y)
    out_dt = _sg_conv_type(a, [x.dtype])[0]
    if a.with_sum and get["sum"].dtype != out_dt and out_dt != np.int32:
        # MXNet 1.9.1 runs the summing convolution in place on the sum's buffer: oneDNN writes
        # levels of the sum's type, which the next ops read as the declared output type
        return q.saturate(y, get["sum"].dtype).view(out_dt), *q.range_out(*prep["range"])
    return q.saturate(y, out_dt), *q.range_out(*prep["range"])


def _conv_post_ops(a: Attrs, prep: dict, get: dict, y: np.ndarray) -> np.ndarray:
    """Activation, sum and post-sum activation on the output levels, as oneDNN's post-ops."""
    sg = sg_of(a)
    act = sg["act"]
    if act is not None and a.with_act:
        if act[0] == "bounded_relu" and not a.with_sum:
            act = None        # MXNet leaves relu6 to the output's saturation
        elif act[0] == "bounded_relu":
            act = (act[0], act[1] * prep["out_scale"])
        if act is not None:
            y = eltwise(*act, y)
    if a.with_sum:
        s = get["sum"]
        sum_scale = prep["out_scale"] / q.quant_scale(s.dtype, q.scalar(get["sum_min"]),
                                                      q.scalar(get["sum_max"]))
        y = y + s.astype(np.float32) * np.float32(sum_scale)
    if a.with_postsum_act and sg["postsum_act"] is not None:
        y = eltwise(*sg["postsum_act"], y)
    return y


def _float_conv(a: Attrs, get: dict) -> np.ndarray:
    sg = sg_of(a)
    w, b = cached(sg, tuple(get[k] for k in ("weight", "bias", "gamma", "beta", "mean", "var")
                             if k in get), lambda: _conv_weights(a, get))
    y = convolution.kernel(sg["main"], get["data"], w, b)
    if a.with_act and sg["act"] is not None:
        y = eltwise(*sg["act"], y)
    if a.with_sum:
        y = y + get["sum"]
    if a.with_postsum_act and sg["postsum_act"] is not None:
        y = eltwise(*sg["postsum_act"], y)
    return y.astype(get["data"].dtype, copy=False)


@register("_sg_mkldnn_conv", attrs=CONV_FLAGS, inputs=_conv_input_names, aux=_conv_aux,
          input_dtypes=lambda a, names: fixed_input_dtypes(False, names),
          num_outputs=_conv_outputs, output_names=("output", "output_min", "output_max"),
          infer_shape=_sg_conv_shape,
          infer_type=_sg_conv_type, subgraph_attrs=_conv_subgraph, strict=True, layer="conv",
          quantized=lambda a: a.quantized,
          data_shape=lambda a, w: convolution.data_shape(sg_of(a)["main"], w) if "_sg" in a
          else None)
def sg_mkldnn_conv(a: Attrs, *ins: np.ndarray):
    """oneDNN's fused convolution (+BatchNorm, activation, residual sum, post-sum activation);
    INT8 with per-output-channel weight scales when quantized."""
    get = dict(zip(_conv_input_names(a), ins))
    return _quantized_conv(a, get) if a.quantized else _float_conv(a, get)


# -- ONNX lowering ------------------------------------------------------------------------------


def _conv_onnx_attrs(conv: Attrs) -> dict:
    nd = len(conv.kernel)
    stride, pad, dilate = conv_params(conv, nd)
    return dict(kernel_shape=list(conv.kernel), strides=list(stride), pads=list(pad) * 2,
                dilations=list(dilate), group=conv.num_group)


def _quantized_conv_onnx(ctx, node, ins) -> list[str]:
    a, sg = node.parsed, sg_of(node.parsed)
    get = params_of(ctx, node, ins, _conv_input_names(a))
    lo, hi = qo.const_range(ctx, ins[len(ins) - (4 if a.with_sum else 2)],
                            ins[len(ins) - (3 if a.with_sum else 1)])
    get["data_min"], get["data_max"] = np.float32(lo), np.float32(hi)
    xdt = ctx.dtype(ins[0])
    prep = _quantized_conv_weights(a, get, xdt)
    ds, steps = prep["data_scale"], np.float32(1) / prep["wscales"]
    x, wq, conv_attrs = _stem_as_space_to_depth(ctx, sg["main"], ins[0], ds,
                                                 prep["weight"].astype(np.int8))
    conv_ins = [x, qo.channel_dequantize(ctx, wq, steps)]
    if prep["bias"] is not None:
        conv_ins.append(qo.channel_dequantize(ctx, prep["bias"].astype(np.int32), steps / ds))
    y = bound_out(ctx, ctx.op("Conv", conv_ins, **conv_attrs))
    out_dt = ctx.out_dtypes[0]
    # MXNet's in-place sum writes levels of the sum's type (see sg_mkldnn_conv)
    level_dt = ctx.dtype(get["sum"]) if a.with_sum else out_dt
    step = 1 / prep["out_scale"]
    if level_dt == np.int8 and out_dt == np.uint8:
        # ReLU'd int8 levels read as uint8: the uint8 levels (ReLU = their saturation at 0)
        # capped at 127, int8's top
        y = _conv_post_ops_onnx(ctx, a, prep, get, y, True)
        out = ctx.op("Min", [qo.quantize(ctx, y, step, np.uint8), ctx.const(np.uint8(127))])
    else:
        y = _conv_post_ops_onnx(ctx, a, prep, get, y, level_dt == np.uint8)
        out = qo.to_levels(ctx, y, step, level_dt)
        if level_dt != out_dt:                # bit for bit (ONNX Runtime's Cast wraps)
            out = ctx.op("Cast", [out], to=ctx.tensor_type(out_dt))
    return [out, *qo.range_outputs(ctx, *prep["range"])]


def _stem_as_space_to_depth(ctx, conv: Attrs, data: str, ds, wq: np.ndarray) -> tuple:
    """(real input, int8 weights, Conv attributes). A network's stem (a stride-2 k×k convolution
    of a few channels: ResNet's 7×7 on RGB) runs as a stride-1 ⌈k/2⌉×⌈k/2⌉ convolution of the
    2×2 space-to-depth of the zero-padded input, the same products regrouped: ONNX Runtime's
    integer kernels take twice as long on 3 channels as on 12."""
    step = np.float32(1) / ds
    zero = 128 if np.dtype(ctx.dtype(data)) == np.int8 else 0
    levels = qo.offset_uint8(ctx, data, step)
    geo = _space_to_depth_geometry(ctx, conv, data, wq.shape)
    if geo is None:
        return (qo.dequantize(ctx, levels, step, np.uint8, zero), wq,
                _conv_onnx_attrs(conv))
    pads, half = geo
    padded = ctx.op("Pad", [levels, ctx.ints(pads), ctx.const(np.uint8(zero))], mode="constant")
    s2d = ctx.op("SpaceToDepth", [padded], blocksize=2)
    w8 = np.zeros(wq.shape[:2] + (2 * half, 2 * half), np.int8)
    w8[:, :, :wq.shape[2], :wq.shape[3]] = wq
    o, c = wq.shape[:2]
    w2 = w8.reshape(o, c, half, 2, half, 2).transpose(0, 3, 5, 1, 2, 4)
    return (qo.dequantize(ctx, s2d, step, np.uint8, zero),
            np.ascontiguousarray(w2.reshape(o, 4 * c, half, half)),
            dict(kernel_shape=[half, half], strides=[1, 1], pads=[0, 0, 0, 0]))


def _space_to_depth_geometry(ctx, conv: Attrs, data: str, wshape: tuple) -> tuple | None:
    """(Pad's pads, kernel half size) where the stem rewrite applies, else None."""
    k = tuple(conv.kernel)
    stride, pad, dilate = conv_params(conv, len(k))
    if (len(k) != 2 or k[0] != k[1] or k[0] < 5 or tuple(stride) != (2, 2) or conv.num_group != 1
            or tuple(dilate) != (1, 1) or wshape[1] > 4 or conv.layout not in (None, "NCHW")):
        return None
    try:
        h, w = ctx.shape(data)[2:]
    except Exception:   # noqa: BLE001 - spatial size unknown statically: keep the plain conv
        return None
    half = (k[0] + 1) // 2
    after = []
    for n, p in ((h, pad[0]), (w, pad[1])):
        out = (n + 2 * p - k[0]) // 2 + 1
        after.append(2 * (out + half - 1) - n - p)
    if min(after) < 0:
        return None
    return [0, 0, pad[0], pad[1], 0, 0, after[0], after[1]], half


def _conv_post_ops_onnx(ctx, a: Attrs, prep: dict, get: dict, y: str, to_uint8: bool) -> str:
    """`to_uint8`: the levels written are uint8, whose saturation at 0 is a final ReLU."""
    sg = sg_of(a)
    act = sg["act"] if a.with_act else None
    if act is not None and not (act[0] == "bounded_relu" and not a.with_sum):
        if act != ("relu", 0.0) or a.with_sum or not to_uint8:
            y = bound_out(ctx, eltwise_onnx(ctx, act, y, prep["out_scale"]))
    if a.with_sum:
        s = get["sum"]
        if isinstance(get["sum_min"], str) or isinstance(get["sum_max"], str):
            raise Unsupported("its sum's range is computed at run time")
        lo, hi = q.scalar(get["sum_min"]), q.scalar(get["sum_max"])
        y = _requantized_for_sum(ctx, a, y, q.abs_max(lo, hi))
        y = bound_out(ctx, ctx.op("Add", [y, qo.as_uint8_kernel(ctx, s, qo.level(ctx.dtype(s), lo,
                                                                             hi))]))
    if a.with_postsum_act and sg["postsum_act"] is not None:
        if not (sg["postsum_act"] == ("relu", 0.0) and to_uint8):
            y = bound_out(ctx, eltwise_onnx(ctx, sg["postsum_act"], y, prep["out_scale"]))
    return y


def _requantized_for_sum(ctx, a: Attrs, y: str, sum_amax) -> str:
    """The convolution's own part of a residual sum, rounded to uint8 levels around 128 over
    ±(|output| + |sum|): ONNX Runtime then runs QLinearConv + QLinearAdd instead of a float
    convolution (an extra rounding of at most half a level of this wider range)."""
    step = (q.abs_max(a.min_calib_range, a.max_calib_range) + sum_amax) / q.INT8_RANGE
    return qo.dequantize(ctx, qo.quantize(ctx, y, step, np.uint8, 128), step, np.uint8, 128)


def _float_conv_onnx(ctx, node, ins) -> str:
    a, sg = node.parsed, sg_of(node.parsed)
    get = params_of(ctx, node, ins, _conv_input_names(a))
    w, b = _conv_weights(a, get)
    conv_ins = [ins[0], ctx.const(w, hint="weight")] + ([] if b is None else
                                                        [ctx.const(b, hint="bias")])
    y = bound_out(ctx, ctx.op("Conv", conv_ins, **_conv_onnx_attrs(sg["main"])))
    if a.with_act and sg["act"] is not None:
        y = bound_out(ctx, eltwise_onnx(ctx, sg["act"], y))
    if a.with_sum:
        y = bound_out(ctx, ctx.op("Add", [y, get["sum"]]))
    if a.with_postsum_act and sg["postsum_act"] is not None:
        y = eltwise_onnx(ctx, sg["postsum_act"], y)
    return y


@lowers(sg_mkldnn_conv, check=refuse_if(
    uncalibrated_int32_output=lambda a: int32_output(a)))
def _sg_conv_onnx(ctx, node, ins):
    return _quantized_conv_onnx(ctx, node, ins) if node.parsed.quantized else \
        _float_conv_onnx(ctx, node, ins)
