"""Shared by MXNet 1.9.1's fused oneDNN nodes (ops/quantized/mkldnn_conv.py, ops/quantized/mkldnn_fc.py): reading
the fused subgraph (MXNet's `_sg_mkldnn_*` attribute parsers), oneDNN's eltwise post-ops, the
per-node cache of prepared weights, and the pieces of their ONNX lowerings."""
from __future__ import annotations

import numpy as np

from ...base import GraphFormatError
from . import int8 as q
from ..nn.activation import sigmoid, softrelu, tanh
from ..attrs import Attrs
from ..lowering import Unsupported

U8_ACTS = ("relu", "bounded_relu", "logistic", "soft_relu")


def act_of(node) -> tuple:
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


def read_subgraph(a: Attrs, subgraphs: list, main: str) -> dict | None:
    if not subgraphs:
        return None                   # not attached yet (a node being built): `_sg` says so
    if len(subgraphs) != 1:
        raise GraphFormatError(f"a fused {main} node needs one subgraph, got {len(subgraphs)}")
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
            sg["acts"].append(act_of(n))
    if "main" not in sg:
        raise GraphFormatError(f"a fused {main} node's subgraph holds no {main}")
    return sg


def sg_of(a: Attrs) -> dict:
    sg = a.get("_sg")
    if sg is None:
        raise GraphFormatError("a fused oneDNN node (_sg_mkldnn_*) has no subgraph")
    return sg


def eltwise(kind: str, alpha: float, y: np.ndarray) -> np.ndarray:
    """oneDNN's eltwise post-op on `y` (float32)."""
    if kind == "relu":
        return np.maximum(y, 0) if not alpha else np.where(y > 0, y, y * np.float32(alpha))
    if kind == "bounded_relu":
        return np.clip(y, 0, np.float32(alpha))
    fns = {"logistic": sigmoid, "tanh": tanh, "soft_relu": softrelu, "square": np.square,
           "sqrt": np.sqrt, "exp": np.exp, "abs": np.abs}
    return fns[kind](y)


def channels(v: np.ndarray, ndim: int) -> np.ndarray:
    return np.asarray(v, np.float32).reshape((-1,) + (1,) * (ndim - 2))


def cached(sg: dict, key: tuple, build):
    """Weights prepared once per set of parameter arrays (and data range): the cache keeps the
    arrays it was built from, so their ids cannot be reused while it holds them."""
    hit = sg["cache"]
    if hit is not None and len(hit[0]) == len(key) and all(
            (x is y) if isinstance(x, np.ndarray) else x == y for x, y in zip(hit[0], key)):
        return hit[1]
    value = build()
    sg["cache"] = (key, value)
    return value


def fixed_input_dtypes(int8_weights: bool, names: list[str]) -> list:
    """Ranges and float parameters are float32; MXNet's offline-quantized FC weights int8."""
    return [q.F32 if "min" in n or "max" in n else
            np.dtype(np.int8) if int8_weights and n in ("weight", "bias") else
            q.F32 if n in ("weight", "bias", "gamma", "beta", "mean", "var") else None
            for n in names]


def int32_output(a: Attrs) -> bool:
    return a.quantized and (a.min_calib_range is None or a.max_calib_range is None)



# -- ONNX ---------------------------------------------------------------------------------------
_ONNX_ACTS = {"logistic": "Sigmoid", "tanh": "Tanh", "soft_relu": "Softplus", "square": None,
              "sqrt": "Sqrt", "exp": "Exp", "abs": "Abs"}


def params_of(ctx, node, ins: list[str], names: list[str]) -> dict:
    """The node's inputs by MXNet name, parameters as their arrays (folded at build time)."""
    get = {}
    for k, name in zip(names, ins):
        v = ctx.value(name)
        get[k] = v if v is not None else name
    for k in ("weight", "bias", "gamma", "beta", "mean", "var"):
        if k in get and isinstance(get[k], str):
            raise Unsupported(f"its {k} is not a parameter")
    return get


def eltwise_onnx(ctx, act: tuple, y: str, levels=None) -> str:
    """oneDNN's eltwise on real values; kinds MXNet applies on output levels (sigmoid…) are
    computed there (`levels`: the output's levels per real unit)."""
    kind, alpha = act
    if kind == "relu":
        return ctx.op("LeakyRelu", [y], alpha=alpha) if alpha else ctx.op("Relu", [y])
    if kind == "bounded_relu":
        return ctx.op("Clip", [y, ctx.scalar(0.0, y), ctx.scalar(alpha, y)])
    scale = None if levels is None else ctx.const(np.float32(levels), hint="levels")
    z = ctx.op("Mul", [y, scale]) if scale else y
    z = ctx.op("Mul", [z, z]) if kind == "square" else ctx.op(_ONNX_ACTS[kind], [z])
    return ctx.op("Div", [z, scale]) if scale else z


def bound_out(ctx, name: str, dtype=np.float32) -> str:
    ctx.bind(name, ctx.out_shape(0), np.dtype(dtype), ctx.out_varying[0])
    return name

