"""MXNet 1.9.1's fused oneDNN nodes `_sg_mkldnn_conv` and `_sg_mkldnn_fully_connected`, float and
INT8, as its CPU `quantize_net` exports them.

The node's configuration is its subgraph (the original Convolution [+ BatchNorm] [+ activation]
[+ elemwise_add] [+ activation], or FullyConnected [+ activation]) plus a few flags (quantized,
with_bn, with_act, with_sum, with_postsum_act, with_eltwise, enable_float_output,
min/max_calib_range, channel_wise_quantize). `subgraph_attrs` reads the subgraph once at parse
time; the kernels fold BatchNorm and quantize weights once per set of parameter arrays (cached on
the node's attrs), never per forward.
"""
from __future__ import annotations

import numpy as np

from ..base import GraphFormatError, OperatorError
from . import _int8 as q
from .activation import sigmoid, softrelu, tanh
from .attrs import Attrs, Bool
from .conv import _conv_shape, convolution
from .nn_dense import _fc_shape, fully_connected
from .quantized import CALIB_ATTRS
from .registry import register

_OUT3 = ("output", "min_output", "max_output")
_F32 = q.F32
_U8_ACTS = ("relu", "bounded_relu", "logistic", "soft_relu")
_FC_U8_ACTS = _U8_ACTS + ("square", "sqrt", "exp", "abs")


# -- reading the subgraph -----------------------------------------------------------------------
def _act_of(node) -> tuple:
    """(oneDNN eltwise kind, alpha) of an activation node of a fused subgraph."""
    a = node.parsed
    if node.opname == "Activation":
        kind = {"relu": "relu", "sigmoid": "logistic", "tanh": "tanh",
                "softrelu": "soft_relu"}.get(a.act_type)
        if kind is None:
            raise GraphFormatError(f"node '{node.name}': activation {a.act_type} cannot be fused")
        return kind, 0.0
    if node.opname == "LeakyReLU":
        if a.act_type != "leaky":
            raise GraphFormatError(f"node '{node.name}': LeakyReLU {a.act_type} cannot be fused")
        return "relu", float(a.slope)
    if node.opname == "clip":
        return "bounded_relu", float(a.a_max)
    return node.opname, 0.0                       # square, sqrt, exp, abs (FC only)


def _read_subgraph(a: Attrs, subgraphs: list, main: str) -> dict:
    if len(subgraphs) != 1:
        raise GraphFormatError(f"{main} subgraph node needs exactly one subgraph, "
                               f"got {len(subgraphs)}")
    sg: dict = {"acts": [], "cache": None}
    for n in subgraphs[0].topo():
        if n.is_var:
            continue
        if n.opname == main:
            sg["main"] = n.parsed
        elif n.opname == "BatchNorm":
            sg["bn"] = n.parsed
        elif n.opname in ("elemwise_add", "_Plus", "broadcast_add", "_npi_add"):
            sg["sum"] = True
        else:
            sg["acts"].append(_act_of(n))
    if "main" not in sg:
        raise GraphFormatError(f"a fused {main} node's subgraph holds no {main}")
    return sg


def _sg(a: Attrs) -> dict:
    sg = a.get("_sg")
    if sg is None:
        raise GraphFormatError("a fused oneDNN node (_sg_mkldnn_*) has no subgraph")
    return sg


def _eltwise(kind: str, alpha: float, y: np.ndarray) -> np.ndarray:
    """oneDNN's eltwise post-op on `y` (float32)."""
    if kind == "relu":
        return np.maximum(y, 0) if not alpha else np.where(y > 0, y, y * np.float32(alpha))
    if kind == "bounded_relu":
        return np.clip(y, 0, np.float32(alpha))
    fns = {"logistic": sigmoid, "tanh": tanh, "soft_relu": softrelu, "square": np.square,
           "sqrt": np.sqrt, "exp": np.exp, "abs": np.abs}
    return fns[kind](y)


def _channels(v: np.ndarray, ndim: int) -> np.ndarray:
    return np.asarray(v, np.float32).reshape((-1,) + (1,) * (ndim - 2))


def _cached(sg: dict, key: tuple, build):
    """Weights prepared once per set of parameter arrays (and data range): the cache keeps the
    arrays it was built from, so their ids cannot be reused while it holds them."""
    hit = sg["cache"]
    if hit is not None and len(hit[0]) == len(key) and all(
            (x is y) if isinstance(x, np.ndarray) else x == y for x, y in zip(hit[0], key)):
        return hit[1]
    value = build()
    sg["cache"] = (key, value)
    return value


# -- _sg_mkldnn_conv ----------------------------------------------------------------------------
CONV_FLAGS = {"quantized": Bool(False), "with_bn": Bool(False), "with_act": Bool(False),
              "with_sum": Bool(False), "with_postsum_act": Bool(False), **CALIB_ATTRS}


def _conv_subgraph(a: Attrs, subgraphs: list) -> None:
    sg = _read_subgraph(a, subgraphs, "Convolution")
    acts = sg["acts"]
    # with_act: the first activation is the conv's own, any other comes after the sum
    sg["act"] = acts[0] if a.with_act and acts else None
    rest = acts[1:] if sg["act"] is not None else acts
    sg["postsum_act"] = rest[0] if rest else None
    a["_sg"] = sg


def _conv_input_names(a: Attrs) -> list[str]:
    sg = _sg(a) if "_sg" in a else {"main": Attrs(no_bias=True)}
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
    sg = _sg(a)
    act = sg["postsum_act"] if a.with_sum else sg["act"]
    if a.with_sum and not a.with_postsum_act:
        return False
    return act is not None and (act[0] in _U8_ACTS[1:] or (act[0] == "relu" and not act[1]))


def _sg_conv_shape(a: Attrs, s: list) -> list:
    conv = _sg(a)["main"]
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
    bn = _sg(a)["bn"]
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
        prep["requant"] = _channels(out_scale / data_scale / ws, 4)
        prep["range"] = (a.min_calib_range, a.max_calib_range)
    else:
        ws = np.float32(q.quant_scale(np.int8, w.min(), w.max()))
        levels = 127 if data_dtype == np.int8 else 255
        top = q.int32_range(w.min(), w.max(), 127, lo, hi, levels)
        out_scale = data_scale * ws
        prep["requant"] = None
        prep["range"] = (-top, top)
    prep["out_scale"] = np.float32(out_scale)
    prep["weight"] = q.quantize_weight(w, np.broadcast_to(ws, (w.shape[0],))).astype(np.float32)
    prep["bias"] = None if b is None else q.quantize_bias(b, ws * data_scale).astype(np.float32)
    return prep


def _quantized_conv(a: Attrs, get: dict) -> tuple:
    sg, x = _sg(a), get["data"]
    q.check_qdtype(x, "_sg_mkldnn_conv")
    if q.scalar(get["data_min"]) < 0 and x.dtype != np.int8:
        raise OperatorError("_sg_mkldnn_conv: data with a negative range must be int8")
    key = tuple(get[k] for k in _conv_input_names(a)[1:] if k not in ("data", "sum")
                and not k.startswith("data_") and not k.startswith("sum_"))
    key += (x.dtype, q.scalar(get["data_min"]), q.scalar(get["data_max"]))
    prep = _cached(sg, key, lambda: _quantized_conv_weights(a, get, x.dtype))
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
    sg = _sg(a)
    act = sg["act"]
    if act is not None and a.with_act:
        if act[0] == "bounded_relu" and not a.with_sum:
            act = None        # MXNet leaves relu6 to the output's saturation
        elif act[0] == "bounded_relu":
            act = (act[0], act[1] * prep["out_scale"])
        if act is not None:
            y = _eltwise(*act, y)
    if a.with_sum:
        s = get["sum"]
        sum_scale = prep["out_scale"] / q.quant_scale(s.dtype, q.scalar(get["sum_min"]),
                                                      q.scalar(get["sum_max"]))
        y = y + s.astype(np.float32) * np.float32(sum_scale)
    if a.with_postsum_act and sg["postsum_act"] is not None:
        y = _eltwise(*sg["postsum_act"], y)
    return y


def _float_conv(a: Attrs, get: dict) -> np.ndarray:
    sg = _sg(a)
    w, b = _cached(sg, tuple(get[k] for k in ("weight", "bias", "gamma", "beta", "mean", "var")
                             if k in get), lambda: _conv_weights(a, get))
    y = convolution.kernel(sg["main"], get["data"], w, b)
    if a.with_act and sg["act"] is not None:
        y = _eltwise(*sg["act"], y)
    if a.with_sum:
        y = y + get["sum"]
    if a.with_postsum_act and sg["postsum_act"] is not None:
        y = _eltwise(*sg["postsum_act"], y)
    return y.astype(get["data"].dtype, copy=False)


@register("_sg_mkldnn_conv", attrs=CONV_FLAGS, inputs=_conv_input_names, aux=_conv_aux,
          num_outputs=_conv_outputs, output_names=("output", "output_min", "output_max"), infer_shape=_sg_conv_shape,
          infer_type=_sg_conv_type, subgraph_attrs=_conv_subgraph, strict=True, layer="conv")
def sg_mkldnn_conv(a: Attrs, *ins: np.ndarray):
    """oneDNN's fused convolution (+BatchNorm, activation, residual sum, post-sum activation);
    INT8 with per-output-channel weight scales when quantized."""
    get = dict(zip(_conv_input_names(a), ins))
    return _quantized_conv(a, get) if a.quantized else _float_conv(a, get)


# -- _sg_mkldnn_fully_connected -----------------------------------------------------------------
FC_FLAGS = {"quantized": Bool(False), "enable_float_output": Bool(False),
            "with_eltwise": Bool(False), "channel_wise_quantize": Bool(None), **CALIB_ATTRS}


def _fc_subgraph(a: Attrs, subgraphs: list) -> None:
    sg = _read_subgraph(a, subgraphs, "FullyConnected")
    sg["act"] = sg["acts"][0] if a.with_eltwise and sg["acts"] else None
    a["_sg"] = sg


def _fc_input_names(a: Attrs) -> list[str]:
    sg = _sg(a) if "_sg" in a else {"main": Attrs(no_bias=True)}
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
    fc = _sg(a)["main"]
    out = _fc_shape(fc, s[:2] + ([s[2]] if not fc.no_bias and len(s) > 2 else []))[0]
    return [out] + [(1,), (1,)] * (_fc_outputs(a) == 3)


def _sg_fc_type(a: Attrs, d: list) -> list:
    if not a.quantized:
        return [np.dtype(d[0])]
    if a.enable_float_output:
        return [_F32]
    if not _fc_calibrated(a):
        return [np.dtype(np.int32), _F32, _F32]
    act = _sg(a)["act"]
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
    sg, x = _sg(a), get["data"]
    q.check_qdtype(x, "_sg_mkldnn_fully_connected")
    key = tuple(v for k, v in get.items() if k not in ("data", "min_data", "max_data"))
    key += (x.dtype, q.scalar(get["min_data"]), q.scalar(get["max_data"]))
    prep = _cached(sg, key, lambda: _quantized_fc_weights(a, get, x.dtype))
    x2 = _fc_rows(sg["main"], x).astype(np.float32)
    acc = x2 @ prep["weight"]
    if prep["bias"] is not None:
        acc += prep["bias"]
    act = sg["act"] if a.with_eltwise else None
    if prep["scale"] is not None:
        acc = acc * prep["scale"]
    if act is not None:
        acc = _eltwise(*act, acc)
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
          num_outputs=_fc_outputs, output_names=_OUT3, infer_shape=_sg_fc_shape,
          infer_type=_sg_fc_type, subgraph_attrs=_fc_subgraph, strict=True, layer="dense")
def sg_mkldnn_fully_connected(a: Attrs, *ins: np.ndarray):
    """oneDNN's fused fully-connected layer (+ element-wise activation); INT8 when quantized
    (MXNet's offline int8 weights, or channel-wise scales of float weights)."""
    get = dict(zip(_fc_input_names(a), ins))
    if a.quantized:
        return _quantized_fc(a, get)
    sg = _sg(a)
    y = fully_connected.kernel(sg["main"], get["data"], get["weight"], get.get("bias"))
    return _eltwise(*sg["act"], y) if a.with_eltwise and sg["act"] is not None else y
